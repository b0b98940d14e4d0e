"""How long `capture report` takes over 1,000,000 proposals and 200,000 test runs.

Generates a database the size of years of heavy use (sessions with a fixed workspace, agent and
model; 4 proposals per episode; checkpoints at 30s, 2m, 10m and the late check; test runs linked
to the episodes they followed) spread over 180 days, then runs the real `capture` command over
it as a subprocess: the report covers the last 90 days and compares them with the 90 before, so
every proposal is counted. The peer, measured in the same run, is one plain full scan of the
proposals table (`SELECT count(*), sum(chars_added) FROM proposals`). Each time is the best of
--repeat runs: the machine may be shared, and the load average is printed beside the table.

The database is built at schema version 1 (as older releases left it) and then migrated, so the
rollup backfill of migration m006_report is timed too. It is cached in the temp dir between runs
(--fresh rebuilds it).

    python tests/benchmarks/bench_report.py [--proposals N] [--runs N] [--fresh] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from capture.connection import sqlite3

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capture.store.schema import SCHEMA_VERSION, migrate  # noqa: E402
from tests.support.report_fixtures import make_schema_v1_db  # noqa: E402

DAYS = 180
END = 1_780_000_000.0  # a fixed end, so a cached database reports the same
SPAN = DAYS * 86400.0
WORKSPACES = 12

_EXTS = ["py", "ts", "go", "rs", "tsx"]


def _case(expr: str, values: list[str]) -> str:
    whens = " ".join(f"WHEN {i} THEN '{v}'" for i, v in enumerate(values))
    return f"CASE ({expr}) % {len(values)} {whens} END"


def generate(path: Path, proposals: int, runs: int) -> None:
    if path.exists():
        path.unlink()
    make_schema_v1_db(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")
    conn.execute("BEGIN")
    conn.execute(
        """WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
           INSERT INTO workspaces (id, root, created_at)
           SELECT i, '/home/dev/project-' || i, ? FROM n""",
        (WORKSPACES, END - SPAN),
    )
    episodes = proposals // 4
    # Episode i belongs to session i / 12, which fixes its workspace, agent and model.
    conn.execute(
        f"""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :last)
        INSERT INTO episodes (id, workspace_id, agent, model, session_id, turn_id, key, prompt,
            source, started_at, last_at, ended_at, settled_at)
        SELECT printf('e%015x', i), 1 + ((i / 12) * 7919) % {WORKSPACES},
            {_case("(i / 12) * 13", ["claude-code", "claude-code", "codex", "cursor", "aider"])},
            {_case("(i / 12) * 31", ["opus", "sonnet", "gpt-5", "gpt-5-mini", "haiku", "gemini"])},
            's' || (i / 12), 't' || i, 'k' || i, 'make the parser accept trailing commas', 'hook',
            :start + :span * i / :n, :start + :span * i / :n + 60,
            :start + :span * i / :n + 60, :start + :span * i / :n + 700
        FROM n""",
        {"last": episodes - 1, "start": END - SPAN, "span": SPAN, "n": episodes},
    )
    # Most files of a workspace are in its main language; some docs and config.
    ext = (
        f"CASE WHEN (i * 7) % 100 < 70 THEN {_case('e.workspace_id', _EXTS)} "
        f"WHEN (i * 7) % 100 < 85 THEN {_case('e.workspace_id + 1', _EXTS)} "
        f"ELSE {_case('i', ['md', 'json', 'toml'])} END"
    )
    conn.execute(
        f"""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :last)
        INSERT INTO proposals (id, episode_id, workspace_id, path, agent, model, tool,
            tool_use_id, dedupe_key, state, outcome, reason, similarity, retention, chars_added,
            chars_removed, lines_added, lines_removed, source, created_at, applied_at,
            decided_at, settled_at)
        SELECT printf('p%015x', i), e.id, e.workspace_id,
            'src/pkg' || ((i * 2654435761) % 30) || '/mod' || ((i * 40503) % 9) || '.' || {ext},
            e.agent, e.model, 'Edit', 'toolu_' || i, 'claude-code:toolu_' || i,
            CASE WHEN (i * 37) % 100 < 80 THEN 'applied'
                 WHEN (i * 37) % 100 < 92 THEN 'rejected' ELSE 'shown' END,
            CASE WHEN (i * 37) % 100 >= 92 THEN 'pending'
                 WHEN (i * 37) % 100 >= 80 THEN 'rejected'
                 WHEN (i * 53) % 100 < 60 THEN 'kept' WHEN (i * 53) % 100 < 80 THEN 'edited'
                 WHEN (i * 53) % 100 < 90 THEN 'undone' WHEN (i * 53) % 100 < 93 THEN 'lost'
                 ELSE 'pending' END,
            'similarity 0.97 >= 0.9', 0.97, 0.95, 20 + (i * 13) % 400, (i * 7) % 100,
            1 + (i * 13) % 20, (i * 7) % 5, 'hook', e.started_at + (i % 4) * 5,
            CASE WHEN (i * 37) % 100 < 80 THEN e.started_at + (i % 4) * 5 END,
            e.started_at + (i % 4) * 5, e.started_at + 700
        FROM n JOIN episodes e ON e.id = printf('e%015x', i / 4)""",
        {"last": proposals - 1},
    )
    conn.execute(
        """INSERT INTO checkpoints (proposal_id, window, window_seconds, due_at, observed_at,
            similarity, retention, outcome, via)
        SELECT p.id, w.label, w.secs, p.applied_at + w.secs,
            CASE WHEN p.outcome != 'pending' OR w.secs < 600 THEN p.applied_at + w.secs END,
            0.95, CASE WHEN p.outcome = 'lost' THEN NULL WHEN p.outcome = 'undone' THEN 0.02
                       ELSE 1.0 - w.secs / 400000.0 - (p.rowid % 10) / 40.0 END,
            CASE WHEN p.outcome = 'pending' THEN 'kept' ELSE p.outcome END, 'disk'
        FROM proposals p, (SELECT '30s' AS label, 30.0 AS secs UNION ALL SELECT '2m', 120.0
            UNION ALL SELECT '10m', 600.0 UNION ALL SELECT 'late', 86400.0) w
        WHERE p.state = 'applied' ORDER BY p.rowid, w.secs"""
    )
    # Runs come in pairs per episode (a first try, then a second); 90% are linked.
    failed = "(CASE WHEN i % 2 = 0 THEN ((i * 71) % 100 < 40) * 2 ELSE ((i * 71) % 100 < 25) END)"
    conn.execute(
        f"""WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < :last)
        INSERT INTO test_runs (id, workspace_id, command, source, started_at, duration_s,
            exit_code, passed, failed, errors, skipped, failing_ids)
        SELECT printf('r%015x', i), e.workspace_id,
            {_case("i / 2", ["pytest", "npm test", "cargo test"])}, 'wrapper',
            e.started_at + 40 + (i % 2) * 90, 4.2, {failed} > 0, 40, {failed}, 0, 1,
            CASE WHEN {failed} > 0 THEN '["tests/test_parser.py::test_commas"]' ELSE '[]' END
        FROM n JOIN episodes e ON e.id = printf('e%015x', ((i / 2) * 5) / 2)""",
        {"last": runs - 1},
    )
    conn.execute(
        """INSERT INTO episode_test_runs (episode_id, test_run_id)
           SELECT printf('e%015x', ((rowid - 1) / 2 * 5) / 2), id FROM test_runs
           WHERE rowid % 10 != 0"""
    )
    conn.execute("COMMIT")
    conn.close()


def _time(args: list[str], env: dict[str, str], repeat: int) -> tuple[float, str]:
    times = []
    out = ""
    for _ in range(repeat):
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "capture", *args], env=env, capture_output=True, text=True
        )
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"capture {' '.join(args)} failed: {proc.stderr}")
        out = proc.stdout
    return min(times), out


def _peer(db: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        conn = sqlite3.connect(db)
        start = time.perf_counter()
        conn.execute("SELECT count(*), sum(chars_added) FROM proposals").fetchone()
        times.append(time.perf_counter() - start)
        conn.close()
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--proposals", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--fresh", action="store_true", help="rebuild the cached database")
    args = parser.parse_args()

    home = Path(tempfile.gettempdir()) / (
        f"capture-bench-report-{args.proposals}-{args.runs}-s{SCHEMA_VERSION}"
    )
    db = home / "data" / "capture.db"
    if args.fresh or not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        generate(db, args.proposals, args.runs)
        generated = time.perf_counter() - start
        start = time.perf_counter()
        migrate(db)
        migrated = time.perf_counter() - start
        print(f"generated in {generated:.1f}s; migrated (rollup backfill) in {migrated:.1f}s")
    conn = sqlite3.connect(db)
    counts = {
        t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("proposals", "checkpoints", "episodes", "test_runs", "episode_test_runs")
    }
    conn.close()
    print(", ".join(f"{n:,} {t}" for t, n in counts.items()))

    env = dict(os.environ)
    env["CAPTURE_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["COLUMNS"] = "160"
    env["TZ"] = "UTC"
    until = datetime.fromtimestamp(END, UTC).isoformat()
    period = ["--all", "--since", "90d", "--until", until]
    html = home / "report.html"
    cases = [
        ("`capture report` (by agent)", ["report", *period], 2.0),
        ("`capture report --json`", ["report", *period, "--json"], 2.0),
        ("`capture report --by language`", ["report", *period, "--by", "language"], 2.0),
        ("`capture report --by day`", ["report", *period, "--by", "day"], 2.0),
        ("`capture report --html FILE`", ["report", *period, "--html", str(html)], 4.0),
        ("`capture report --today --oneline`", ["report", "--all", "--today", "--oneline"], 2.0),
    ]
    peer = _peer(db, args.repeat)
    rows = [("peer: full scan of proposals", peer, None)]
    for label, cmd, budget in cases:
        seconds, _ = _time(cmd, env, args.repeat)
        rows.append((label, seconds, budget))
    print()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"best of {args.repeat} runs each; load average {load:.1f} on {os.cpu_count()} CPUs")
    print(
        f"| what ({args.proposals:,} proposals, {args.runs:,} test runs) "
        "| wall s | × peer | budget |"
    )
    print("|---|---:|---:|---:|")
    for label, seconds, budget in rows:
        ratio = seconds / peer if peer else float("nan")
        verdict = (
            "" if budget is None else f"≤ {budget:g} s {'ok' if seconds <= budget else 'OVER'}"
        )
        print(f"| {label} | {seconds:.2f} | {ratio:.1f} | {verdict} |")


if __name__ == "__main__":
    main()
