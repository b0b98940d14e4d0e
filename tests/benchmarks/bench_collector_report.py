"""The team report over 1,000,000 stored episodes on PostgreSQL, asked over HTTP.

The episodes are generated (a few thousand distinct anonymized episodes, each run through the
collector's own ingest code for its figures, then repeated under new ids, 60 contributors and 26
weeks) and COPY'd into a throwaway PostgreSQL cluster with its default durability, then
VACUUM ANALYZE'd as autovacuum would. The report is asked of a real `capture collector serve`
process. Peers, measured in the same run: a bare `SELECT count(*)` over the team's episodes (the
scan any report must do at least) and the report's own queries without HTTP and aggregation:
the summed cells, and the cells of the figures that do not add up.

    python tests/benchmarks/bench_collector_report.py [--episodes 1000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from tests.support.collector_support import (  # noqa: E402
    Collector,
    PgCluster,
    item,
    make_episode,
    make_token,
)

TARGET_S = 2.0
CONTRIBUTORS = 60
WEEKS = 26
TEMPLATES = 4000


def load(db: str, count: int) -> float:
    import psycopg

    from sync.collector.ingest import METRIC_FIELDS, EpisodeRow, prepare, week_of
    from sync.collector.storage import open_storage

    storage = open_storage(db)
    storage.migrate()
    storage.close()
    templates: list[EpisodeRow] = []
    for i in range(TEMPLATES):
        row = prepare(
            item(make_episode(f"t{i}", level="metrics"), level="metrics"),
            contributor=None,
            received_at=time.time(),
        )
        assert isinstance(row, EpisodeRow)
        templates.append(row)
    start = time.perf_counter()
    base = 1_764_547_200.0  # a Monday
    span = WEEKS * 7 * 86400
    with psycopg.connect(db) as conn, conn.cursor() as cur:
        with cur.copy(
            "COPY revisions (team, episode_id, revision, level, contributor, received_at, body) "
            "FROM STDIN"
        ) as copy:
            for n in range(count):
                t = templates[n % TEMPLATES]
                copy.write_row(
                    ("bench", f"{n:016x}", 1, "metrics", f"dev{n % CONTRIBUTORS}", base, t.body)
                )
        columns = (
            "team, episode_id, revision, level, contributor, received_at, agent, model, "
            "started_at, week, " + ", ".join(METRIC_FIELDS) + ", first_test_s, window_retention"
        )
        with cur.copy(f"COPY episodes ({columns}) FROM STDIN") as copy:
            for n in range(count):
                t = templates[n % TEMPLATES]
                started = base + (n * 7919.0) % span
                copy.write_row(
                    (
                        "bench",
                        f"{n:016x}",
                        1,
                        "metrics",
                        f"dev{n % CONTRIBUTORS}",
                        base,
                        t.agent,
                        t.model,
                        started,
                        week_of(started),
                        *(getattr(t.metrics, f) for f in METRIC_FIELDS),
                        t.curve.first_test_s,
                        t.curve.windows_json(),
                    )
                )
        conn.commit()
    with psycopg.connect(db, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE revisions")
        conn.execute("VACUUM ANALYZE episodes")
    return time.perf_counter() - start


def median_time(fn, runs: int = 5) -> float:
    fn()  # warm
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--episodes", type=int, default=1_000_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-"))
    cluster = PgCluster(durable=True).start()
    try:
        db = cluster.create_database("report")
        loaded = load(db, args.episodes)
        print(f"loaded {args.episodes:,} episodes in {loaded:.1f} s", flush=True)
        token = make_token(db, "bench", "read")
        collector = Collector(db, tmp / "home").start()
        try:
            auth = {"Authorization": f"Bearer {token}"}
            url = f"{collector.url}/v1/teams/bench/report"
            with httpx.Client(timeout=120) as client:
                check = client.get(url, headers=auth).json()
                assert check["total"]["episodes"] == args.episodes, check["total"]
                assert check["total"]["contributors"] == CONTRIBUTORS
                report_json = median_time(lambda: client.get(url, headers=auth).raise_for_status())
                report_html = median_time(
                    lambda: client.get(
                        url, params={"format": "html"}, headers=auth
                    ).raise_for_status()
                )
        finally:
            collector.stop()

        import psycopg

        from sync.collector.storage import open_storage

        with psycopg.connect(db) as conn:
            scan = median_time(
                lambda: conn.execute(
                    "SELECT count(*) FROM episodes WHERE team = %s", ("bench",)
                ).fetchone()
            )
        storage = open_storage(db)
        query = median_time(lambda: storage.report_rows("bench", None, None))
        curves = median_time(lambda: storage.curve_rows("bench", None, None))
        storage.close()
    finally:
        cluster.stop()
    print()
    print(
        f"Team report over {args.episodes:,} stored episodes ({CONTRIBUTORS} contributors, "
        f"{WEEKS} weeks) on PostgreSQL, median of 5:"
    )
    print()
    print("| what | seconds | vs bare count(*) scan |")
    print("|---|---|---|")
    verdict = "met" if report_json <= TARGET_S else "NOT met"
    for name, seconds in (
        (f"GET report, JSON (target <= {TARGET_S:g} s: {verdict})", report_json),
        ("GET report, HTML", report_html),
        ("the report's summed cells alone (no HTTP, no aggregation)", query),
        ("its curve cells alone (time to first test, retention per window)", curves),
        ("peer: `SELECT count(*)` over the team's episodes", scan),
    ):
        print(f"| {name} | {seconds:.3f} | {seconds / scan:.1f}x |")
    print()
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
