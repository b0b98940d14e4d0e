"""What became of an agent's edit: the measures at a checkpoint and the outcome they mean.

All thresholds live here, and the README's "Outcome rules" section documents them.

- similarity = 1 - normalized Levenshtein distance(agent's new text, region text now)
- retention  = share of the characters the agent inserted that are still present in the region
  (an alignment of the agent's text with the region, counted over inserted characters only)
- outcome (at a checkpoint; final at the last window):
    rejected  the proposal was declined before it was applied
    pending   shown and not decided yet, or the last window has not passed
    lost      no hunk of it could be observed (file gone or unreadable, region not found)
    undone    the agent's text is gone (retention < UNDONE_RETENTION) or the old text is back
              in every hunk; a pure deletion is undone when its old text returns; a file the
              agent created is undone when it is deleted (capture.edits.tracking.measure_gone)
    kept      similarity >= KEPT_SIMILARITY
    edited    otherwise
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz.distance import Indel, Levenshtein

from capture.model import Outcome, State

__all__ = [
    "KEPT_SIMILARITY",
    "OLD_BACK_SIMILARITY",
    "RULES_VERSION",
    "UNDONE_RETENTION",
    "HunkObservation",
    "Measurement",
    "decide",
    "inserted_count",
    "inserted_mask",
    "measure",
    "observe_hunk",
    "retention",
    "similarity",
]

RULES_VERSION = 1
KEPT_SIMILARITY = 0.90
UNDONE_RETENTION = 0.10
OLD_BACK_SIMILARITY = 0.95

# Above this size, alignments run over lines instead of characters: an O(n*m) character alignment
# of a rewritten 100 kB file would stall the caller.
_CHAR_ALIGN_LIMIT = 20_000
_MIN_CHAR_RUN = 3


def similarity(agent_text: str, region_text: str) -> float:
    if agent_text == region_text:
        return 1.0
    if len(agent_text) + len(region_text) > 2 * _CHAR_ALIGN_LIMIT:
        a, b = agent_text.splitlines(keepends=True), region_text.splitlines(keepends=True)
        return 1.0 - Levenshtein.normalized_distance(a, b)
    return 1.0 - Levenshtein.normalized_distance(agent_text, region_text)


def _units(text: str, by_lines: bool) -> list[str] | str:
    return text.splitlines(keepends=True) if by_lines else text


def _weights(units: list[str] | str) -> list[int]:
    return [len(u) for u in units]


def inserted_mask(old_text: str, new_text: str) -> list[bool]:
    """For each character of new_text: True when the agent inserted it (not carried over from
    old_text)."""
    mask = [True] * len(new_text)
    if not old_text or not new_text:
        return mask
    if len(old_text) + len(new_text) > 2 * _CHAR_ALIGN_LIMIT:
        return _inserted_mask_by_lines(old_text, new_text)
    for op in Indel.opcodes(old_text, new_text):
        if op.tag == "equal":
            mask[op.dest_start : op.dest_end] = [False] * (op.dest_end - op.dest_start)
    return mask


def _inserted_mask_by_lines(old_text: str, new_text: str) -> list[bool]:
    old_lines = old_text.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    starts = [0]
    for line in new_lines:
        starts.append(starts[-1] + len(line))
    mask = [True] * len(new_text)
    for op in Indel.opcodes(old_lines, new_lines):
        if op.tag == "equal":
            lo, hi = starts[op.dest_start], starts[op.dest_end]
            mask[lo:hi] = [False] * (hi - lo)
    return mask


@lru_cache(maxsize=4096)
def inserted_count(old_text: str, new_text: str) -> int:
    """How many characters of new_text the agent inserted (cached: every checkpoint of a hunk
    asks again)."""
    return sum(inserted_mask(old_text, new_text))


def retention(old_text: str, new_text: str, region_text: str) -> float:
    """Share of the agent's inserted characters still present in region_text."""
    if region_text == new_text or inserted_count(old_text, new_text) == 0:
        return 1.0
    if not region_text:
        return 0.0
    mask = inserted_mask(old_text, new_text)
    inserted = sum(mask)
    by_lines = len(new_text) + len(region_text) > 2 * _CHAR_ALIGN_LIMIT
    src = _units(new_text, by_lines)
    dst = _units(region_text, by_lines)
    # Map alignment units back to character offsets in new_text (a character is its own).
    starts: Sequence[int] = range(len(new_text) + 1)
    if by_lines:
        starts = [0]
        for unit in src:
            starts.append(starts[-1] + len(unit))
    # Matching runs shorter than this are coincidences of the alphabet, not surviving text.
    min_run = 1 if by_lines else min(_MIN_CHAR_RUN, len(new_text), len(region_text))
    kept = 0
    for op in Indel.opcodes(src, dst):
        if op.tag == "equal" and op.src_end - op.src_start >= min_run:
            lo, hi = starts[op.src_start], starts[op.src_end]
            kept += sum(mask[lo:hi])
    return kept / inserted


@dataclass(frozen=True, slots=True)
class HunkObservation:
    """One hunk seen at one moment. `region_text` is None when the region could not be found."""

    old_text: str
    new_text: str
    region_text: str | None
    old_text_adjacent: bool = False  # for pure deletions: the old text sits right at the point

    @property
    def lost(self) -> bool:
        return self.region_text is None


@dataclass(frozen=True, slots=True)
class Measurement:
    similarity: float
    retention: float
    old_back: bool
    observed_hunks: int
    lost_hunks: int

    @property
    def lost(self) -> bool:
        return self.observed_hunks == 0


def observe_hunk(
    text: str, old_text: str, new_text: str, span: tuple[int, int] | None
) -> HunkObservation:
    """Read a hunk's region out of the current text."""
    if span is None:
        return HunkObservation(old_text, new_text, None)
    lo, hi = span
    region_text = text[lo:hi]
    adjacent = False
    if not new_text and old_text:
        n = len(old_text)
        adjacent = text[hi : hi + n] == old_text or text[max(0, lo - n) : lo] == old_text
    return HunkObservation(old_text, new_text, region_text, adjacent)


def _old_back(h: HunkObservation) -> bool:
    assert h.region_text is not None
    if h.old_text == h.new_text:
        return False
    if not h.new_text:
        return h.old_text_adjacent or (
            bool(h.old_text) and similarity(h.old_text, h.region_text) >= OLD_BACK_SIMILARITY
        )
    if not h.old_text:
        return False
    to_old = similarity(h.old_text, h.region_text)
    return to_old >= OLD_BACK_SIMILARITY and to_old > similarity(h.new_text, h.region_text)


def measure(hunks: Sequence[HunkObservation]) -> Measurement:
    """Combine a proposal's hunks: similarity weighted by size, retention over all inserted
    characters, old text back only when it is back in every observed hunk."""
    observed = [h for h in hunks if h.region_text is not None]
    if not observed:
        return Measurement(0.0, 0.0, False, 0, len(hunks))
    total_weight = 0
    weighted_similarity = 0.0
    inserted_total = 0
    kept_total = 0.0
    backs = []
    for h in observed:
        assert h.region_text is not None
        back = _old_back(h)
        backs.append(back)
        if h.new_text:
            weight = max(len(h.new_text), 1)
            sim = similarity(h.new_text, h.region_text)
            inserted = inserted_count(h.old_text, h.new_text)
            kept = retention(h.old_text, h.new_text, h.region_text) * inserted
        else:
            # A pure deletion is intact while its old text stays away.
            weight = max(len(h.old_text), 1)
            sim = 0.0 if back else 1.0
            inserted = weight
            kept = 0.0 if back else float(weight)
        weighted_similarity += sim * weight
        total_weight += weight
        inserted_total += inserted
        kept_total += kept
    return Measurement(
        similarity=weighted_similarity / total_weight,
        retention=kept_total / inserted_total if inserted_total else 1.0,
        old_back=all(backs),
        observed_hunks=len(observed),
        lost_hunks=len(hunks) - len(observed),
    )


def decide(state: State, measurement: Measurement | None) -> tuple[Outcome, str]:
    """The outcome a proposal shows given its state and what was measured; with a reason."""
    if state is State.REJECTED:
        return Outcome.REJECTED, "declined before it was applied"
    if state is State.SHOWN:
        return Outcome.PENDING, "shown, not decided"
    if measurement is None or measurement.lost:
        return Outcome.LOST, "region could not be observed"
    if measurement.old_back:
        return Outcome.UNDONE, "the old text is back"
    if measurement.retention < UNDONE_RETENTION:
        return Outcome.UNDONE, f"retention {measurement.retention:.2f} < {UNDONE_RETENTION}"
    if measurement.similarity >= KEPT_SIMILARITY:
        return Outcome.KEPT, f"similarity {measurement.similarity:.2f} >= {KEPT_SIMILARITY}"
    return Outcome.EDITED, f"similarity {measurement.similarity:.2f} < {KEPT_SIMILARITY}"
