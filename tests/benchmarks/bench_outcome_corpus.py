"""Outcome and run-linkage accuracy on the labelled corpus (tests/support/outcome_corpus), with
the hook queue
applied at once and 2 s late, beside a peer run in the same process: the same code with the
moment not captured (no snapshot at the hook, no text rebuilt from the payload), as the
recorder worked before.

    python tests/benchmarks/bench_outcome_corpus.py [--delays 0,2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import capture.hooks.edit_records as edit_records  # noqa: E402
import tests.support.outcome_corpus.world as world  # noqa: E402
from tests.support.outcome_corpus.run import Result, play  # noqa: E402
from tests.support.outcome_corpus.scenarios import SCENARIOS  # noqa: E402


@contextmanager
def without_the_moment() -> Iterator[None]:
    paths, rebuild = world.edit_paths, edit_records.rebuild
    world.edit_paths = lambda *args, **kwargs: []  # type: ignore[assignment]
    edit_records.rebuild = lambda before, hunks: None  # type: ignore[assignment]
    try:
        yield
    finally:
        world.edit_paths, edit_records.rebuild = paths, rebuild  # type: ignore[assignment]


def run_all(delay: float) -> tuple[list[Result], float]:
    results = []
    start = time.perf_counter()
    for scenario in SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            results.append(play(scenario, Path(tmp), delay=delay))
    return results, time.perf_counter() - start


def row(label: str, results: list[Result], seconds: float) -> str:
    proposals = sum(len(r.scenario.outcomes) for r in results)
    right = sum(r.right_outcomes for r in results)
    runs = sum(len(r.scenario.runs) for r in results)
    linked = sum(r.right_runs for r in results)
    whole = sum(r.outcomes_right and r.runs_right for r in results)
    run_share = f"{linked}/{runs} ({100 * linked / runs:.1f} %)" if runs else "-"
    return (
        f"| {label} | {right}/{proposals} ({100 * right / proposals:.1f} %) | {run_share} | "
        f"{whole}/{len(results)} | {seconds:.1f} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--delays", default="0,2", help="apply delays in seconds")
    args = parser.parse_args()
    delays = [float(d) for d in args.delays.split(",")]
    print(f"{len(SCENARIOS)} scenarios")
    print(
        "| queue applied | outcomes right | test runs linked once, rightly | scenarios right | s |"
    )
    print("|---|---:|---:|---:|---:|")
    wrong = []
    for delay in delays:
        results, seconds = run_all(delay)
        print(row(f"{delay:g} s late", results, seconds))
        wrong += [r for r in results if not (r.outcomes_right and r.runs_right)]
    with without_the_moment():
        for delay in delays:
            results, seconds = run_all(delay)
            print(row(f"{delay:g} s late, moment not captured (peer)", results, seconds))
    for result in wrong:
        print(result.explain())
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
