"""Fuzzed hook payloads for each agent, through the queue as `capture hook` fills it.

Each generated payload starts from a real or documented example of that agent's hooks and is
mutated (fields dropped or given wrong types, huge numbers, nested junk, lone surrogates, NUL
bytes, very long strings, paths outside the workspace, relative and Windows paths), or is
random JSON or random bytes. It is queued as the hook queues it (`inbox.enqueue`, with the
snapshots the hook takes) and applied by `drain`, in this process. Whatever it holds: nothing
escapes the drain, the payload is recorded, dropped with a logged line or set aside with its
error, a valid payload queued after it is recorded, the database passes `integrity_check`, and
the episode JSON and the report are built and can be written out as UTF-8.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from capture.cli.hook_cmd import _snapshots, hook_now
from capture.config import Config, load_config
from capture.hooks import inbox
from capture.hooks.payloads import MAX_PAYLOAD_BYTES
from capture.hooks.queue import drain, set_aside
from capture.store.database import Store
from tests.support.hook_payloads import PREFIXES, HookCall, hook_call
from tests.support.hook_support import example, make_workspace

#: examples per run of each agent: enough to reach every mutation on every seed a few times
EXAMPLES_PER_AGENT = 150

FUZZ = settings(
    max_examples=EXAMPLES_PER_AGENT,
    deadline=None,
    derandomize=True,  # the same examples on every run: a CI failure is a local failure
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


class Bench:
    """One store in a temporary CAPTURE_HOME and a workspace, shared by the examples of one
    agent (a fresh store per example would make the run minutes long; one for all agents
    makes the later ones slow, as its proposals pile up)."""

    def __init__(self, home: Path, ws: Path) -> None:
        self.home, self.ws = home, ws
        self.config: Config = load_config()
        self.store = Store.open(self.config.paths.db)
        self.ids = itertools.count()

    def log(self) -> list[str]:
        path = self.config.paths.log_dir / "hooks.log"
        if not path.exists():
            return []
        return path.read_text(encoding="utf-8").splitlines()

    def count(self, sql: str, *params: object) -> int:
        return int(self.store.conn.execute(sql, params).fetchone()[0])


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bench]:
    # the hook's slow way reads its store and the agents' variables from the environment
    monkeypatch.setenv("CAPTURE_HOME", str(tmp_path / "capture-home"))
    monkeypatch.setenv("CAPTURE_WINDOWS", "300ms,600ms,1s")
    for name in inbox.INBOX_ENV:
        monkeypatch.delenv(name, raising=False)
    bench = Bench(tmp_path / "capture-home", make_workspace(tmp_path))
    try:
        yield bench
    finally:
        bench.store.close()


def queue(
    bench: Bench, agent: str, raw: bytes, event: str | None, cwd: str, env: str
) -> int | None:
    """Queue one payload as `capture hook` does (its snapshots of the files named included),
    and return its queue row; or, for one the queue does not take, do what the hook then does
    (read and record it in this process) and return None."""
    if 0 < len(raw) <= MAX_PAYLOAD_BYTES and raw.strip():
        snapshots = _snapshots(raw, cwd, event)
        if inbox.enqueue(
            str(bench.config.paths.db), agent, event, raw, cwd, env, snapshots=snapshots
        ):
            return bench.count("SELECT max(id) FROM hook_inbox")
    assert hook_now(agent, event, raw, len(raw)) == 0
    return None


def valid_edit(bench: Bench) -> tuple[bytes, str]:
    """A Claude Code edit no fuzzed payload can have recorded already, and its tool_use_id."""
    payload = example("claude_code_posttooluse_edit.json", bench.ws)
    tool_use_id = f"toolu_after_{next(bench.ids)}"
    payload["tool_use_id"] = tool_use_id
    return json.dumps(payload).encode(), tool_use_id


def check_reads(bench: Bench) -> None:
    """What `capture episodes --json` and `capture report --json` build, written as UTF-8."""
    from capture.report.assemble import make_report
    from capture.report.json_out import report_json
    from capture.report.queries import Scope
    from capture.store.episodes import load_episodes

    episodes = load_episodes(bench.store, limit=20)
    json.dumps(episodes, ensure_ascii=False).encode("utf-8")
    now = time.time()
    report = make_report(bench.store.conn, Scope(now - 86400, now + 60), "agent", workspace=None)
    json.dumps(report_json(report), ensure_ascii=False).encode("utf-8")


def apply_one(bench: Bench, agent: str, call: HookCall) -> None:
    raw, event, cwd, env = call
    events = bench.count("SELECT count(*) FROM events")
    lines = len(bench.log())
    row = queue(bench, agent, raw, event, cwd, env)
    follow, tool_use_id = valid_edit(bench)
    assert queue(bench, "claude-code", follow, None, str(bench.ws), "") is not None

    drain(bench.store, bench.config)  # nothing may escape it

    left = bench.store.conn.execute(
        "SELECT set_aside_at, error FROM hook_inbox WHERE id = ?", (row or 0,)
    ).fetchone()
    if row is not None and left is not None:
        assert left["set_aside_at"] is not None and left["error"], "left queued, not applied"
        assert row in [r["id"] for r in set_aside(bench.store)]  # what `capture doctor` lists
        # cleared so the next example starts clean
        bench.store.conn.execute("DELETE FROM hook_inbox WHERE id = ?", (row,))
    else:
        recorded = bench.count("SELECT count(*) FROM events") > events
        logged = len(bench.log()) > lines
        assert recorded or logged, "a payload vanished: neither recorded nor logged"
    assert bench.count("SELECT count(*) FROM hook_inbox") == 0
    keys = bench.count(
        "SELECT count(*) FROM proposals WHERE dedupe_key LIKE ?", f"claude-code:{tool_use_id}:%"
    )
    assert keys == 1, "the valid payload queued after it was not recorded"
    check = bench.store.conn.execute("PRAGMA integrity_check").fetchall()
    assert [tuple(r) for r in check] == [("ok",)]
    check_reads(bench)


@pytest.mark.parametrize("agent", sorted(PREFIXES))
def test_fuzzed_payloads_never_stop_the_queue(bench: Bench, agent: str) -> None:
    @FUZZ
    @given(call=hook_call(agent, bench.ws))
    def one(call: HookCall) -> None:
        apply_one(bench, agent, call)

    one()


@pytest.mark.parametrize(
    ("name", "field", "value"),
    [
        ("cursor_afterShellExecution.json", "duration", 1e30),
        ("cursor_afterShellExecution.json", "duration", -5),
        ("claude_code_posttooluse_bash.json", "duration_ms", 2**63),
    ],
)
def test_a_duration_no_date_can_show_is_ignored(
    bench: Bench, name: str, field: str, value: float
) -> None:
    """Found by the fuzz: a test run started "now less 10**27 s" made every later
    `capture episodes` fail (OverflowError formatting its start)."""
    payload = example(name, bench.ws)
    payload[field] = value
    agent = "cursor" if name.startswith("cursor") else "claude-code"
    queue(bench, agent, json.dumps(payload).encode(), None, str(bench.ws), "")
    drain(bench.store, bench.config, clock=time.time)
    (run,) = bench.store.conn.execute("SELECT duration_s, command FROM test_runs").fetchall()
    assert (run["duration_s"], run["command"]) == (
        None,
        payload.get("command") or payload.get("tool_input", {}).get("command"),
    )  # the run, without the duration
    assert any("duration of" in line and "ignored" in line for line in bench.log())
    check_reads(bench)
