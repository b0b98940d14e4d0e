"""What a label rests on: the evidence behind an outcome, and who made the change it judges.

Unknown is not negative. A label that rests on missing evidence is `lost` with a reason, never
`rejected` or `undone`: `rejected` needs a positive sign of a refusal (the agent reports a
permission denial, the user's interruption, "patch rejected by user"); a tool call that failed
is `failed` with the kind of its error; an imported pre-event with no post-event is `lost`
(`no-post-event`); an imported edit whose workspace is not on this machine is `lost`
(`workspace-absent`).

Evidence kinds (`EvidenceKind`), from the strongest:

- `buffer`: measured in the editor's buffer (unsaved text included) by the process holding it
- `disk-watched`: measured on disk at (or within `LATE_AFTER_S` of) the time it describes
- `disk-late`: measured on disk later than that: the state at the due time is inferred
- `git`: read from a commit in the repository's history
- `payload`: what the agent's own hook payload says (a failure, a refusal, a missing post-event)
- `import`: judged while backfilling a transcript or a log, against the files as they are now

`seen` is True when the evidence was observed at the moment the label describes, False when
it is inferred (a late read, the file now standing for the file then, a missing record).

Plain functions over plain values; the store and the contract call them when they read a
proposal back, so labels recorded before this module existed get their evidence too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from capture.model import Outcome, State

__all__ = [
    "LATE_AFTER_S",
    "NO_POST_EVENT",
    "REFUSED",
    "WORKSPACE_ABSENT",
    "Author",
    "Evidence",
    "EvidenceKind",
    "error_kind",
    "evidence_of",
    "Label",
    "is_refusal",
    "label_of",
    "not_applied",
    "undone_reason",
]

#: `lost` reasons for labels that rest on missing evidence.
NO_POST_EVENT = "no-post-event"
WORKSPACE_ABSENT = "workspace-absent"
#: The reason of a `rejected` label the agent's own report of a refusal stands behind.
REFUSED = "refused by the user"

#: A disk read later than this after a checkpoint's due time no longer shows that moment.
LATE_AFTER_S = 5.0


class EvidenceKind(StrEnum):
    BUFFER = "buffer"
    DISK_WATCHED = "disk-watched"
    DISK_LATE = "disk-late"
    PAYLOAD = "payload"
    IMPORT = "import"
    GIT = "git"


class Author(StrEnum):
    """Who made the change a label judges."""

    AGENT = "agent"
    USER = "user"
    TOOL = "tool"
    GIT = "git"


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: EvidenceKind
    seen: bool


# What agents write when the user (or a permission rule) refused the call. Matched on the
# error text as the agent reports it; anything else is a failure of the tool.
_REFUSAL = re.compile(
    r"rejected by (the )?user|user (doesn't|does not|didn't|did not) want to proceed"
    r"|tool use was rejected|permission (was )?denied by|denied by (the )?user"
    r"|^denied$|^declined$|user declined|interrupted by (the )?user|request interrupted",
    re.IGNORECASE,
)

_ERROR_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("not-found", re.compile(r"not found|no match|did not match|could not find|no such", re.I)),
    ("ambiguous", re.compile(r"multiple (matches|occurrences)|found \d+ matches|not unique", re.I)),
    ("not-read", re.compile(r"has not been read|read it first|must read", re.I)),
    ("stale", re.compile(r"modified since|has been (modified|changed)|changed on disk", re.I)),
    ("permission", re.compile(r"permission|not permitted|read-only|access denied", re.I)),
    ("timeout", re.compile(r"timed? ?out", re.I)),
    ("invalid", re.compile(r"invalid|malformed|parse|syntax", re.I)),
)


def is_refusal(error: str | None) -> bool:
    """Whether a failed call's error text is a refusal (the user's, or a permission rule's)."""
    return bool(error) and _REFUSAL.search(error.strip()) is not None  # type: ignore[union-attr]


def error_kind(error: str | None) -> str:
    """The kind of a tool's failure, from its error text: `not-found` (the text to replace is
    not in the file), `ambiguous`, `not-read`, `stale`, `permission`, `timeout`, `invalid`, or
    `error` when the text says nothing we know (or there is none)."""
    if error:
        for kind, pattern in _ERROR_KINDS:
            if pattern.search(error):
                return kind
    return "error"


def not_applied(error: str | None) -> tuple[State, str, str]:
    """The state, reason and decider of a tool call that did not write: `rejected` only when its
    error is a refusal, else `failed` with the error's kind."""
    if is_refusal(error):
        return State.REJECTED, REFUSED, "user"
    return State.FAILED, error_kind(error), "tool-failure"


def evidence_of(
    *,
    outcome: str,
    reason: str | None,
    via: str | None,
    late_seconds: float | None,
    backfilled: bool,
) -> Evidence:
    """The evidence behind a proposal's label, from what decided it: the way its deciding
    checkpoint was read (`via`: editor, disk, disk-watched, disk-late, git, import; None when
    no checkpoint decided it) and how late that read was."""
    if reason == NO_POST_EVENT:  # what the payloads do not say
        return Evidence(EvidenceKind.PAYLOAD, False)
    if outcome in (Outcome.REJECTED, Outcome.FAILED):
        return Evidence(EvidenceKind.IMPORT if backfilled else EvidenceKind.PAYLOAD, True)
    if reason == WORKSPACE_ABSENT:
        return Evidence(EvidenceKind.IMPORT, False)
    if via == "editor":
        return Evidence(EvidenceKind.BUFFER, True)
    if via == "git":
        return Evidence(EvidenceKind.GIT, True)
    if via == "disk-watched":  # rebuilt from the changes the watcher recorded as they happened
        return Evidence(EvidenceKind.DISK_WATCHED, True)
    if via == "disk-late":  # nothing recorded the file at the due time: read when it could be
        return Evidence(EvidenceKind.DISK_LATE, False)
    if via == "disk":
        late = late_seconds is not None and late_seconds > LATE_AFTER_S
        return Evidence(EvidenceKind.DISK_LATE if late else EvidenceKind.DISK_WATCHED, not late)
    if via is not None or backfilled:
        return Evidence(EvidenceKind.IMPORT, False)
    if outcome == Outcome.LOST:
        return Evidence(EvidenceKind.PAYLOAD, False)
    return Evidence(EvidenceKind.DISK_LATE, False)


_KINDS = frozenset(k.value for k in EvidenceKind)
_AUTHORS = frozenset(a.value for a in Author)


@dataclass(frozen=True, slots=True)
class Label:
    """Everything a label says about itself beyond the outcome and its reason."""

    evidence: EvidenceKind
    seen: bool
    author: Author | None
    undone_by: str | None


def label_of(
    *,
    state: str,
    outcome: str,
    reason: str | None,
    backfilled: bool,
    checkpoints: Sequence[tuple[str | None, str | None, float | None]],
    author: str | None,
    evidence: str | None = None,
) -> Label:
    """A proposal's label evidence from its row and its observed checkpoints (each: outcome,
    via, late seconds; shortest window first). The deciding checkpoint is the last one whose
    outcome is the proposal's. `author`: who last changed its regions, as recorded (None:
    nobody seen); `evidence`: a kind its writer recorded, which wins."""
    deciding = [c for c in checkpoints if c[0] is not None and c[0] == outcome]
    via, late = (deciding[-1][1], deciding[-1][2]) if deciding else (None, None)
    found = evidence_of(
        outcome=outcome, reason=reason, via=via, late_seconds=late, backfilled=backfilled
    )
    if evidence in _KINDS:
        found = Evidence(EvidenceKind(evidence), found.seen)
    who = Author(author) if author is not None and author in _AUTHORS else None
    if outcome == Outcome.KEPT:
        who = Author.AGENT  # the lines are the agent's, unchanged
    elif outcome == Outcome.REJECTED:
        who = Author.USER
    elif outcome == Outcome.FAILED:
        who = Author.TOOL
    elif outcome == Outcome.EDITED and who is None and via in ("editor", "disk"):
        who = Author.USER  # a change no tool call covers
    elif outcome in (Outcome.LOST, Outcome.PENDING) or state == State.SHOWN:
        who = None
    undone_by = undone_reason(who) if outcome == Outcome.UNDONE else None
    return Label(found.kind, found.seen, who, undone_by)


def undone_reason(author: str | None) -> str:
    """How an `undone` label names who undid the edit."""
    if author == Author.AGENT:
        return "agent-reverted"
    if author == Author.USER:
        return "user-reverted"
    return "unknown"
