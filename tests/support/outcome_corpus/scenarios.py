"""The labelled outcome corpus: what agents, users, formatters and git do to a file, and the
outcome each agent edit must end with.

Each label is what a person watching would say happened, written down before the code judged
it. A set of labels means either is right (a wrap of the agent's text keeps all of it: `kept`
or `edited`, never `undone`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from tests.support.outcome_corpus.agents import Turn
from tests.support.outcome_corpus.editor import in_editor
from tests.support.outcome_corpus.world import World

AGENTS = ("claude-code", "cursor", "codex", "gemini", "copilot")

APP = (
    "import math\n"
    "\n"
    "\n"
    "def area(r):\n"
    "    return 3.14 * r * r\n"
    "\n"
    "\n"
    "def total(items):\n"
    "    return 0\n"
    "\n"
    "\n"
    "def main():\n"
    "    print(total([1, 2]))\n"
)
OLD = "    return 0\n"
NEW = "    return sum(items)\n"
Label = str | frozenset[str]


@dataclass(frozen=True)
class Scenario:
    name: str
    play: Callable[[World], None]
    outcomes: tuple[tuple[str, Label], ...]
    runs: tuple[tuple[int, str], ...] = ()
    files: dict[str, str | bytes] = field(default_factory=lambda: {"app.py": APP})


SCENARIOS: list[Scenario] = []


def scenario(
    name: str,
    outcomes: tuple[tuple[str, Label], ...],
    *,
    runs: tuple[tuple[int, str], ...] = (),
    files: dict[str, str | bytes] | None = None,
) -> Callable[[Callable[[World], None]], Callable[[World], None]]:
    def register(play: Callable[[World], None]) -> Callable[[World], None]:
        SCENARIOS.append(Scenario(name, play, outcomes, runs, files or {"app.py": APP}))
        return play

    return register


def agent_edit(world: World, agent: str, old: str = OLD, new: str = NEW) -> Turn:
    turn = Turn(world, agent).prompt()
    turn.edit("app.py", old, new)
    return turn


# ---------------------------------------------------------------------------- per agent

for _agent in AGENTS:

    @scenario(f"{_agent}: edit left alone", (("app.py", "kept"),))
    def _kept(world: World, agent: str = _agent) -> None:
        agent_edit(world, agent).stop()

    @scenario(f"{_agent}: a formatter rewrites another function right after", (("app.py", "kept"),))
    def _formatter_elsewhere(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        world.advance(0.2)
        world.write("app.py", world.read("app.py").replace("3.14 * r * r", "math.pi * r**2"))
        turn.stop()

    @scenario(
        f"{_agent}: a formatter respaces the agent's line right after",
        (("app.py", "kept"),),
    )
    def _formatter_on_line(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent, new="    return sum( items )\n")
        world.advance(0.2)
        world.write("app.py", world.read("app.py").replace("sum( items )", "sum(items)"))
        turn.stop()

    @scenario(f"{_agent}: git checkout of the file 1 s later", (("app.py", "undone"),))
    def _checkout_soon(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        world.advance(1.0)
        world.git("checkout", "--", "app.py")
        turn.stop()

    @scenario(f"{_agent}: git checkout of the file 5 s later", (("app.py", "undone"),))
    def _checkout_later(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        turn.stop()
        world.advance(5.0)
        world.git("checkout", "--", "app.py")

    @scenario(f"{_agent}: the user rewrites the agent's line", (("app.py", "edited"),))
    def _rewritten(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        turn.stop()
        world.advance(3.0)
        text = world.read("app.py").replace(
            NEW, "    return functools.reduce(operator.add, items, 0)\n"
        )
        world.write("app.py", text)

    @scenario(f"{_agent}: the user deletes the agent's line", (("app.py", "undone"),))
    def _deleted_line(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        turn.stop()
        world.advance(3.0)
        world.write("app.py", world.read("app.py").replace(NEW, ""))

    @scenario(
        f"{_agent}: the user wraps the agent's expression",
        (("app.py", frozenset({"kept", "edited"})),),
    )
    def _wrapped(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        turn.stop()
        world.advance(3.0)
        world.write("app.py", world.read("app.py").replace("sum(items)", "int(sum(items))"))

    @scenario(
        f"{_agent}: a second edit of the file half a second later",
        (("app.py", "kept"), ("app.py", "kept")),
    )
    def _two_edits(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        world.advance(0.5)
        turn.edit("app.py", "    return 3.14 * r * r\n", "    return math.pi * r * r\n")
        turn.stop()

    @scenario(f"{_agent}: the file is deleted later", (("app.py", "lost"),))
    def _file_deleted(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        turn.stop()
        world.advance(3.0)
        world.delete("app.py")

    @scenario(f"{_agent}: the user adds code elsewhere", (("app.py", "kept"),))
    def _edit_elsewhere(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        turn.stop()
        world.advance(3.0)
        world.write("app.py", world.read("app.py") + "\n\ndef extra():\n    return 1\n")


for _agent in ("claude-code", "cursor"):

    @scenario(
        f"{_agent}: the agent edits its own line again",
        (("app.py", "edited"), ("app.py", "kept")),
    )
    def _agent_again(world: World, agent: str = _agent) -> None:
        turn = agent_edit(world, agent)
        world.advance(0.5)
        turn.edit("app.py", "sum(items)", "sum(items) or sum([0, 0, 0, 0, 0])")
        turn.stop()


for _agent in ("claude-code", "cursor", "gemini"):

    @scenario(
        f"{_agent}: an edit of a CRLF file",
        (("app.py", "kept"),),
        files={"app.py": APP.replace("\n", "\r\n")},
    )
    def _crlf(world: World, agent: str = _agent) -> None:
        turn = Turn(world, agent).prompt()
        turn.edit("app.py", OLD.replace("\n", "\r\n"), NEW.replace("\n", "\r\n"))
        turn.stop()


for _agent in ("cursor", "copilot"):

    @scenario(
        f"{_agent}: an edit of a UTF-16 file",
        (("notes.txt", "lost"),),
        files={"app.py": APP, "notes.txt": "total = 0\n".encode("utf-16")},
    )
    def _utf16(world: World, agent: str = _agent) -> None:
        turn = Turn(world, agent).prompt()
        path = world.path("notes.txt")
        path.write_bytes("total = 1\n".encode("utf-16"))
        if agent == "cursor":
            turn._send(
                {
                    "hook_event_name": "afterFileEdit",
                    "file_path": str(path),
                    "edits": [{"old_string": "total = 0", "new_string": "total = 1"}],
                }
            )
        else:
            args = json.dumps({"path": "notes.txt", "old_str": "total = 0", "new_str": "total = 1"})
            turn._send(
                {"toolName": "edit", "toolArgs": args, "toolResult": {"resultType": "success"}},
                event="postToolUse",
            )
        turn.stop()


_BIG = "x = 0\n" * (1_500_000)


@scenario(
    "cursor: an edit of a file over the tracking limit",
    (("big.py", "lost"),),
    files={"app.py": APP, "big.py": "limit = 1\n" + _BIG},
)
def _too_large(world: World) -> None:
    turn = Turn(world, "cursor").prompt()
    turn.edit("big.py", "limit = 1\n", "limit = 2\n")
    turn.stop()


# ---------------------------------------------------------------------------- whole files


@scenario(
    "claude-code: a new file, then an edit of it 0.3 s later",
    (("new.py", "kept"), ("new.py", "kept")),
)
def _write_then_edit(world: World) -> None:
    turn = Turn(world, "claude-code").prompt()
    turn.write(
        "new.py", "def f():\n    return 1\n\n\ndef g():\n    return 2\n\n\ndef h():\n    return 3\n"
    )
    world.advance(0.3)
    turn.edit("new.py", "    return 3\n", "    return 4\n")
    turn.stop()


@scenario("claude-code: a new file the user deletes", (("new.py", "undone"),))
def _created_deleted(world: World) -> None:
    turn = Turn(world, "claude-code").prompt()
    turn.write("new.py", "def f():\n    return 1\n")
    turn.stop()
    world.advance(3.0)
    world.delete("new.py")


@scenario("claude-code: a new file deleted at once", (("new.py", "undone"),))
def _created_deleted_soon(world: World) -> None:
    turn = Turn(world, "claude-code").prompt()
    turn.write("new.py", "def f():\n    return 1\n")
    world.advance(0.5)
    world.delete("new.py")
    turn.stop()


@scenario(
    "claude-code: the whole file rewritten, then restored by git",
    (("app.py", "undone"),),
)
def _write_reverted(world: World) -> None:
    turn = Turn(world, "claude-code").prompt()
    turn.write("app.py", APP.replace(OLD, NEW).replace("3.14", "math.pi"))
    turn.stop()
    world.advance(4.0)
    world.git("checkout", "--", "app.py")


# ---------------------------------------------------------------------------- typed in an editor

#: The agent's line as Claude Code's Edit tool sends it: no line end, so its region ends where
#: the line does.
OLD_LINE, NEW_LINE = OLD.rstrip("\n"), NEW.rstrip("\n")


@scenario(
    "claude-code: the user selects the agent's line and types a new one key by key",
    (("app.py", "edited"),),
)
def _typed_over(world: World) -> None:
    turn = agent_edit(world, "claude-code", OLD_LINE, NEW_LINE)
    turn.stop()
    world.advance(3.0)
    with in_editor(world, "app.py") as buffer:
        end = buffer.text.index(NEW_LINE) + len(NEW_LINE)
        start = end - len(NEW_LINE.lstrip())  # Shift+Home from the line's end
        buffer.select_and_type(start, end, "return functools.reduce(operator.add, items, 0)")


@scenario(
    "claude-code: the user types a new line right after the agent's text later",
    (("app.py", "kept"),),
)
def _typed_after(world: World) -> None:
    turn = agent_edit(world, "claude-code", OLD_LINE, NEW_LINE)
    turn.stop()
    world.advance(20.0)
    with in_editor(world, "app.py") as buffer:
        end = buffer.text.index(NEW_LINE) + len(NEW_LINE)
        buffer.type_at(end, "\n    # the sum of no items is 0")


# ---------------------------------------------------------------------------- deletions

DUPLICATES = "import os\nimport os\nimport sys\n\n\nprint(os.sep, sys.argv)\n"


@scenario(
    "codex: deletes a duplicate import, nothing else happens",
    (("dup.py", "kept"),),
    files={"app.py": APP, "dup.py": DUPLICATES},
)
def _duplicate_deleted(world: World) -> None:
    turn = Turn(world, "codex").prompt()
    turn.edit("dup.py", "import os\nimport os\nimport sys\n", "import os\nimport sys\n")
    turn.stop()


DEBUG = "def run():\n    prepare()\n    print('debug')\n    execute()\n"


@scenario(
    "codex: deletes a debug line the user types back",
    (("run.py", "undone"),),
    files={"app.py": APP, "run.py": DEBUG},
)
def _deletion_typed_back(world: World) -> None:
    turn = Turn(world, "codex").prompt()
    turn.edit("run.py", "    print('debug')\n", "")
    turn.stop()
    world.advance(3.0)
    world.write("run.py", DEBUG)


@scenario(
    "codex: deletes a debug line, kept",
    (("run.py", "kept"),),
    files={"app.py": APP, "run.py": DEBUG},
)
def _deletion_kept(world: World) -> None:
    turn = Turn(world, "codex").prompt()
    turn.edit("run.py", "    print('debug')\n", "")
    turn.stop()


# ---------------------------------------------------------------------------- decisions


@scenario("claude-code: an edit denied at the prompt", (("app.py", "rejected"),))
def _denied(world: World) -> None:
    turn = Turn(world, "claude-code").prompt()
    turn.denied_edit("app.py", OLD, NEW)
    turn.stop()


@scenario(
    "claude-code: the file is gone when the post-tool-use hook fires",
    (("app.py", "lost"),),
)
def _gone_before_hook(world: World) -> None:
    turn = Turn(world, "claude-code").prompt()
    turn.edit("app.py", OLD, NEW, then=lambda: world.delete("app.py"))
    turn.stop()


# ---------------------------------------------------------------------------- placement

SETTINGS = "limit = 5\nretries = 3\ntimeout = 10\n"


for _agent in ("claude-code", "gemini", "codex"):

    @scenario(
        f"{_agent}: a short new text that occurs earlier in the file",
        (("settings.py", "kept"),),
        files={"app.py": APP, "settings.py": SETTINGS},
    )
    def _short(world: World, agent: str = _agent) -> None:
        turn = Turn(world, agent).prompt()
        turn.edit("settings.py", "retries = 3\n", "retries = 5\n")
        turn.stop()
        world.advance(3.0)
        world.write("settings.py", world.read("settings.py").replace("limit = 5", "limit = 6"))


@scenario(
    "cursor: a short new text in a file seen before",
    (("settings.py", "kept"), ("settings.py", "kept")),
    files={"app.py": APP, "settings.py": SETTINGS},
)
def _short_seen(world: World) -> None:
    turn = Turn(world, "cursor").prompt()
    turn.edit("settings.py", "timeout = 10\n", "timeout = 30\n")
    world.advance(1.0)
    turn.edit("settings.py", "= 3\n", "= 5\n")
    turn.stop()
    world.advance(3.0)
    world.write("settings.py", world.read("settings.py").replace("limit = 5", "limit = 6"))


# ---------------------------------------------------------------------------- several hands


@scenario(
    "claude-code and cursor edit one file within a second",
    (("app.py", "kept"), ("app.py", "kept")),
)
def _interleaved(world: World) -> None:
    claude = Turn(world, "claude-code").prompt()
    cursor = Turn(world, "cursor").prompt()
    claude.edit("app.py", "    return 3.14 * r * r\n", "    return math.pi * r * r\n")
    world.advance(0.3)
    cursor.edit("app.py", OLD, NEW)
    claude.stop()
    cursor.stop()


@scenario(
    "claude-code and codex edit two files, interleaved",
    (("app.py", "kept"), ("lib.py", "kept"), ("app.py", "undone")),
    files={"app.py": APP, "lib.py": "def lib():\n    return None\n"},
)
def _two_agents_two_files(world: World) -> None:
    claude = Turn(world, "claude-code").prompt()
    codex = Turn(world, "codex").prompt()
    claude.edit("app.py", OLD, NEW)
    codex.edit("lib.py", "    return None\n", "    return 42\n")
    claude.edit("app.py", "    print(total([1, 2]))\n", "    print(total([1, 2, 3]))\n")
    claude.stop()
    codex.stop()
    world.advance(2.5)
    world.write("app.py", world.read("app.py").replace("[1, 2, 3]", "[1, 2]"))


@scenario(
    "claude-code: two edits, the user restores the first line by hand",
    (("app.py", "undone"), ("app.py", "kept")),
)
def _first_restored(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    world.advance(0.4)
    turn.edit("app.py", "    return 3.14 * r * r\n", "    return math.pi * r * r\n")
    turn.stop()
    world.advance(4.0)
    world.write("app.py", world.read("app.py").replace(NEW, OLD))


@scenario(
    "claude-code: two edits, git checkout of the file 1 s later",
    (("app.py", "undone"), ("app.py", "undone")),
)
def _both_checked_out(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    world.advance(0.4)
    turn.edit("app.py", "    return 3.14 * r * r\n", "    return math.pi * r * r\n")
    world.advance(1.0)
    world.git("checkout", "--", "app.py")
    turn.stop()


# ---------------------------------------------------------------------------- test runs


@scenario(
    "claude-code: an edit, then pytest through the shell tool",
    (("app.py", "kept"),),
    runs=((1, "hook"),),
)
def _shell_run(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    turn.bash("python -m pytest -q", "..                                [100%]\n2 passed in 0.08s")
    turn.stop()


# ------------------------------------------------- test runs seen by the hook and another source

_PYTEST_OK = "..                                [100%]\n2 passed in 0.08s"


def _other_run(
    world: World, source: str, command: str, *, before: float, junit: bool = False
) -> str:
    """A run recorded as the plugin, the wrapper or the JUnit watcher records one, in-process
    at the world's clock: it began `before` s ago and took 1 s."""
    from capture.model import CaseResult, TestRunInput
    from capture.recording.recorder import record_test_run

    cases = [CaseResult("tests/test_app.py::test_area", "passed", "tests/test_app.py", None, 0.1)]
    cases.append(CaseResult("tests/test_app.py::test_name", "passed", "tests/test_app.py"))
    run = TestRunInput(
        command=command,
        source=source,
        started_at=world.now - before,
        workspace=str(world.root),
        cwd=str(world.root),
        duration_s=1.0,
        exit_code=None if junit else 0,
        passed=2,
        failed=0,
        errors=0,
        skipped=0,
        runner="pytest",
        results_from="junit" if junit else "plugin",
        cases=cases,
    )
    return record_test_run(world.store, run, now=world.now, late_seconds=world.config.late.seconds)


@scenario(
    "claude-code: pytest through the shell tool, the pytest plugin recorded it first",
    (("app.py", "kept"),),
    runs=((1, "pytest-plugin,hook"),),
)
def _plugin_then_shell(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    world.advance(0.5)
    _other_run(world, "pytest-plugin", "pytest -q", before=1.2)
    turn.bash("python -m pytest -q", _PYTEST_OK)
    turn.stop()


@scenario(
    "claude-code: capture run pytest through the shell tool, the wrapper recorded it first",
    (("app.py", "kept"),),
    runs=((1, "wrapper,hook"),),
)
def _wrapper_then_shell(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    world.advance(0.5)
    _other_run(world, "wrapper", "pytest -q", before=1.2)
    turn.bash("capture run -- pytest -q", _PYTEST_OK)
    turn.stop()


@scenario(
    "claude-code: pytest --junitxml through the shell tool, the report recorded first",
    (("app.py", "kept"),),
    runs=((1, "junit-file,hook"),),
)
def _junit_then_shell(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    world.advance(0.5)
    _other_run(world, "junit-file", "junit.xml", before=1.2, junit=True)
    turn.bash("pytest -q --junitxml=junit.xml", _PYTEST_OK)
    turn.stop()


@scenario(
    "claude-code: pytest --junitxml through the shell tool, the report picked up a second later",
    (("app.py", "kept"),),
    runs=((1, "hook,junit-file"),),
)
def _shell_then_junit(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    world.advance(0.5)
    turn.bash("pytest -q --junitxml=junit.xml", _PYTEST_OK)
    world.advance(1.0)
    _other_run(world, "junit-file", "junit.xml", before=2.2, junit=True)
    turn.stop()


@scenario(
    "claude-code: two pytest runs in quick succession, each seen by the plugin and the hook",
    (("app.py", "kept"),),
    runs=((1, "pytest-plugin,hook"), (1, "pytest-plugin,hook")),
)
def _two_plugin_runs(world: World) -> None:
    turn = agent_edit(world, "claude-code")
    for _ in range(2):
        world.advance(0.5)
        _other_run(world, "pytest-plugin", "pytest -q", before=1.2)
        turn.bash("python -m pytest -q", _PYTEST_OK, duration_ms=1500)
    turn.stop()
