"""Databases for report tests and benchmarks: one left by an older release (schema version 1)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

from capture.store import schema

__all__ = ["copy_into_schema_v1", "make_schema_v1_db"]


def make_schema_v1_db(path: Path) -> None:
    """A database exactly as release 1 left it: the same migration code with only the first
    migration known (sqlite-utils records it, PRAGMA user_version is 1)."""
    # Release 1 knew neither the later migrations nor those since moved to another owner.
    with (
        mock.patch.object(schema, "_MIGRATIONS", schema._MIGRATIONS[:1]),
        mock.patch.object(schema, "MOVED_MIGRATIONS", {}),
    ):
        applied = schema.migrate(path)
    assert applied == 1


def copy_into_schema_v1(source: Path, path: Path) -> None:
    """A release-1 database holding the rows of `source` (its release-1 columns only), as if
    release 1 had recorded them."""
    from capture.connection import sqlite3

    make_schema_v1_db(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("ATTACH DATABASE ? AS src", (str(source),))
    conn.execute("BEGIN")
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' "
            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '\\_%' ESCAPE '\\'"
        )
    ]
    for table in tables:
        columns = ", ".join(r[1] for r in conn.execute(f"PRAGMA main.table_info({table})"))
        conn.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM src.{table}")
    conn.execute("COMMIT")
    conn.execute("DETACH DATABASE src")
    conn.close()


# -- the fixed fixture: every figure of its report is computed by hand in test_report_figures ---

from datetime import UTC, datetime  # noqa: E402

from capture.config import Config  # noqa: E402
from capture.edits.windows import parse_windows  # noqa: E402
from capture.model import HunkInput, Outcome, ProposalInput, State, TestRunInput  # noqa: E402
from capture.paths import resolve_paths  # noqa: E402
from capture.recording.recorder import record_proposal, record_test_run  # noqa: E402
from capture.store.database import Store  # noqa: E402

__all__ += ["FIXTURE_SINCE", "FIXTURE_UNTIL", "at", "build_fixture"]

#: The fixture report's period: 7 days ending mid-day, so its edges cut quarter hours and days.
FIXTURE_UNTIL = "2026-03-08T12:07:30+00:00"
FIXTURE_SINCE = "2026-03-01T12:07:30+00:00"


def at(text: str) -> float:
    """'2026-03-01 12:10' (UTC) -> epoch seconds."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _text(chars: int, lines: int) -> str:
    """Exactly `chars` characters on `lines` lines."""
    per = chars // lines
    body = ["x" * (per - 1) + "\n" for _ in range(lines - 1)]
    body.append("y" * (chars - per * (lines - 1) - 1) + "\n")
    return "".join(body)


class _Fixture:
    def __init__(self, store: Store, root: Path) -> None:
        self.store = store
        self.root = root
        self.config = Config(
            paths=resolve_paths({"CAPTURE_HOME": str(root / "home")}),
            windows=parse_windows("30s,2m,10m"),
        )

    def ws(self, name: str) -> str:
        return str(self.root / name)

    def propose(
        self,
        when: str,
        ws: str,
        path: str,
        chars: int,
        lines: int,
        *,
        agent: str,
        model: str | None,
        session: str,
        turn: str,
        state: State = State.APPLIED,
    ) -> str:
        new = _text(chars, lines)
        proposal = ProposalInput(
            path=str(Path(self.ws(ws)) / path),
            workspace=self.ws(ws),
            agent=agent,
            model=model,
            hunks=[HunkInput(old_text="", new_text=new)],
            state=state,
            session_id=session,
            turn_id=turn,
            file_text="# top\n" + new,
        )
        return record_proposal(self.store, self.config, proposal, now=at(when))

    def observe(
        self, pid: str, window: str, when: str, retention: float | None, outcome: Outcome
    ) -> None:
        """What the observer writes at a checkpoint (the 10m window is final)."""
        with self.store.transaction():
            (cid,) = self.store.conn.execute(
                "SELECT id FROM checkpoints WHERE proposal_id = ? AND window = ?", (pid, window)
            ).fetchone()
            self.store.record_checkpoint(
                cid,
                observed_at=at(when),
                similarity=retention,
                retention=retention,
                outcome=outcome,
                via="disk",
            )
            if window == "late":
                return
            final = window == "10m"
            self.store.set_outcome(
                pid,
                outcome=outcome if final else Outcome.PENDING,
                reason=f"fixture {outcome.value}",
                similarity=retention,
                retention=retention,
                settled_at=at(when) if final else None,
            )

    def run(self, when: str, ws: str, command: str, exit_code: int | None, **counts: int) -> str:
        run = TestRunInput(
            command=command,
            source="wrapper",
            started_at=at(when),
            workspace=self.ws(ws),
            exit_code=exit_code,
            duration_s=1.0,
            **counts,  # type: ignore[arg-type]
        )
        return record_test_run(self.store, run, now=at(when))


def build_fixture(store: Store, root: Path) -> None:
    """Proposals, checkpoints and test runs at fixed times, recorded in time order.

    Current period [03-01 12:07:30, 03-08 12:07:30), UTC:
      E1 claude-code/opus  ws a  P1 03-01 12:10 src/app.py   100 ch 4 l  kept (late 0.9)
      E2 claude-code/opus  ws a  P2 03-01 18:00 src/util.py   50 ch 2 l  edited (2m 0.8, 10m 0.6)
      E3 claude-code/opus  ws a  P3 03-03 10:00 src/app.py    40 ch 2 l  undone (late 0.0)
                                 P4 03-03 10:01 src/app.py    20 ch 1 l  undone
                                 P5 03-03 10:02 README.md     30 ch      shown, then rejected
      E4 codex/gpt-5       ws b  P6 03-04 09:00 lib/main.ts   60 ch 3 l  lost from 2m on
                                 P7 03-04 09:05 lib/main.ts   30 ch 1 l  pending (30s 0.5)
      E5 codex/-           ws b  P8 03-05 15:00 docs/guide.md 10 ch      shown, undecided
      E6 claude-code/sonnet ws a P9 03-08 12:05 Makefile       8 ch 1 l  kept
      E7 claude-code/opus  ws a  P10 03-08 12:08 (after the period)
    Previous period: EQ1 claude-code/opus ws a Q1 02-25 10:00 src/app.py 100 ch kept,
      Q2 02-25 10:01 rejected 50 ch; EQ2 codex/gpt-5 ws b Q3 03-01 12:00 lib/x.ts 20 ch undone.
      Before it: Q0 02-20 kept.
    Test runs: R1 03-01 12:12 pytest fail, R2 12:20 pytest pass (E1 repaired); R3 03-03 10:05
      npm test pass (E3); R4 03-04 09:10 cargo test fail, R5 09:12 cargo clippy passes by its
      counts (no exit code), R6 09:20 no result at all (E4: failing, not repaired); R7 03-06
      follows no open episode; R8 03-08 12:06 pass (E6); R9 03-08 12:09 after the period;
      RQ1 02-25 10:03 fail, RQ2 10:04 pass (EQ1).
    """
    f = _Fixture(store, root)
    ok, gone = Outcome.KEPT, Outcome.UNDONE
    cc = {"agent": "claude-code", "model": "opus"}

    q0 = f.propose("2026-02-20 09:00", "a", "src/old.py", 10, 1, session="s0", turn="t0", **cc)
    for w, t in (("30s", "09:00:30"), ("2m", "09:02"), ("10m", "09:10")):
        f.observe(q0, w, f"2026-02-20 {t}", 1.0, ok)

    q1 = f.propose("2026-02-25 10:00", "a", "src/app.py", 100, 4, session="s0", turn="t1", **cc)
    f.propose(
        "2026-02-25 10:01",
        "a",
        "src/app.py",
        50,
        1,
        session="s0",
        turn="t1",
        state=State.REJECTED,
        **cc,
    )
    f.run("2026-02-25 10:03", "a", "pytest", 1, passed=3, failed=1)
    f.run("2026-02-25 10:04", "a", "pytest", 0, passed=4)
    for w, t in (("30s", "10:00:30"), ("2m", "10:02"), ("10m", "10:12"), ("late", "23:00")):
        f.observe(q1, w, f"2026-02-25 {t}", 1.0, ok)

    q3 = f.propose(
        "2026-03-01 12:00",
        "b",
        "lib/x.ts",
        20,
        1,
        agent="codex",
        model="gpt-5",
        session="s0b",
        turn="t1",
    )
    for w, t in (("30s", "12:00:30"), ("2m", "12:02"), ("10m", "12:11")):
        f.observe(q3, w, f"2026-03-01 {t}", 0.0, gone)

    p1 = f.propose("2026-03-01 12:10", "a", "src/app.py", 100, 4, session="s1", turn="t1", **cc)
    f.observe(p1, "30s", "2026-03-01 12:10:30", 1.0, ok)
    f.run("2026-03-01 12:12", "a", "pytest", 1, passed=5, failed=2)
    f.observe(p1, "2m", "2026-03-01 12:12:30", 1.0, ok)
    f.run("2026-03-01 12:20", "a", "pytest", 0, passed=7)
    f.observe(p1, "10m", "2026-03-01 12:25", 1.0, ok)

    p2 = f.propose("2026-03-01 18:00", "a", "src/util.py", 50, 2, session="s1", turn="t2", **cc)
    f.observe(p2, "30s", "2026-03-01 18:00:30", 1.0, ok)
    f.observe(p2, "2m", "2026-03-01 18:02", 0.8, Outcome.EDITED)
    f.observe(p2, "10m", "2026-03-01 18:10", 0.6, Outcome.EDITED)
    f.observe(p1, "late", "2026-03-02 12:10", 0.9, ok)

    p3 = f.propose("2026-03-03 10:00", "a", "src/app.py", 40, 2, session="s1", turn="t3", **cc)
    p4 = f.propose("2026-03-03 10:01", "a", "src/app.py", 20, 1, session="s1", turn="t3", **cc)
    p5 = f.propose(
        "2026-03-03 10:02",
        "a",
        "README.md",
        30,
        1,
        session="s1",
        turn="t3",
        state=State.SHOWN,
        **cc,
    )
    f.store.decide_proposal(p5, accepted=False, decided_by="user", now=at("2026-03-03 10:03"))
    f.observe(p3, "30s", "2026-03-03 10:00:30", 1.0, ok)
    f.observe(p4, "30s", "2026-03-03 10:01:30", 1.0, ok)
    f.run("2026-03-03 10:05", "a", "npm test", 0, passed=3)
    f.observe(p3, "2m", "2026-03-03 10:06", 0.0, gone)
    f.observe(p4, "2m", "2026-03-03 10:06", 0.0, gone)
    f.observe(p3, "10m", "2026-03-03 10:12", 0.0, gone)
    f.observe(p4, "10m", "2026-03-03 10:12", 0.0, gone)

    cx = {"agent": "codex", "model": "gpt-5", "session": "s2", "turn": "t1"}
    p6 = f.propose("2026-03-04 09:00", "b", "lib/main.ts", 60, 3, **cx)
    f.observe(p6, "30s", "2026-03-04 09:00:30", 1.0, ok)
    f.observe(p6, "2m", "2026-03-04 09:02", None, Outcome.LOST)
    p7 = f.propose("2026-03-04 09:05", "b", "lib/main.ts", 30, 1, **cx)
    f.observe(p7, "30s", "2026-03-04 09:05:30", 0.5, Outcome.EDITED)
    f.run("2026-03-04 09:10", "b", "cargo test", 101, passed=3, failed=1)
    f.observe(p6, "10m", "2026-03-04 09:11", None, Outcome.LOST)
    f.run("2026-03-04 09:12", "b", "cargo clippy", None, passed=4, failed=0)
    f.run("2026-03-04 09:20", "b", "cargo bench", None)

    f.propose(
        "2026-03-05 15:00",
        "b",
        "docs/guide.md",
        10,
        1,
        agent="codex",
        model=None,
        session="s3",
        turn="t1",
        state=State.SHOWN,
    )
    f.observe(p3, "late", "2026-03-04 10:00", 0.0, gone)
    f.run("2026-03-06 10:00", "a", "pytest", 0, passed=9)

    p9 = f.propose(
        "2026-03-08 12:05",
        "a",
        "Makefile",
        8,
        1,
        agent="claude-code",
        model="sonnet",
        session="s4",
        turn="t1",
    )
    f.observe(p9, "30s", "2026-03-08 12:05:30", 1.0, ok)
    f.run("2026-03-08 12:06", "a", "pytest", 0, passed=9)
    f.observe(p9, "2m", "2026-03-08 12:07", 1.0, ok)
    p10 = f.propose("2026-03-08 12:08", "a", "src/app.py", 99, 3, session="s4", turn="t2", **cc)
    f.run("2026-03-08 12:09", "a", "pytest", 0, passed=9)
    f.observe(p9, "10m", "2026-03-08 12:15", 1.0, ok)
    f.observe(p10, "30s", "2026-03-08 12:08:30", 1.0, ok)
