"""The words an episode is written in: outcomes, states, tiers and their reasons, test-run
evidence, levels, and how each field leaves the machine.

Each word has one definition. Where a decision owns it (the outcome rules, the tier rules, the
test-run linking), it is defined there and named here; what no decision owns (the sharing
levels, hunk statuses, split sides) is defined here and imported by whoever uses it. Nothing in
this module needs msgspec: the collector and the CLI read these words without loading the
contract's types.
"""

from __future__ import annotations

from enum import StrEnum

from capture.edits.evidence import Author, EvidenceKind
from capture.model import Outcome, State
from capture.testruns.identity import MERGED_SOURCES, SHELL_SOURCE
from capture.testruns.linking import FAILING, INCOMPLETE, LINK_LATE, LINK_OPEN, NO_TESTS, PASSING
from capture.tiers.model import Tier
from capture.tiers.rules import KNOWN_REASONS

__all__ = [
    "EPISODE_SCHEMA",
    "EXPORT_SCHEMA",
    "LEVELS",
    "RUN_SOURCES",
    "SHARE_RULES",
    "SUPPORTED_SCHEMAS",
    "TIERS",
    "TIER_REASONS",
    "Author",
    "CheckpointVia",
    "EvidenceKind",
    "HunkStatus",
    "Level",
    "Outcome",
    "ResultsFrom",
    "RevertKind",
    "RunLink",
    "RunStatus",
    "Share",
    "Split",
    "State",
    "Tier",
    "Transition",
    "UndoneBy",
]

#: The episode JSON's name and version: fields are only ever added within a version.
EPISODE_SCHEMA = "agent-capture/episode@1"
#: One line of the canonical export: the episode JSON with what the export adds.
EXPORT_SCHEMA = "agent-capture/export-episode@1"
#: The episode versions a collector of this release stores.
SUPPORTED_SCHEMAS = (EPISODE_SCHEMA,)

#: Training-use tiers, best first (`capture.tiers.model.Tier`).
TIERS: tuple[str, ...] = tuple(t.value for t in Tier)
#: Every reason the tier rule table writes (`capture.tiers.rules.KNOWN_REASONS`): shared as
#: they are at every level; any other reason is text.
TIER_REASONS: frozenset[str] = KNOWN_REASONS


class Level(StrEnum):
    """What an anonymized episode may carry, least first (the sync section of the manual)."""

    METRICS = "metrics"
    REDACTED = "redacted"
    FULL = "full"

    @property
    def carries_text(self) -> bool:
        return self is not Level.METRICS


LEVELS: tuple[str, ...] = tuple(level.value for level in Level)


class HunkStatus(StrEnum):
    """Whether a hunk's region is still followed in its file."""

    TRACKING = "tracking"
    LOST = "lost"


class RunStatus(StrEnum):
    """What a test run says (`capture.testruns.linking.run_status`)."""

    PASSING = PASSING
    FAILING = FAILING
    INCOMPLETE = INCOMPLETE
    NO_TESTS = NO_TESTS


class RunLink(StrEnum):
    """Why a run is evidence for an episode (`capture.testruns.linking.episodes_to_link`)."""

    OPEN = LINK_OPEN
    LATE = LINK_LATE


class Transition(StrEnum):
    """How an episode's runs moved, from its first run with a verdict to its last before it
    settled (`capture.testruns.linking.summarize_tests`)."""

    FAILING_TO_PASSING = f"{FAILING}_to_{PASSING}"
    PASSING_TO_FAILING = f"{PASSING}_to_{FAILING}"
    STILL_PASSING = f"still_{PASSING}"
    STILL_FAILING = f"still_{FAILING}"


class ResultsFrom(StrEnum):
    """Where a run's test counts came from (none: its exit code alone)."""

    PLUGIN = "plugin"
    JUNIT = "junit"
    SUMMARY = "summary"


#: The sources our own code records a test run from: a run's `seen_by` holds these only.
RUN_SOURCES: frozenset[str] = frozenset({SHELL_SOURCE, *MERGED_SOURCES, "editor", "import"})


class CheckpointVia(StrEnum):
    """How a checkpoint read the region (importers may name their own source)."""

    DISK = "disk"
    DISK_WATCHED = "disk-watched"  # rebuilt from the changes the watcher recorded, on time
    DISK_LATE = "disk-late"  # read on disk after its due time: nothing recorded it then
    EDITOR = "editor"
    GIT = "git"


class UndoneBy(StrEnum):
    """Who undid an `undone` proposal (`capture.edits.evidence.undone_reason`): an agent's own
    revert is not the user's verdict."""

    AGENT = "agent-reverted"
    USER = "user-reverted"
    UNKNOWN = "unknown"


class RevertKind(StrEnum):
    """How a proposal's committed lines were taken back (`capture.tiers.late_signals`)."""

    REVERT_COMMIT = "revert commit"
    LINES_BACK = "lines back"


class Split(StrEnum):
    """An exported episode's side, from a hash of its id (`capture.export.split`)."""

    TRAIN = "train"
    EVAL = "eval"


class Share(StrEnum):
    """How a field of the episode leaves the machine (`sync.anonymize`), per level. The
    anonymizer reads its field lists from these marks; `SHARE_RULES` says each in words."""

    ID = "id"
    COPIED = "copied"
    TIME = "time"
    VOCABULARY = "vocabulary"
    TEXT = "text"
    HASHED = "hashed"
    HASHED_ALWAYS = "hashed-always"
    PATH = "path"
    COMMIT = "commit"
    RUNNER = "runner"
    REASONS = "reasons"
    PARTS = "parts"
    BY_VALUE = "by-value"


#: Each sharing rule in words (the reference page's legend).
SHARE_RULES: dict[Share, str] = {
    Share.ID: "as it is, at every level (an id, or the schema's name)",
    Share.COPIED: "as it is, at every level (a string is read again by the second secret scan)",
    Share.TIME: "a time our own code wrote, as it is, at every level",
    Share.VOCABULARY: "a word of its vocabulary as it is, at every level; any other value dropped",
    Share.TEXT: "redacted and full: secrets replaced, identity scrubbed; metrics: left out "
    "(null, or a count beside it)",
    Share.HASHED: "full: as it is; metrics and redacted: a keyed hash",
    Share.HASHED_ALWAYS: "a keyed hash at every level",
    Share.PATH: "metrics: every name hashed, extension kept; redacted: directories hashed; "
    "full: scrubbed like text",
    Share.COMMIT: "a flag (was there one) at every level; the commit itself at redacted and full, "
    "scrubbed like text",
    Share.RUNNER: "as it is; when the source named none, the command's first word if it names a "
    "test runner",
    Share.REASONS: "the tier rules' own reasons as they are, at every level; any other reason as "
    "text",
    Share.PARTS: "a part of the episode: each of its fields by its own rule",
    Share.BY_VALUE: "numbers and flags at every level, text at redacted and full (scrubbed): "
    "what a field gets until a rule above names it",
}
