"""Which shell lines run tests."""

from __future__ import annotations

import pytest

from capture.testruns.commands import runner_of, simple_commands


@pytest.mark.parametrize(
    ("line", "runner"),
    [
        ("pytest", "pytest"),
        ("pytest -q tests/test_x.py::test_y", "pytest"),
        ("python -m pytest -q", "pytest"),
        ("python3.12 -m pytest", "pytest"),
        (".venv/bin/python -m pytest -x", "pytest"),
        ("uv run pytest", "pytest"),
        ("poetry run python -m pytest", "pytest"),
        ("cd backend && PYTHONPATH=. pytest -k totals", "pytest"),
        ("timeout 120 pytest", "pytest"),
        ("python -m unittest discover", "unittest"),
        ("npm test", "npm test"),
        ("npm run test:unit -- --watch=false", "npm test"),
        ("npm run e2e", "npm test"),
        ("yarn test", "yarn test"),
        ("pnpm test", "pnpm test"),
        ("pnpm run test", "pnpm test"),
        ("npx vitest run", "vitest"),
        ("npx jest src/", "jest"),
        ("go test ./...", "go test"),
        ("cargo test --workspace", "cargo test"),
        ("cargo +nightly test", "cargo test"),
        ("cargo nextest run", "nextest"),
        ("mvn -q test", "maven"),
        ("./mvnw verify", "maven"),
        ("./gradlew test", "gradle"),
        ("gradle :app:test", "gradle"),
        ("dotnet test", "dotnet test"),
        ("bundle exec rspec spec/models", "rspec"),
        ("vendor/bin/phpunit", "phpunit"),
        ("tox -e py311", "tox"),
        ("nox -s tests", "nox"),
        ("make test", "make test"),
        ("make -j4 check", "make test"),
        ("python -m pytest -q 2>&1 | tail -20", "pytest"),
    ],
)
def test_test_commands(line: str, runner: str) -> None:
    assert runner_of(line) == runner


@pytest.mark.parametrize(
    "line",
    [
        "ls -la",
        "git status",
        "test -f setup.py",
        "[ -d tests ]",
        "cat tests/test_x.py",
        "grep -r pytest .",
        "npm install",
        "npm run build",
        "go build ./...",
        "cargo build",
        "make",
        "make install",
        "echo pytest",
        "pip install pytest",
    ],
)
def test_other_commands(line: str) -> None:
    assert runner_of(line) is None


def test_user_patterns_come_first() -> None:
    assert runner_of("just test", extra=[r"^just test\b"]) == r"^just test\b"
    assert runner_of("just test") is None
    assert runner_of("pytest", extra=[r"^just test\b"]) == "pytest"


def test_simple_commands_are_normalized() -> None:
    assert simple_commands("FOO=1 sudo -E env BAR=2 python3 -m pytest; echo done") == [
        "python -m pytest",
        "echo done",
    ]
