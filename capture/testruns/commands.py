"""Which shell commands run tests. An agent's shell tool call that matches becomes a test run.

The list below is documented in docs/agents.md ("Test commands"). Add your own in config.toml:

    [capture]
    test_commands = ["^just test\\b", "^bin/check\\b"]

Each entry is a regular expression matched (`re.search`) against every simple command of the
shell line after normalization: the line is split at `&&`, `||`, `;`, `|` and newlines; leading
`VAR=value` assignments and wrappers (`sudo`, `env`, `time`, `timeout N`, `nice`, `uv run`,
`poetry run`, `pipenv run`, `pdm run`, `hatch run`, `rye run`, `npx`, `bunx`, `pnpm exec`,
`bundle exec`, `xvfb-run`, `dotenv --`) are dropped; a leading path to an interpreter
(`.venv/bin/python3.12`) becomes its bare name (`python`). A command that only asks the runner
for its version, help or list of tests (`npx vitest --version`, `pytest --collect-only`) runs
none and is not a test run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

__all__ = ["TEST_COMMANDS", "matches", "simple_commands", "runner_of"]

#: (runner name, pattern over one normalized simple command)
TEST_COMMANDS: tuple[tuple[str, str], ...] = (
    ("pytest", r"^(?:pytest|py\.test)\b"),
    ("pytest", r"^python -m pytest\b"),
    ("unittest", r"^python -m unittest\b"),
    # a monorepo's package picked first: `npm -w web test`, `pnpm --filter web test`, `pnpm -r
    # test`, `yarn workspace web test`
    (
        "npm test",
        r"^npm (?:(?:-w|--workspace|--prefix)(?:=|\s)\S+\s|(?:-ws|--workspaces|--if-present|-s"
        r"|--silent)\s)*(?:test|t|tst|run(?:-script)? (?:test|e2e|spec)[\w:.-]*)(?:\s|$)",
    ),
    (
        "yarn test",
        r"^yarn (?:workspace \S+ |workspaces foreach (?:-\S+ )*)?(?:run )?"
        r"(?:test|e2e|spec)[\w:.-]*(?:\s|$)",
    ),
    (
        "pnpm test",
        r"^pnpm (?:(?:--filter|-F|-C|--dir)(?:=|\s)\S+\s|(?:-r|--recursive|-s|--silent"
        r"|--if-present)\s)*(?:run )?(?:test|e2e|spec)[\w:.-]*(?:\s|$)",
    ),
    ("bun test", r"^bun (?:run )?(?:test|e2e|spec)[\w:.-]*(?:\s|$)"),
    ("vitest", r"^vitest\b"),
    ("jest", r"^jest\b"),
    ("mocha", r"^mocha\b"),
    ("go test", r"^go test\b"),
    ("cargo test", r"^cargo (?:\+\S+ )?test\b"),
    ("nextest", r"^cargo (?:\+\S+ )?nextest\b"),
    ("maven", r"^(?:mvn|mvnw|\./mvnw)\b.*\s(?:test|verify)\b"),
    ("gradle", r"^(?:gradle|gradlew|\./gradlew)\b.*\s(?::?\S*:)?(?:test|check)\b"),
    ("dotnet test", r"^dotnet test\b"),
    ("rspec", r"^(?:rspec|bin/rspec)\b"),
    ("rake", r"^rake (?:test|spec)\b"),
    ("phpunit", r"^(?:phpunit|vendor/bin/phpunit|\./vendor/bin/phpunit)\b"),
    ("tox", r"^tox\b"),
    ("nox", r"^nox\b"),
    ("make test", r"^make\b(?:\s+-\S+)*(?:\s+\S+=\S+)*\s+(?:test|tests|check)\b"),
    ("mix test", r"^mix (?:test|coveralls)\b"),
    ("deno test", r"^deno test\b"),
    ("node --test", r"^node\b(?:\s+-\S+)*\s+--test\b"),
    ("swift test", r"^swift test\b"),
    ("xcodebuild test", r"^xcodebuild\b.*\s(?:test|test-without-building)\b"),
    ("ctest", r"^ctest\b"),
    ("ctest", r"^cmake --build\b.*\s--target\s+(?:test|check)\b"),
    ("sbt", r"^(?:sbt|sbtn|\./sbt)\b.*\s[\"']?(?:[\w-]+/)?(?:test|testOnly|testQuick|it:test)\b"),
    ("flutter test", r"^flutter test\b"),
    ("dart test", r"^dart (?:run )?test\b"),
    ("zig test", r"^zig (?:build\b.*\s)?test\b"),
    ("bazel test", r"^(?:bazel|bazelisk)\b(?:\s+--\S+)*\s+(?:test|coverage)\b"),
    ("gotestsum", r"^gotestsum\b"),
    ("playwright", r"^playwright test\b"),
    ("cypress", r"^cypress run\b"),
    ("pest", r"^(?:pest|vendor/bin/pest|\./vendor/bin/pest)\b"),
    ("artisan test", r"^php artisan test\b"),
    ("rails test", r"^(?:rails|bin/rails) test\b"),
    ("cabal test", r"^(?:cabal|stack) test\b"),
    ("dune test", r"^dune (?:test|runtest)\b"),
    ("gleam test", r"^gleam test\b"),
    ("rebar3", r"^rebar3 (?:eunit|ct)\b"),
    ("lein test", r"^lein test\b"),
    ("prove", r"^prove\b"),
    ("busted", r"^busted\b"),
    ("hatch test", r"^hatch test\b"),
)

#: Options that make a runner print its version, its help or its list of tests and exit
#: without running any: `npx vitest --version` is not a test run.
_NOT_A_RUN = frozenset(
    {"--version", "--help", "-h", "--usage", "--collect-only", "--co", "--listTests"}
    | {"--list-tests", "--list"}
)
#: ... and the short version flags of the runners whose `-v` is not "verbose".
_VERSION_FLAG = {"vitest": "-v", "jest": "-v", "pytest": "-V", "deno test": "-V"}

_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*$")
_INTERPRETER = re.compile(r"^(?:\S*/)?(python|node|ruby|php)(?:\d+(?:\.\d+)*)?$")
_WRAPPERS_1 = {"sudo", "env", "time", "nice", "command", "exec", "npx", "bunx", "xvfb-run"}
_WRAPPERS_2 = {
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("rye", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "exec"),
    ("yarn", "dlx"),
    ("bundle", "exec"),
    ("dotenv", "--"),
}


def _normalize(tokens: list[str]) -> list[str]:
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _ASSIGNMENT.match(token):
            i += 1
        elif token in _WRAPPERS_1:
            i += 1
            while i < len(tokens) and tokens[i].startswith("-"):  # wrapper options (env -i)
                i += 1
        elif token == "timeout":
            i += 1
            while i < len(tokens) and (tokens[i].startswith("-") or tokens[i][:1].isdigit()):
                i += 1
        elif i + 1 < len(tokens) and (token, tokens[i + 1]) in _WRAPPERS_2:
            i += 2
        else:
            break
    rest = tokens[i:]
    if rest:
        match = _INTERPRETER.match(rest[0])
        if match:
            rest = [match.group(1), *rest[1:]]
    return rest


def simple_commands(line: str) -> list[str]:
    """The simple commands of a shell line, normalized (see the module docstring)."""
    out = []
    for part in _SEPARATORS.split(line):
        tokens = part.replace("(", " ").replace(")", " ").split()
        normalized = _normalize(tokens)
        if normalized:
            out.append(" ".join(normalized))
    return out


def matches(line: str, patterns: Iterable[tuple[str, str]]) -> str | None:
    """The runner name of the first pattern matching one of the line's simple commands."""
    compiled = _compiled(tuple(patterns))
    for command in simple_commands(line):
        for name, pattern in compiled:
            if pattern.search(command):
                if _runs_tests(name, command):
                    return name
                break  # a version or help query: this command runs nothing
    return None


def _runs_tests(name: str, command: str) -> bool:
    tokens = command.split()[1:]
    if "--" in tokens:  # what follows is the tests' own arguments (cargo test -- --list too)
        head, tail = tokens[: tokens.index("--")], tokens[tokens.index("--") + 1 :]
        tokens = head + [t for t in tail if t == "--list"]
    if any(t in _NOT_A_RUN for t in tokens):
        return False
    return _VERSION_FLAG.get(name) not in tokens


@lru_cache(maxsize=64)
def _compiled(patterns: tuple[tuple[str, str], ...]) -> list[tuple[str, re.Pattern[str]]]:
    # a backfill asks once per command of thousands of transcripts, with the same patterns
    return [(name, re.compile(pattern)) for name, pattern in patterns]


def runner_of(line: str, extra: Sequence[str] = ()) -> str | None:
    """The runner a shell line invokes (`pytest`, `go test`, ...), or None when it runs no
    tests. `extra` are the user's own patterns from config.toml; they are tried first."""
    patterns = [(pattern, pattern) for pattern in extra]
    patterns.extend(TEST_COMMANDS)
    return matches(line, patterns)
