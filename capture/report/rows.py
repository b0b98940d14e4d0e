"""The rows `capture.report.queries` returns: what SQL aggregates, before any figure is made.

Kept apart from `capture.report.figures` so that the queries and the pure functions meet on plain
data: each row is one group's sums in one period (`current` or the one before), keyed by what
the SQL grouped by.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Literal

__all__ = [
    "CountRow",
    "Counts",
    "EpisodeTestRow",
    "Key",
    "LostReasonRow",
    "Rate",
    "ReportRows",
    "RetentionRow",
    "TestRunRow",
    "UndoneFileRow",
]


#: What a group is keyed by: an agent, model, language or workspace name, or a day or week.
Key = str | int


@dataclass(frozen=True, slots=True)
class Rate:
    numerator: int
    denominator: int

    @property
    def value(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None


@dataclass(frozen=True, slots=True)
class Counts:
    n: int = 0
    shown: int = 0
    applied: int = 0
    rejected: int = 0
    kept: int = 0
    edited: int = 0
    undone: int = 0
    lost: int = 0
    chars_added: int = 0
    lines_added: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(*(getattr(self, f) + getattr(other, f) for f in _COUNT_NAMES))

    @property
    def settled(self) -> int:
        return self.kept + self.edited + self.undone + self.lost

    @property
    def pending(self) -> int:
        return max(self.applied - self.settled, 0)

    @property
    def acceptance(self) -> Rate:
        return Rate(self.applied, self.applied + self.rejected)

    def outcome_rate(self, outcome: Literal["kept", "edited", "undone", "lost"]) -> Rate:
        return Rate(getattr(self, outcome), self.settled)

    def observed_rate(self, outcome: Literal["kept", "edited", "undone"]) -> Rate:
        """Over the settled proposals that could be observed: a lost one says nothing of what
        the user did with it."""
        return Rate(getattr(self, outcome), self.settled - self.lost)


_COUNT_NAMES = tuple(f.name for f in fields(Counts))


@dataclass(frozen=True, slots=True)
class CountRow:
    """One group's proposal counts in one period (`current` or the one before)."""

    key: Key
    current: bool
    counts: Counts


@dataclass(frozen=True, slots=True)
class RetentionRow:
    key: Key
    current: bool
    window: str
    seconds: float
    observed: int = 0
    lost: int = 0
    measured_chars: int = 0
    survived_chars: float = 0.0


@dataclass(frozen=True, slots=True)
class TestRunRow:
    __test__ = False  # not a pytest class, whatever its name

    key: Key
    current: bool
    runs: int = 0
    with_result: int = 0
    passed: int = 0


@dataclass(frozen=True, slots=True)
class EpisodeTestRow:
    """Episodes with linked test runs of one group and period that share a first-test time
    (`delay`: seconds from the first edit to the first run, rounded; None when unknown): how
    many, how many had a failing run, how many were repaired."""

    key: Key
    current: bool
    delay: float | None
    episodes: int = 0
    failing: int = 0
    repaired: int = 0


@dataclass(frozen=True, slots=True)
class UndoneFileRow:
    key: Key
    workspace: str
    path: str
    undone: int
    settled: int


@dataclass(frozen=True, slots=True)
class LostReasonRow:
    """How many proposals of the period are `lost`, for one reason."""

    reason: str
    count: int


@dataclass(slots=True)
class ReportRows:
    """Everything one grouping of one report needs. `test_runs` and `episode_tests` are None
    when test runs cannot be split that way (by language: a run covers many files)."""

    counts: list[CountRow] = field(default_factory=list)
    retention: list[RetentionRow] = field(default_factory=list)
    test_runs: list[TestRunRow] | None = field(default_factory=list)
    episode_tests: list[EpisodeTestRow] | None = field(default_factory=list)
    undone_files: list[UndoneFileRow] = field(default_factory=list)
    lost_reasons: list[LostReasonRow] = field(default_factory=list)
