"""Filling the outbox: settled episodes of opted-in workspaces, projected, as new revisions.

A cheap fingerprint per episode (when it settled, how many checkpoints were observed and when
last, how many proposals and test runs, plus the workspace's level and globs; read by
`sync.store.episode_rows`) says whether it may have changed since it was last projected; only
those are loaded and anonymized again. It also covers what the outcome rules write after an
episode settled without changing those counts: the proposals' and checkpoints' reasons, rules
versions and lateness, and a test run that a second source saw (`seen_by`, `shell_exit_code`, its
counts merged in). A new revision is queued only when the projection's content hash differs from
the newest revision's, so a late check that changes nothing visible at the chosen level sends
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capture.store.database import Store
from capture.store.episodes import load_episodes
from sync.anonymize.identity import Identity
from sync.anonymize.levels import Level
from sync.anonymize.pipeline import Anonymizer, Projection, content_hash
from sync.outbox import NewRow, Outbox, next_revision
from sync.settings import OptIn, SyncSettings, load_settings
from sync.store import episode_rows, outbox_rows
from sync.store.schema import open_store

__all__ = ["RefreshReport", "changed_episodes", "project", "project_chunk", "refresh"]

CHUNK = 500


@dataclass(slots=True)
class RefreshReport:
    considered: int = 0
    queued: int = 0  # first revisions
    revised: int = 0  # later revisions of episodes already queued or sent
    unchanged: int = 0
    excluded: int = 0
    quarantined: int = 0
    stale: int = 0  # projected under settings that changed before they were written: not queued


def changed_episodes(store: Store, settings: SyncSettings) -> list[tuple[str, OptIn, str]]:
    """(episode id, its opt-in, fingerprint) of settled episodes in opted-in workspaces that
    were never projected, or may have changed since."""
    out = []
    for episode_id, root, fingerprint, seen in episode_rows.fingerprints(store.conn):
        opt_in = settings.opt_in_for(root)
        if opt_in is None:
            continue
        full = f"{fingerprint}|{opt_in.key}"
        if full != seen:
            out.append((episode_id, opt_in, full))
    return out


def project(anonymizer: Anonymizer, episode: dict[str, Any], opt_in: OptIn) -> Projection:
    return anonymizer.project(episode, opt_in.policy)


#: (episode id, serialized projection or None when excluded, content hash, quarantine reasons)
Projected = tuple[str, str | None, str, tuple[str, ...]]

#: A backlog at least this large is anonymized by a pool of processes.
POOL_THRESHOLD = 2000


def refresh(
    store: Store,
    settings: SyncSettings,
    anonymizer: Anonymizer,
    *,
    now: float,
    progress: Callable[[int, int], None] | None = None,
    chunk: int = CHUNK,
    workers: int | None = None,
) -> RefreshReport:
    """Queue what changed. `workers` > 1: a backlog of at least POOL_THRESHOLD episodes is
    loaded and anonymized by that many processes (`[sync] workers`; see `anonymize_workers`),
    while this one writes the outbox; a smaller one is worth no pool's start-up."""
    report = RefreshReport()
    todo = changed_episodes(store, settings)
    report.considered = len(todo)
    outbox = Outbox(store.conn)
    chunks = [todo[i : i + chunk] for i in range(0, len(todo), chunk)]
    if workers is None or len(todo) < POOL_THRESHOLD:
        workers = 1
    done = 0
    for part, projected in _projections(store, anonymizer, chunks, workers):
        _write_chunk(store, outbox, part, projected, now, report)
        done += len(part)
        if progress is not None:
            progress(done, len(todo))
    return report


def _projections(
    store: Store,
    anonymizer: Anonymizer,
    chunks: list[list[tuple[str, OptIn, str]]],
    workers: int,
) -> Iterator[tuple[list[tuple[str, OptIn, str]], list[Projected]]]:
    """Each chunk with its projections, in order; computed here or by worker processes."""
    if workers <= 1 or len(chunks) <= 1:
        for part in chunks:
            yield part, project_chunk(store, anonymizer, part)
        return
    import multiprocessing

    # spawn, not fork: this process may run an upload thread, and a forked child would inherit
    # its locks mid-flight.
    context = multiprocessing.get_context("spawn")
    with context.Pool(
        workers,
        initializer=_worker_init,
        initargs=(str(store.path), anonymizer.salt, anonymizer.identity_names),
    ) as pool:
        tasks = [[(i, o.level.value, o.include, o.exclude) for i, o, _ in part] for part in chunks]
        for part, projected in zip(chunks, pool.imap(_worker_project, tasks), strict=True):
            yield part, projected


def project_chunk(
    store: Store, anonymizer: Anonymizer, part: Sequence[tuple[str, OptIn, str]]
) -> list[Projected]:
    episodes = {e["id"]: e for e in load_episodes(store, ids=[i for i, _, _ in part])}
    out: list[Projected] = []
    for episode_id, opt_in, _ in part:
        episode = episodes.get(episode_id)
        if episode is None:
            continue
        projection = project(anonymizer, episode, opt_in)
        serialized = projection.serialized if projection.episode is not None else None
        digest = content_hash(serialized) if serialized is not None else "excluded"
        out.append((episode_id, serialized, digest, projection.quarantine))
    return out


_worker: dict[str, Any] = {}


def _worker_init(db_path: str, salt: bytes, identity: Identity) -> None:
    _worker["store"] = open_store(Path(db_path))
    _worker["anonymizer"] = Anonymizer(salt, identity)


def _worker_project(
    task: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]],
) -> list[Projected]:
    part = [
        (i, OptIn("", Level(level), include, exclude), "") for i, level, include, exclude in task
    ]
    return project_chunk(_worker["store"], _worker["anonymizer"], part)


def _write_chunk(
    store: Store,
    outbox: Outbox,
    part: Sequence[tuple[str, OptIn, str]],
    projected: Sequence[Projected],
    now: float,
    report: RefreshReport,
) -> None:
    """One transaction per chunk; each kind of write is one statement over all its rows."""
    by_id = {episode_id: (opt_in, fingerprint) for episode_id, opt_in, fingerprint in part}
    seen: list[tuple[str, str, str, int]] = []
    excluded: list[str] = []
    rows: list[NewRow] = []
    with store.transaction():
        # The settings again, inside the write: a `sync disable` or a new level or glob that
        # came while this chunk was projected holds (the transactions are serialized), and
        # what was projected under the old settings is not queued; the next refresh decides.
        current = load_settings(store.conn)
        roots = episode_rows.roots(store.conn, [episode_id for episode_id, _, _, _ in projected])
        latest = outbox.latest([episode_id for episode_id, _, _ in part])
        for episode_id, serialized, digest, quarantine_reasons in projected:
            opt_in, fingerprint = by_id[episode_id]
            now_in = current.opt_in_for(roots.get(episode_id)) if current.enabled else None
            if now_in is None or now_in.key != opt_in.key:
                report.stale += 1
                continue
            revision = latest.get(episode_id, (0, ""))[0]
            if serialized is None:
                # Every file it touched is excluded now: what was waiting to go stays home.
                excluded.append(episode_id)
                report.excluded += 1
            elif (new := next_revision(latest.get(episode_id), digest)) is None:
                report.unchanged += 1
            else:
                revision = new
                quarantine = "; ".join(quarantine_reasons) or None
                rows.append(
                    NewRow(episode_id, new, opt_in.level.value, digest, serialized, quarantine)
                )
                if quarantine:
                    report.quarantined += 1
                elif new == 1:
                    report.queued += 1
                else:
                    report.revised += 1
            seen.append((episode_id, fingerprint, digest, revision))
        episode_rows.mark_projected(store.conn, seen)
        outbox_rows.supersede_queued(store.conn, excluded)
        outbox.add_all(rows, now)
