"""Benchmark: following 1,000 live regions through 10,000 edits in a small and a large file.

Run ``python tests/benchmarks/bench_tracking.py``. It prints a markdown table of edits per
second for RegionIndex, LineIndex, both together (what the server does per keystroke), and a
naive baseline that calls ``track()`` on every region for every edit, for a 1,000-line and a
20,000-line document; then the large/small ratio, which should stay near 1 because per-edit
cost must not grow with the document. The naive baseline runs on the first edits only, to
keep the whole run well under a minute.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from capture.edits.positions import LineIndex, PositionEncoding  # noqa: E402
from capture.edits.region_index import RegionIndex  # noqa: E402
from capture.edits.regions import Edit, Region, is_outside, track  # noqa: E402

SEED = 20240611
REGIONS = 1_000
EDITS = 10_000
NAIVE_EDITS = 1_000
REPEATS = 3
SIZES = (1_000, 20_000)
WORDS = ("value", "result", "items", "count", "self", "return", "if", "for", "None", "é", "中")


def build_document(rng: random.Random, lines: int) -> str:
    out = []
    for n in range(lines):
        indent = "    " * rng.randint(0, 3)
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))
        out.append(f"{indent}{body}  # {n}\n")
    return "".join(out)


def build_regions(rng: random.Random, text: str) -> list[Region]:
    starts = [i + 1 for i, ch in enumerate(text) if ch == "\n"][:-1]
    regions = []
    for _ in range(REGIONS):
        first = rng.randrange(len(starts))
        span = rng.randint(1, 5)
        end = starts[min(first + span, len(starts) - 1)]
        regions.append(Region(starts[first], max(end, starts[first] + 1)))
    return regions


def build_edits(rng: random.Random, length: int) -> list[Edit]:
    """Mostly single-character typing and deleting, some multi-line pastes and deletions."""
    edits = []
    for _ in range(EDITS):
        roll = rng.random()
        at = rng.randint(0, length)
        if roll < 0.55:
            edit = Edit(at, at, rng.choice("abcdefghij (),.:_"))
        elif roll < 0.90:
            at = min(at, length - 1)
            edit = Edit(at, at + 1, "")
        elif roll < 0.95:
            edit = Edit(
                at, at, "".join(f"    pasted_{k} = {k}\n" for k in range(rng.randint(1, 4)))
            )
        else:
            edit = Edit(at, min(length, at + rng.randint(20, 200)), "")
        length += edit.delta
        edits.append(edit)
    return edits


def best_time(setup: Callable[[], Callable[[], None]]) -> float:
    """Fastest of REPEATS runs, each on fresh structures (the machine may be shared)."""
    best = float("inf")
    for _ in range(REPEATS):
        run = setup()
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def fresh_index(regions: list[Region]) -> RegionIndex[int]:
    index: RegionIndex[int] = RegionIndex()
    for key, region in enumerate(regions):
        index.add(key, region)
    return index


def bench_size(lines: int) -> dict[str, float]:
    rng = random.Random(SEED + lines)
    text = build_document(rng, lines)
    regions = build_regions(rng, text)
    edits = build_edits(rng, len(text))
    utf16 = PositionEncoding.UTF16

    def regions_only() -> Callable[[], None]:
        index = fresh_index(regions)

        def run() -> None:
            for edit in edits:
                index.apply(edit)

        return run

    def lines_only() -> Callable[[], None]:
        line_index = LineIndex(text)

        def run() -> None:
            for edit in edits:
                # what the server does: LSP position -> offset, then keep the index current
                line, char = line_index.offset_to_position(edit.start, utf16)
                line_index.position_to_offset(line, char, utf16)
                line_index.update(edit)

        return run

    def both() -> Callable[[], None]:
        index = fresh_index(regions)
        line_index = LineIndex(text)

        def run() -> None:
            for edit in edits:
                line, char = line_index.offset_to_position(edit.start, utf16)
                line_index.position_to_offset(line, char, utf16)
                line_index.update(edit)
                index.apply(edit)

        return run

    def naive() -> Callable[[], None]:
        tracked = list(regions)

        def run() -> None:
            nonlocal tracked
            for edit in edits[:NAIVE_EDITS]:
                _touched = [k for k, r in enumerate(tracked) if not is_outside(r, edit)]
                tracked = [track(r, edit) for r in tracked]

        return run

    result = {
        "chars": float(len(text)),
        "regions": EDITS / best_time(regions_only),
        "lines": EDITS / best_time(lines_only),
        "both": EDITS / best_time(both),
        "naive": NAIVE_EDITS / best_time(naive),
    }
    check_against_naive(text, regions, edits[:NAIVE_EDITS])
    return result


def check_against_naive(text: str, regions: list[Region], edits: list[Edit]) -> None:
    """The fast structures must agree with the obvious ones, or the timings mean nothing."""
    index = fresh_index(regions)
    line_index = LineIndex(text)
    tracked = list(regions)
    for edit in edits:
        index.apply(edit)
        line_index.update(edit)
        tracked = [track(r, edit) for r in tracked]
        text = text[: edit.start] + edit.text + text[edit.end :]
    assert dict(index.items()) == dict(enumerate(tracked)), "RegionIndex disagrees with track()"
    assert line_index.text == text, "LineIndex disagrees with the edited text"


def main() -> None:
    results = {lines: bench_size(lines) for lines in SIZES}
    small, large = (results[n] for n in SIZES)
    print(f"{EDITS:,} edits, {REGIONS:,} regions, seed {SEED} (naive: first {NAIVE_EDITS:,})\n")
    header = " | ".join(f"{n:,} lines ({int(results[n]['chars']):,} chars)" for n in SIZES)
    print(f"| edits/s | {header} | large/small |")
    print("|---|" + "---:|" * (len(SIZES) + 1))
    rows = [
        ("RegionIndex.apply", "regions"),
        ("LineIndex (convert + update)", "lines"),
        ("both (per keystroke)", "both"),
        ("naive track() x 1,000", "naive"),
    ]
    for label, key in rows:
        cells = " | ".join(f"{results[n][key]:,.0f}" for n in SIZES)
        print(f"| {label} | {cells} | {large[key] / small[key]:.2f} |")
    speedups = " | ".join(f"{results[n]['regions'] / results[n]['naive']:.1f}x" for n in SIZES)
    print(f"| RegionIndex vs naive | {speedups} | |")


if __name__ == "__main__":
    main()
