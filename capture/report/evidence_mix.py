"""The evidence mix: which evidence the labels of a period rest on (`buffer`, `disk-watched`,
`disk-late`, `payload`, `import`, `git`), as shares, and per outcome; how many were seen and
how many inferred.

`fetch_evidence_counts` reads the label inputs (`capture.store.evidence_rows`), `evidence_mix`
folds them with `capture.edits.evidence.label_of` (pure); `evidence_mix_json` and
`render_evidence_mix` show them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from capture.connection import sqlite3
from capture.edits.evidence import EvidenceKind, label_of
from capture.report.queries import Scope
from capture.store.evidence_rows import LabelInputs, label_input_counts

__all__ = [
    "EvidenceMix",
    "evidence_mix",
    "evidence_mix_json",
    "fetch_evidence_counts",
    "render_evidence_mix",
]


@dataclass(slots=True)
class EvidenceMix:
    by_kind: Counter[str] = field(default_factory=Counter)
    by_outcome: dict[str, Counter[str]] = field(default_factory=dict)
    seen: int = 0
    inferred: int = 0

    @property
    def total(self) -> int:
        return sum(self.by_kind.values())

    def share(self, kind: str) -> float | None:
        return None if self.total == 0 else self.by_kind[kind] / self.total


def fetch_evidence_counts(conn: sqlite3.Connection, scope: Scope) -> list[LabelInputs]:
    return label_input_counts(conn, scope.since, scope.until, scope.workspace_id)


def evidence_mix(rows: Iterable[LabelInputs]) -> EvidenceMix:
    """Counts by evidence kind (labels still pending are left out: they rest on nothing yet)."""
    mix = EvidenceMix()
    for state, outcome, reason, backfilled, author, evidence, via, late, n in rows:
        if outcome == "pending":
            continue
        label = label_of(
            state=state,
            outcome=outcome,
            reason=reason,
            backfilled=backfilled,
            checkpoints=[(outcome, via, late)] if via is not None else [],
            author=author,
            evidence=evidence,
        )
        mix.by_kind[label.evidence.value] += n
        mix.by_outcome.setdefault(outcome, Counter())[label.evidence.value] += n
        if label.seen:
            mix.seen += n
        else:
            mix.inferred += n
    return mix


def evidence_mix_json(mix: EvidenceMix) -> dict[str, Any]:
    return {
        "labels": mix.total,
        "seen": mix.seen,
        "inferred": mix.inferred,
        "share": {k.value: mix.share(k.value) for k in EvidenceKind},
        "by_outcome": {
            outcome: {k.value: counts[k.value] for k in EvidenceKind}
            for outcome, counts in sorted(mix.by_outcome.items())
        },
    }


def render_evidence_mix(mix: EvidenceMix, console: Any) -> None:
    """The evidence mix as a table under the report (nothing when no label is settled)."""
    if mix.total == 0:
        return
    from rich.table import Table

    table = Table(
        title=f"Evidence behind the labels ({mix.seen} seen, {mix.inferred} inferred)",
        title_justify="left",
        box=None,
    )
    table.add_column("outcome")
    for k in EvidenceKind:
        table.add_column(k.value, justify="right")
    for outcome, counts in sorted(mix.by_outcome.items()):
        table.add_row(outcome, *(str(counts[k.value]) for k in EvidenceKind))
    table.add_row("share", *(f"{mix.share(k.value) or 0:.0%}" for k in EvidenceKind))
    console.print()
    console.print(table)
