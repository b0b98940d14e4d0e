"""What became of an agent's edit: the measures at a checkpoint and the outcome they mean.

All thresholds live here, and docs/outcomes.md ("Outcome rules") documents them. Rules version
3 (RULES_VERSION); a label is stored with the version that decided it and never re-decided, so
earlier labels stay as they were. Version 3 changed no threshold: typing that continues a rewrite
of the agent's text stays in its region (capture.edits.regions), so a line typed over key by key
in an editor that sends one change per key is now `edited`, where version 2 said `undone`.

- similarity = 1 - normalized Levenshtein distance(agent's new text, region text now)
- retention  = share of the characters the agent inserted that are still present in the region
  (an alignment of the agent's text with the region, counted over inserted characters only)
- novel text = the region's non-whitespace characters that align with neither the agent's text
  nor the old text: what someone else wrote there
- substantial = at least SUBSTANTIAL_CHARS non-whitespace characters
- outcome (at a checkpoint; final at the last window):
    rejected  the proposal was declined before it was applied (a refusal seen, never guessed)
    failed    the tool call failed (its reason: the error's kind); nobody refused it
    pending   shown and not decided yet, or the last window has not passed
    lost      no hunk of it could be observed (file gone or unreadable, region not found)
    undone    "old text back": the old text is back in every hunk; a pure deletion's old text
              is back when the region holds it, or when the text around the point holds more
              copies of it than right after the edit; a file the agent created is back to
              absent when it is deleted (capture.edits.tracking.measure_gone)
              "agent's text removed": in every hunk the old text is back or the agent's text is
              gone (retention < UNDONE_RETENTION) with nothing substantial in its place; a hunk
              inserting less than substantial text counts as gone only when nothing novel is
              left in its region, so that its retention alone cannot decide
    edited    "rewritten": similarity < KEPT_SIMILARITY and the regions hold substantial novel
              text where the agent's text is gone (or was less than substantial)
              otherwise "similarity S < KEPT_SIMILARITY"
    kept      similarity >= KEPT_SIMILARITY
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
    "SUBSTANTIAL_CHARS",
    "UNDONE_RETENTION",
    "HunkObservation",
    "Measurement",
    "decide",
    "inserted_count",
    "inserted_mask",
    "measure",
    "novel_count",
    "observe_hunk",
    "retention",
    "rules_label",
    "similarity",
]

RULES_VERSION = 3
KEPT_SIMILARITY = 0.90
UNDONE_RETENTION = 0.10
OLD_BACK_SIMILARITY = 0.95
# Fewer non-whitespace characters than this are not substantial: they neither make a rewrite
# nor let retention alone undo a hunk (one changed character of three is not a verdict).
SUBSTANTIAL_CHARS = 5


def rules_label(version: int | None) -> str:
    """How a stored label names the rules that decided it (rows from before versions: 1)."""
    return f"rules v{version if version is not None else 1}"


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


def _solid(text: str) -> int:
    return sum(not c.isspace() for c in text)


def _aligned_mask(src: str, dst: str) -> list[bool]:
    """For each character of dst: True when it aligns with a run of src long enough not to be a
    coincidence of the alphabet."""
    mask = [False] * len(dst)
    if not src or not dst:
        return mask
    by_lines = len(src) + len(dst) > 2 * _CHAR_ALIGN_LIMIT
    a, b = _units(src, by_lines), _units(dst, by_lines)
    starts: Sequence[int] = range(len(dst) + 1)
    if by_lines:
        starts = [0]
        for unit in b:
            starts.append(starts[-1] + len(unit))
    min_run = 1 if by_lines else min(_MIN_CHAR_RUN, len(src), len(dst))
    for op in Indel.opcodes(a, b):
        if op.tag == "equal" and op.dest_end - op.dest_start >= min_run:
            lo, hi = starts[op.dest_start], starts[op.dest_end]
            mask[lo:hi] = [True] * (hi - lo)
    return mask


def novel_count(old_text: str, new_text: str, region_text: str) -> int:
    """Non-whitespace characters of region_text that are neither the agent's nor the old text."""
    if region_text in (new_text, old_text) or not _solid(region_text):
        return 0
    from_new = _aligned_mask(new_text, region_text)
    from_old = _aligned_mask(old_text, region_text)
    return sum(
        not (n or o or c.isspace()) for c, n, o in zip(region_text, from_new, from_old, strict=True)
    )


@dataclass(frozen=True, slots=True)
class HunkObservation:
    """One hunk seen at one moment. `region_text` is None when the region could not be found."""

    old_text: str
    new_text: str
    region_text: str | None
    # For pure deletions: more copies of the old text sit around the point than right after the
    # edit (see observe_hunk).
    old_text_adjacent: bool = False

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
    # every observed hunk has its old text back or the agent's text gone, nothing in its place
    removed: bool = False
    novel_chars: int = 0  # substantial only from SUBSTANTIAL_CHARS on
    inserted_chars: int = 0  # non-whitespace characters the agent inserted, over all hunks

    @property
    def lost(self) -> bool:
        return self.observed_hunks == 0


def _anchor_start(text: str, lo: int, before: str, slack: int) -> int:
    b = len(before)
    if lo - b >= 0 and text[lo - b : lo] == before:
        return lo - b
    # Text typed just before the point pushes the context back by what was typed.
    found = text.rfind(before, max(0, lo - b - slack), lo)
    return found if found >= 0 else max(0, lo - b)


def _anchor_end(text: str, hi: int, after: str, slack: int) -> int:
    a = len(after)
    if text[hi : hi + a] == after:
        return hi + a
    found = text.find(after, hi, hi + a + slack)
    return found + a if found >= 0 else hi + a


def _more_copies_around(
    text: str, lo: int, hi: int, old_text: str, context: tuple[str, str]
) -> bool:
    """Whether the text around the point holds more copies of old_text than the context did
    right after the edit: a duplicate line deleted beside its twin is already "adjacent" to a
    copy, and only a copy added since says the deleted text came back."""
    before, after = context
    slack = 2 * len(old_text)
    start = _anchor_start(text, lo, before, slack)
    end = _anchor_end(text, hi, after, slack)
    return text[start:end].count(old_text) > (before + after).count(old_text)


def observe_hunk(
    text: str,
    old_text: str,
    new_text: str,
    span: tuple[int, int] | None,
    context: tuple[str, str] | None = None,
) -> HunkObservation:
    """Read a hunk's region out of the current text. `context`: the text before and after the
    region right after the edit; without it, a pure deletion's old text right beside the point
    counts as back (as in rules version 1), since nothing says whether that copy was there."""
    if span is None:
        return HunkObservation(old_text, new_text, None)
    lo, hi = span
    region_text = text[lo:hi]
    adjacent = False
    if not new_text and old_text:
        if context is not None:
            adjacent = _more_copies_around(text, lo, hi, old_text, context)
        else:
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


def _removed(kept_share: float, solid_inserted: int, novel: int) -> bool:
    """The agent's text is gone from the hunk with nothing substantial in its place."""
    if kept_share >= UNDONE_RETENTION:
        return False
    if solid_inserted < SUBSTANTIAL_CHARS:
        # Too little was inserted for its retention to mean much: only an emptied region says
        # the agent's text is gone.
        return novel == 0
    return novel < SUBSTANTIAL_CHARS


@lru_cache(maxsize=4096)
def _solid_inserted(old_text: str, new_text: str) -> int:
    mask = inserted_mask(old_text, new_text)
    return sum(m and not c.isspace() for c, m in zip(new_text, mask, strict=True))


def measure(hunks: Sequence[HunkObservation]) -> Measurement:
    """Combine a proposal's hunks: similarity weighted by size, retention over all inserted
    characters, old text back (or agent's text removed) only when so in every observed hunk."""
    observed = [h for h in hunks if h.region_text is not None]
    if not observed:
        return Measurement(0.0, 0.0, False, 0, len(hunks))
    total_weight = 0
    weighted_similarity = 0.0
    inserted_total = 0
    kept_total = 0.0
    backs = []
    removals = []
    novel_total = 0
    solid_total = 0
    for h in observed:
        assert h.region_text is not None
        back = _old_back(h)
        backs.append(back)
        novel = 0 if back else novel_count(h.old_text, h.new_text, h.region_text)
        novel_total += novel
        if h.new_text:
            weight = max(len(h.new_text), 1)
            sim = similarity(h.new_text, h.region_text)
            inserted = inserted_count(h.old_text, h.new_text)
            share = retention(h.old_text, h.new_text, h.region_text)
            kept = share * inserted
            solid = _solid_inserted(h.old_text, h.new_text)
            solid_total += solid
            removals.append(back or _removed(share, solid, novel))
        else:
            # A pure deletion is intact while its old text stays away and nothing substantial
            # is written in its place.
            weight = max(len(h.old_text), 1)
            intact = not back and novel < SUBSTANTIAL_CHARS
            sim = 1.0 if intact else 0.0
            inserted = weight
            kept = 0.0 if back else float(weight)
            removals.append(back)
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
        removed=all(removals),
        novel_chars=novel_total,
        inserted_chars=solid_total,
    )


def decide(state: State, measurement: Measurement | None) -> tuple[Outcome, str]:
    """The outcome a proposal shows given its state and what was measured; with a reason."""
    if state is State.REJECTED:
        return Outcome.REJECTED, "declined before it was applied"
    if state is State.FAILED:
        return Outcome.FAILED, "the tool call failed: nothing was written"
    if state is State.SHOWN:
        return Outcome.PENDING, "shown, not decided"
    if measurement is None or measurement.lost:
        return Outcome.LOST, "region could not be observed"
    if measurement.old_back:
        return Outcome.UNDONE, "old text back"
    if measurement.removed:
        return Outcome.UNDONE, "agent's text removed"
    if measurement.similarity < KEPT_SIMILARITY and measurement.novel_chars >= SUBSTANTIAL_CHARS:
        gone = measurement.retention < UNDONE_RETENTION
        if gone or measurement.inserted_chars < SUBSTANTIAL_CHARS:
            return Outcome.EDITED, "rewritten"
    if measurement.similarity >= KEPT_SIMILARITY:
        return Outcome.KEPT, f"similarity {measurement.similarity:.2f} >= {KEPT_SIMILARITY:.2f}"
    return Outcome.EDITED, f"similarity {measurement.similarity:.2f} < {KEPT_SIMILARITY:.2f}"
