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
        ("pnpm --filter web test", "pnpm test"),  # a monorepo's package first
        ("pnpm -F=web run test:unit", "pnpm test"),
        ("pnpm -r test", "pnpm test"),
        ("npm -w web test", "npm test"),
        ("npm --workspace=web run test", "npm test"),
        ("yarn workspace web test", "yarn test"),
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
        ("mix test", "mix test"),
        ("MIX_ENV=test mix test test/calc_test.exs:12", "mix test"),
        ("cd apps/web && mix test --failed", "mix test"),
        ("bun test", "bun test"),
        ("bun test --watch src", "bun test"),
        ("deno test -A", "deno test"),
        ("node --test", "node --test"),
        ("node --experimental-strip-types --test src/", "node --test"),
        ("swift test --parallel", "swift test"),
        ("xcodebuild -scheme App -destination 'platform=iOS' test", "xcodebuild test"),
        ("ctest --test-dir build --output-on-failure", "ctest"),
        ("cmake --build build --target test", "ctest"),
        ("sbt test", "sbt"),
        ("sbt 'testOnly calc.CalcSpec'", "sbt"),
        ("sbt core/test", "sbt"),
        ("flutter test test/widget_test.dart", "flutter test"),
        ("dart test", "dart test"),
        ("dart run test", "dart test"),
        ("zig build test", "zig test"),
        ("zig build test --summary all", "zig test"),
        ("zig test src/calc.zig", "zig test"),
        ("bazel test //...", "bazel test"),
        ("bazelisk test //pkg:calc_test", "bazel test"),
        ("bazel --output_base=/tmp/b test //...", "bazel test"),
        ("gotestsum -- ./...", "gotestsum"),
        ("npx playwright test", "playwright"),
        ("php artisan test", "artisan test"),
        ("./vendor/bin/pest", "pest"),
        ("bin/rails test", "rails test"),
        ("cabal test", "cabal test"),
        ("dune runtest", "dune test"),
        ("rebar3 eunit", "rebar3"),
        ("pytest --version && pytest -q", "pytest"),
        ("cargo test -- --nocapture", "cargo test"),
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
        "pnpm --filter web build",
        "npm -w web run build",
        "yarn workspace web build",
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


@pytest.mark.parametrize(
    "line",
    [
        "npx vitest --version",
        "vitest -v",
        "npx jest --version",
        "jest --help",
        "pytest --version",
        "pytest -V",
        "python -m pytest --collect-only -q",
        "pytest --co",
        "jest --listTests",
        "go test -h",
        "cargo test --help",
        "cargo test -- --list",
        "dotnet test --list-tests",
        "mix test --help",
        "deno test --help",
        "bun test --help",
        "rspec --version",
        "phpunit --version",
    ],
)
def test_version_and_help_queries_run_no_tests(line: str) -> None:
    assert runner_of(line) is None


def test_verbose_flags_still_run_tests() -> None:
    assert runner_of("go test -v ./...") == "go test"
    assert runner_of("pytest -v") == "pytest"
    assert runner_of("npx vitest run --reporter verbose") == "vitest"
