"""The test suite's wall time, serially and on two workers, in one invocation.

    python tests/benchmarks/bench_suite.py            # the whole suite (about 25 minutes)
    python tests/benchmarks/bench_suite.py --fast     # without the editors, vscode, postgres
                                                      # and train groups
    python tests/benchmarks/bench_suite.py -- tests/unit   # any pytest selection after `--`

The serial run goes first, then the parallel one (pytest-xdist, `-n 2`, as `.ci/run` runs it);
each is a fresh `python -m pytest` process in this checkout. Prints a Markdown table with the
ratio of the two; the figures belong on the manual's benchmarks page.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FAST = "not editors and not vscode and not postgres and not train"


def timed(args: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return elapsed, lines[-1] if lines else f"exit {proc.returncode}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fast", action="store_true", help=f'only -m "{FAST}"')
    parser.add_argument("selection", nargs="*", help="pytest arguments (after --)")
    options = parser.parse_args()
    selection = [*options.selection, *(["-m", FAST] if options.fast else [])]
    serial, serial_summary = timed(["-p", "no:xdist", *selection])
    parallel, parallel_summary = timed(["-n", "2", *selection])
    print("| run | wall time | result |")
    print("|---|---|---|")
    print(f"| serial (`-p no:xdist`) | {serial:,.0f} s | {serial_summary} |")
    print(f"| two workers (`-n 2`) | {parallel:,.0f} s | {parallel_summary} |")
    print(f"| ratio, two workers to serial | {parallel / serial:.2f}x | |")


if __name__ == "__main__":
    main()
