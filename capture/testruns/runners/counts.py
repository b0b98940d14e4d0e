"""What a runner's output says about a run: counts, and the failing tests it names."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["RunCounts", "count", "unique"]


@dataclass(slots=True)
class RunCounts:
    """A count is None when the output does not say it: `go test` without `-v` names only
    the failures, so its passed and skipped counts are unknown, never 0."""

    runner: str
    passed: int | None = 0
    failed: int | None = 0
    errors: int | None = 0
    skipped: int | None = 0
    failing_ids: list[str] = field(default_factory=list)

    @property
    def counts_known(self) -> bool:
        return None not in (self.passed, self.failed, self.errors, self.skipped)

    @property
    def total(self) -> int | None:
        """All four counts added, or None when one of them is unknown."""
        if self.passed is None or self.failed is None:
            return None
        if self.errors is None or self.skipped is None:
            return None
        return self.passed + self.failed + self.errors + self.skipped


def count(pattern: str, text: str) -> int:
    """The numbers the pattern's one group captures, added up."""
    return sum(int(m) for m in re.findall(pattern, text, re.MULTILINE))


def unique(ids: list[str]) -> list[str]:
    """The ids in first-seen order, each once (runners repeat failures in a closing list)."""
    return list(dict.fromkeys(i for i in ids if i))
