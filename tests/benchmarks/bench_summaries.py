"""How long `parse_summary` takes on runner output, against reading the same text once.

Inputs: every captured runner output (tests/fixtures/runner-output/, each file once), a long
passing run (2,000 test packages' go output, ~200 kB), and 5 MB of build log that no runner
parser recognises (every parser scans it, as when an agent runs `make test` on a large build).
Peer, in the same run: `clean()` (colours removed, line ends normalised) plus one regex scan
counting the lines, the least any parser of the text has to do.

    python tests/benchmarks/bench_summaries.py [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable
from pathlib import Path

from capture.testruns.summaries import clean, parse_summary

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "runner-output"
_LINE = re.compile(r"\n")


def _peer(text: str) -> int:
    return len(_LINE.findall(clean(text)))


def _inputs() -> dict[str, list[str]]:
    files = sorted(FIXTURES.rglob("*.txt"))
    captured = [p.read_bytes().decode("utf-8", "replace") for p in files]
    go = "".join(
        f"=== RUN   TestCase{i}\n--- PASS: TestCase{i} (0.00s)\nPASS\n"
        f"ok  \texample.com/m/p{i}\t0.01s\n"
        for i in range(2000)
    )
    log = "".join(
        f"[{i:06d}] CC src/module_{i % 97}/file_{i}.c -o build/obj/file_{i}.o -O2 -Wall\n"
        for i in range(80_000)
    )
    return {"captured outputs": captured, "go test -v, 2000 pkgs": [go], "5 MB build log": [log]}


def _best(fn: Callable[[str], object], texts: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'input':<24} {'files':>5} {'MB':>6} {'parse ms':>9} {'peer ms':>8} {'ratio':>6}")
    for name, texts in _inputs().items():
        size = sum(len(t.encode()) for t in texts) / 1e6
        parse = _best(parse_summary, texts, args.repeat)
        peer = _best(_peer, texts, args.repeat)
        print(
            f"{name:<24} {len(texts):>5} {size:>6.2f} {parse * 1e3:>9.2f} {peer * 1e3:>8.2f} "
            f"{parse / peer:>6.1f}"
        )


if __name__ == "__main__":
    main()
