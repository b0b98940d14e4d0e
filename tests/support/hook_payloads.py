"""Hypothesis strategies for hook payloads of each agent: real and documented examples
mutated (fields dropped or given wrong types, huge numbers, nested junk, lone surrogates, NUL
bytes, very long strings, paths outside the workspace, relative and Windows paths), random JSON
and random bytes, with the --event argument, cwd and agent variables a hook may be run with."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.support.hook_support import EXAMPLES, example

__all__ = ["PREFIXES", "HookCall", "hook_call", "seeds"]

#: (payload bytes, --event argument, the hook's cwd, the agent's variables as queued)
HookCall = tuple[bytes, str | None, str, str]

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real" / "claude-code"

#: example file name prefix of each agent's hook payloads (their config files are not payloads)
PREFIXES = {
    "claude-code": "claude_code_",
    "cursor": "cursor_",
    "codex": "codex_",
    "gemini": "gemini_",
    "copilot": "copilot_",
}

#: examples per run of each agent: enough to reach every mutation on every seed a few times


@functools.cache
def seeds(agent: str, ws: Path) -> list[dict[str, Any]]:
    """The agent's example payloads (paths moved into `ws`), and for Claude Code the real ones
    people committed (arrays of payloads, paths left in their authors' folders). Read once:
    mutating copies what it changes."""
    found = [
        example(p.name, ws)
        for p in sorted(EXAMPLES.glob(PREFIXES[agent] + "*.json"))
        if "hooks" not in p.name and "settings" not in p.name
    ]
    if agent == "claude-code":
        for path in sorted(REAL.glob("hooks-*/*.json")):
            found.extend(json.loads(path.read_text(encoding="utf-8")))
    return [s for s in found if isinstance(s, dict)]


def hostile_paths(ws: Path) -> st.SearchStrategy[str]:
    """Paths a payload should not name, or names in forms the readers must not trust."""
    return st.sampled_from(
        [
            "/etc/passwd",
            "/dev/zero",
            "/proc/self/mem",
            str(ws / ".." / ".." / "etc" / "passwd"),
            "../../../etc/shadow",
            "invoicer/totals.py",
            "./invoicer/../invoicer/totals.py",
            "~/notes.py",
            "C:\\Users\\dana\\src\\invoicer\\totals.py",
            "\\\\server\\share\\totals.py",
            "file:///etc/passwd",
            str(ws / "invoicer" / "tot\ud800als.py"),
            str(ws / "invoicer" / "nul\x00.py"),
            str(ws / "invoicer"),
            str(ws / ("d" * 300) / "x.py"),
            "",
        ]
    )


def hostile_values(ws: Path) -> st.SearchStrategy[Any]:
    """Values a field should not hold, and paths a payload should not name."""
    paths = hostile_paths(ws)
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from([0, -1, 2**31, 2**63, -(2**63) - 1, 10**30, -(10**400)]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(["\ud800", "\udfff\ud83d", "a\x00b", "\x00", "😀" * 50, "\u202e"]),
        st.text(max_size=40),
        st.integers(min_value=1_000, max_value=200_000).map(lambda n: "z" * n),
        paths,
    )
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.text(max_size=12), inner, max_size=4),
        ),
        max_leaves=12,
    )


def _spots(value: Any, trail: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value (as the keys and indexes leading there)."""
    yield trail
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _spots(item, (*trail, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _spots(item, (*trail, index))


def _mutate(value: Any, trail: tuple[Any, ...], how: str, junk: Any, key: str) -> Any:
    """`value` with the place at `trail` dropped, replaced by `junk`, or given a junk key."""
    if not trail:
        if how == "add" and isinstance(value, dict):
            return {**value, key: junk}
        return junk if how == "replace" else value
    head, rest = trail[0], trail[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if not rest and how == "drop":
            copy.pop(head, None)
        else:
            copy[head] = _mutate(value[head], rest, how, junk, key)
        return copy
    copy_list = list(value)
    if not rest and how == "drop":
        del copy_list[head]
    else:
        copy_list[head] = _mutate(value[head], rest, how, junk, key)
    return copy_list


#: fields by what they name, for mutations that keep the rest of a payload as it was (the
#: readers get past their first checks and the store sees the value)
PATH_KEYS = frozenset(
    {
        "file_path",
        "filePath",
        "path",
        "cwd",
        "file",
        "fileName",
        "workspace_roots",
        "working_directory",
        "transcript_path",
    }
)
COMMAND_KEYS = frozenset({"command", "toolArgs"})
NUMBER_KEYS = frozenset(
    {
        "exit_code",
        "exitCode",
        "duration",
        "duration_ms",
        "timestamp",
        "start_line_number",
        "end_line_number",
        "start_column",
        "end_column",
        "oldStart",
        "oldLines",
        "newStart",
        "newLines",
        "returnCode",
        "loop_count",
    }
)
COMMANDS = [
    "pytest -q",
    "python -m pytest tests/\ud800.py",
    "npm test -- --run",
    "pytest\x00 -q",
    "pytest " + "-k x " * 5000,
    "cd /etc && pytest",
]
NUMBERS: list[Any] = [2**63, -(2**63) - 1, 10**30, -1, 1e308, float("nan"), "12", [1], True]


@st.composite
def aimed(draw: st.DrawFn, payload: dict[str, Any], ws: Path) -> Any:
    """The payload with one field it names a path, command or number by given a hostile one."""
    spots = [t for t in _spots(payload) if t and isinstance(t[-1], str)]
    aims = [t for t in spots if t[-1] in PATH_KEYS | COMMAND_KEYS | NUMBER_KEYS]
    if not aims:
        return payload
    trail = draw(st.sampled_from(aims))
    if trail[-1] in PATH_KEYS:
        junk: Any = draw(hostile_paths(ws))
    elif trail[-1] in COMMAND_KEYS:
        junk = draw(st.sampled_from(COMMANDS))
    else:
        junk = draw(st.sampled_from(NUMBERS))
    return _mutate(payload, trail, "replace", junk, "")


@st.composite
def mutated(draw: st.DrawFn, agent: str, ws: Path) -> dict[str, Any]:
    payload: Any = draw(st.sampled_from(seeds(agent, ws)))
    if draw(st.booleans()):
        for _ in range(draw(st.integers(min_value=1, max_value=3))):
            payload = draw(aimed(payload, ws))
        return payload
    junk = hostile_values(ws)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        spots = list(_spots(payload))
        trail = draw(st.sampled_from(spots))
        how = draw(st.sampled_from(["drop", "replace", "replace", "add"]))
        payload = _mutate(payload, trail, how, draw(junk), draw(st.text(max_size=16)))
    return payload if isinstance(payload, dict) else {"payload": payload}


def random_json() -> st.SearchStrategy[Any]:
    return st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
        max_leaves=20,
    )


def encode(value: Any, how: str) -> bytes:
    """The payload's bytes: JSON with escapes, raw UTF-8 (a lone surrogate then makes it
    invalid UTF-8, as a broken agent would send), or cut short."""
    if how == "ascii":
        return json.dumps(value).encode("ascii")
    raw = json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return raw[: len(raw) // 2] if how == "cut" else raw


@st.composite
def hook_call(draw: st.DrawFn, agent: str, ws: Path) -> HookCall:
    """One call of `capture hook AGENT` with a fuzzed payload."""
    kind = draw(st.sampled_from(["mutated"] * 6 + ["json", "bytes"]))
    if kind == "mutated":
        raw = encode(
            draw(mutated(agent, ws)), draw(st.sampled_from(["ascii", "ascii", "utf8", "cut"]))
        )
    elif kind == "json":
        raw = encode(draw(random_json()), draw(st.sampled_from(["ascii", "utf8"])))
    else:
        raw = draw(st.binary(max_size=200))
    # `capture hook` ignores an --event UTF-8 cannot hold; its cwd and the agent's variables
    # can hold anything a file name can (undecodable bytes come as surrogate escapes)
    event = draw(st.sampled_from([None, None, "PostToolUse", "afterFileEdit", "preToolUse", ""]))
    cwd = draw(st.sampled_from([str(ws), str(ws / "invoicer"), "/", str(ws / "\udcff"), "C:\\x"]))
    env = draw(
        st.sampled_from(
            ["", f"CLAUDE_PROJECT_DIR={ws}", "CURSOR_PROJECT_DIR=/etc", "GEMINI_PROJECT_DIR=\udcff"]
        )
    )
    return raw, event, cwd, env
