"""Filling the outbox: settled episodes of opted-in workspaces, projected, as new revisions.

A cheap fingerprint per episode (when it settled, how many checkpoints were observed and when
last, how many proposals and test runs, plus the workspace's level and globs) says whether it may
have changed since it was last projected; only those are loaded and anonymized again. A new
revision is queued only when the projection's content hash differs from the newest revision's,
so a late check that changes nothing visible at the chosen level sends nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from capture.episodes import load_episodes
from capture.store import Store
from sync.anonymize.pipeline import Anonymizer, Projection, content_hash, dumps
from sync.outbox import Outbox, next_revision
from sync.settings import OptIn, SyncSettings

__all__ = ["RefreshReport", "changed_episodes", "project", "refresh"]

CHUNK = 500

_FINGERPRINTS = """
SELECT e.id, w.root,
  coalesce(e.settled_at, '') || '|' || coalesce(e.ended_at, '') || '|' || coalesce(e.model, '')
  || '|' || length(coalesce(e.prompt, ''))
  || '|' || (SELECT count(*) || ':' || coalesce(max(p.settled_at), '') || ':'
             || coalesce(sum(length(p.outcome)), '')
             FROM proposals p WHERE p.episode_id = e.id)
  || '|' || (SELECT count(*) || ':' || coalesce(max(c.observed_at), '')
             FROM proposals p JOIN checkpoints c ON c.proposal_id = p.id
             WHERE p.episode_id = e.id AND c.observed_at IS NOT NULL)
  || '|' || (SELECT count(*) FROM episode_test_runs l WHERE l.episode_id = e.id) AS fingerprint,
  s.fingerprint AS seen
FROM episodes e JOIN workspaces w ON w.id = e.workspace_id
LEFT JOIN sync_episodes s ON s.episode_id = e.id
WHERE e.settled_at IS NOT NULL
"""


@dataclass(slots=True)
class RefreshReport:
    considered: int = 0
    queued: int = 0  # first revisions
    revised: int = 0  # later revisions of episodes already queued or sent
    unchanged: int = 0
    excluded: int = 0
    quarantined: int = 0


def changed_episodes(store: Store, settings: SyncSettings) -> list[tuple[str, OptIn, str]]:
    """(episode id, its opt-in, fingerprint) of settled episodes in opted-in workspaces that
    were never projected, or may have changed since."""
    out = []
    for episode_id, root, fingerprint, seen in store.conn.execute(_FINGERPRINTS):
        opt_in = settings.opt_in_for(root)
        if opt_in is None:
            continue
        full = f"{fingerprint}|{opt_in.key}"
        if full != seen:
            out.append((episode_id, opt_in, full))
    return out


def project(anonymizer: Anonymizer, episode: dict[str, Any], opt_in: OptIn) -> Projection:
    return anonymizer.project(episode, opt_in.policy)


def refresh(
    store: Store,
    settings: SyncSettings,
    anonymizer: Anonymizer,
    *,
    now: float,
    progress: Callable[[int, int], None] | None = None,
    chunk: int = CHUNK,
) -> RefreshReport:
    report = RefreshReport()
    todo = changed_episodes(store, settings)
    report.considered = len(todo)
    outbox = Outbox(store.conn)
    for i in range(0, len(todo), chunk):
        part = todo[i : i + chunk]
        _refresh_chunk(store, outbox, anonymizer, part, now, report)
        if progress is not None:
            progress(min(i + chunk, len(todo)), len(todo))
    return report


def _refresh_chunk(
    store: Store,
    outbox: Outbox,
    anonymizer: Anonymizer,
    part: Sequence[tuple[str, OptIn, str]],
    now: float,
    report: RefreshReport,
) -> None:
    ids = [episode_id for episode_id, _, _ in part]
    episodes = {e["id"]: e for e in load_episodes(store, ids=ids)}
    # The heavy part, outside the write lock.
    projected: list[tuple[str, str, OptIn, Projection, str | None, str]] = []
    for episode_id, opt_in, fingerprint in part:
        episode = episodes.get(episode_id)
        if episode is None:
            continue
        projection = project(anonymizer, episode, opt_in)
        serialized = dumps(projection.episode) if projection.episode is not None else None
        digest = content_hash(serialized) if serialized is not None else "excluded"
        projected.append((episode_id, fingerprint, opt_in, projection, serialized, digest))
    with store.transaction():
        latest = outbox.latest(ids)
        for episode_id, fingerprint, opt_in, projection, serialized, digest in projected:
            store.conn.execute(
                """INSERT INTO sync_episodes (episode_id, fingerprint, content_hash, revision)
                   VALUES (?, ?, ?, ?) ON CONFLICT (episode_id) DO UPDATE SET
                   fingerprint = excluded.fingerprint, content_hash = excluded.content_hash,
                   revision = excluded.revision""",
                (
                    episode_id,
                    fingerprint,
                    digest,
                    latest.get(episode_id, (0, ""))[0],
                ),
            )
            if serialized is None:
                # Every file it touched is excluded now: what was waiting to go stays home.
                store.conn.execute(
                    """UPDATE sync_outbox SET state = 'superseded' WHERE episode_id = ?
                       AND +state = 'queued'""",
                    (episode_id,),
                )
                report.excluded += 1
                continue
            revision = next_revision(latest.get(episode_id), digest)
            if revision is None:
                report.unchanged += 1
                continue
            quarantine = "; ".join(projection.quarantine) or None
            outbox.add(
                episode_id,
                revision,
                level=opt_in.level.value,
                content_hash=digest,
                payload=None if quarantine else serialized,
                now=now,
                quarantine=quarantine,
            )
            store.conn.execute(
                "UPDATE sync_episodes SET revision = ? WHERE episode_id = ?",
                (revision, episode_id),
            )
            if quarantine:
                report.quarantined += 1
            elif revision == 1:
                report.queued += 1
            else:
                report.revised += 1
