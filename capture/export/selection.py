"""The episodes an export reads, streamed out of the store a page at a time, oldest first.

Each page is the store's episode JSON (`load_episodes`) plus what an export needs beside it:
each proposal's `language`, `tier` (the current decision, or null when none was made yet) and,
for the canonical export, `tier_history`; and per hunk a `hunk_context`: the file's text around
the edit before it was made, the region's text now (`final`) and its lines, when the region is
still tracked. Memory is that of one page, whatever the number of episodes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from capture.report.languages import OTHER, language_of
from capture.store.database import Store
from capture.store.episodes import iso, load_episodes
from capture.store.export_rows import count_selected, hunk_contexts, selected_page
from capture.store.tier_rows import current_tiers, tier_history
from capture.tiers.model import TierDecision

__all__ = ["Selection", "count_episodes", "stream_episodes"]


@dataclass(frozen=True, slots=True)
class Selection:
    since: float | None = None
    workspace: str | None = None
    #: with each tier, every decision before it (the canonical export's `tier_history`)
    history: bool = False
    page: int = 500


def count_episodes(store: Store, selection: Selection) -> int:
    return count_selected(store.conn, since=selection.since, workspace=selection.workspace)


def stream_episodes(store: Store, selection: Selection) -> Iterator[dict[str, Any]]:
    after: tuple[float, str] | None = None
    while True:
        rows = selected_page(
            store.conn,
            since=selection.since,
            workspace=selection.workspace,
            after=after,
            size=selection.page,
        )
        if not rows:
            return
        after = (rows[-1][1], rows[-1][0])
        ids = [r[0] for r in rows]
        # load_episodes gives newest first: reversed, the page is in keyset order
        episodes = load_episodes(store, ids=ids)[::-1]
        _add_context(store, episodes)
        _add_tiers(store, episodes, ids, selection.history)
        yield from episodes
        if len(rows) < selection.page:
            return


def _add_context(store: Store, episodes: list[dict[str, Any]]) -> None:
    by_id = {p["id"]: p for e in episodes for p in e["proposals"]}
    for p in by_id.values():
        p["language"] = _language(p.get("file") or "")
        p["hunk_context"] = [{} for _ in p["hunks"]]
    for pid, idx, before, after, status, final, line in hunk_contexts(store.conn, list(by_id)):
        contexts = by_id[pid]["hunk_context"]
        if idx >= len(contexts):
            continue
        context: dict[str, Any] = {"before": before, "after": after, "status": status}
        if final is not None and line is not None:
            context["final"] = final
            context["start_line"] = int(line)
            context["end_line"] = int(line) + final.rstrip("\n").count("\n")
        contexts[idx] = context


def _language(path: str) -> str | None:
    language = language_of(path)
    return None if language == OTHER else language


def _decision(decision: TierDecision | None) -> dict[str, Any] | None:
    if decision is None:
        return None
    return {
        "tier": decision.tier.value,
        "reasons": list(decision.reasons),
        "rules_version": decision.rules_version,
    }


def _history(store: Store, subject: str, subject_id: str) -> list[dict[str, Any]]:
    return [
        {**(_decision(change.decision) or {}), "decided_at": iso(change.decided_at)}
        for change in tier_history(store.conn, subject, subject_id)
    ]


def _add_tiers(store: Store, episodes: list[dict[str, Any]], ids: list[str], history: bool) -> None:
    pids = [p["id"] for e in episodes for p in e["proposals"]]
    episode_tiers = current_tiers(store.conn, "episode", ids)
    proposal_tiers = current_tiers(store.conn, "proposal", pids)
    for e in episodes:
        e["tier"] = _decision(episode_tiers.get(e["id"]))
        if history:
            e["tier_history"] = _history(store, "episode", e["id"])
        for p in e["proposals"]:
            p["tier"] = _decision(proposal_tiers.get(p["id"]))
            if history:
                p["tier_history"] = _history(store, "proposal", p["id"])
