"""Personal statistics: `capture report`, its JSON and HTML, and today's figures for status bars.

Figures are pure functions (`figures`) over plain rows (`rows`); `queries` fetches those rows
(aggregated in SQL by `capture.store.report_queries`, mostly from the rollups in
`capture.store.proposal_rollups`; no SQL is written here); `terminal`, `json_out`, `html` and
`svg` render them. Importing this package is cheap: nothing here imports rich.

Imports the store (`capture.store`: its queries, rollups and the episode JSON), the checkpoint
windows (`capture.edits.windows`), the tier words (`capture.tiers`, for `tier_mix`) and the
shared modules, nothing else: it records nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from capture.store.database import Store

__all__ = ["today_stats"]


def today_stats(store: Store, now: float, **options: Any) -> dict[str, Any]:
    """Today's figures (local midnight until `now`), JSON-ready: see
    `capture.report.today.today_stats` for the options."""
    from capture.report.today import today_stats as compute

    return compute(store, now, **options)
