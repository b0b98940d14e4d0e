"""Live proposals: followed keystroke by keystroke in open documents, on disk otherwise.

A proposal enters tracking from four doors, all ending in :meth:`Proposals.adopt`: the
editor reports it (``capture/proposal``), the editor accepts a shown one
(``capture/decision``), another process recorded it (the pickup thread), or it was live when
the server started (the same thread's first read). The store's regions are relative to the
file's baseline text, so adopting into an open document carries them from that baseline to
the buffer with :func:`capture.edits.tracking.follow`; from then on every edit moves them through
the document's :class:`~capture.edits.region_index.RegionIndex`.

The store learns where the regions are when it needs to: a few seconds after they moved, at
save, at close, and at each checkpoint, always as a pair (buffer text as the new baseline,
regions relative to it), written by the writer thread (its jobs are in
:mod:`server.proposal_jobs`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any

from pygls.uris import to_fs_path

from capture.config import Config
from capture.edits.hunks import locate
from capture.edits.regions import Region
from capture.edits.tracking import follow
from capture.model import HunkInput, State
from server.document import Document
from server.documents import Documents
from server.feature import Context, Feature, NotificationHandler
from server.live_proposal import LiveProposal
from server.params import HunkParam, ParamsError, parse_decision, parse_proposal
from server.proposal_jobs import decision_job, open_job, persist_job, record_job
from server.stored import StoredProposal
from server.surrogates import escape

__all__ = ["Proposals"]

log = logging.getLogger(__name__)

#: Seconds after regions moved before the store is told (a burst of typing costs one write).
PERSIST_DELAY = 2.0


@dataclass(frozen=True, slots=True)
class _Shown:
    uri: str
    hunks: tuple[HunkParam, ...]


def _raw_text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


class Proposals(Feature):
    def __init__(self, context: Context, documents: Documents) -> None:
        super().__init__(context)
        self.documents = documents
        self.writer = context.writer
        self.events = context.events
        self.live: dict[str, LiveProposal] = {}  # recorded, by proposal id
        self.by_file: dict[str, dict[str, LiveProposal]] = {}
        self.by_key: dict[int, LiveProposal] = {}
        self.in_docs: dict[Document, list[LiveProposal]] = {}  # recorded or not yet
        # Ids this server recorded or adopted. The writer thread adds to it before committing,
        # the pickup thread reads it: a set's add and membership test are atomic.
        self.known: set[str] = set()
        self.shown: dict[str, _Shown] = {}
        self._keys = itertools.count(1)

    def notifications(self) -> dict[str, NotificationHandler]:
        return {"capture/proposal": self.on_proposal, "capture/decision": self.on_decision}

    async def stop(self) -> None:
        # What the editor's buffers hold is written before the writer's last commit (its
        # final flush waits for these jobs); a failure is the writer's to log.
        for doc in list(self.documents.by_uri.values()):
            if self.in_document(doc):
                self.persist(doc).add_done_callback(_retrieved)

    @property
    def config(self) -> Config:
        return self.context.config

    # ------------------------------------------------------------------ adopting

    def adopt(self, stored: StoredProposal, doc: Document | None = None) -> LiveProposal:
        """Track a live proposal the store holds; in ``doc`` when given (else on disk)."""
        live = self.live.get(stored.proposal_id)
        if live is None:
            live = LiveProposal()
            live.fill(stored)
            self._register(live)
        if doc is not None and live.doc is None and doc.file == live.file:
            # The store holds lone surrogates escaped; compare like with like.
            text = escape(doc.buffer.text)
            regions = follow(stored.baseline, text, [h for _, h in stored.hunks])
            self._attach(live, doc, regions)
        return live

    def _register(self, live: LiveProposal) -> None:
        """A recorded proposal joins the followed ones (and the disk watch, for when closed)."""
        assert live.proposal_id is not None and live.file is not None
        self.live[live.proposal_id] = live
        self.by_file.setdefault(live.file, {})[live.proposal_id] = live
        self.known.add(live.proposal_id)
        self.events.file_followed(live.file)
        if live.due:
            self.events.checkpoint_due(live.due[0])

    def _attach(
        self,
        live: LiveProposal,
        doc: Document,
        regions: list[Region | None],
        *,
        as_stored: bool = False,
    ) -> None:
        """Follow ``live``'s ``regions`` in ``doc``; ``as_stored``: they are where its record
        job will write them, relative to the buffer as it is, so the store needs no update."""
        keys: list[int | None] = []
        for region in regions:
            if region is None:
                keys.append(None)
                continue
            key = next(self._keys)
            doc.regions.add(key, region)
            self.by_key[key] = live
            keys.append(key)
        live.keys = keys
        live.doc = doc
        self.in_docs.setdefault(doc, []).append(live)
        if not as_stored:
            self._moved(doc)

    def picked_up(self, stored: Iterable[StoredProposal]) -> None:
        """Proposals another process recorded (or live at start): track them."""
        for item in stored:
            if item.proposal_id in self.live:
                continue
            doc = self.documents.by_file.get(item.file)
            log.info(
                "following proposal %s of %s (%s)",
                item.proposal_id,
                item.file,
                "in the editor" if doc else "on disk",
            )
            self.adopt(item, doc)

    def _drop(self, live: LiveProposal) -> None:
        """Stop following: its last checkpoint was observed (or it was never recorded)."""
        self._detach(live)
        if live.proposal_id is not None:
            self.live.pop(live.proposal_id, None)
        if live.file is not None:
            of_file = self.by_file.get(live.file)
            if of_file is not None and live.proposal_id in of_file:
                del of_file[live.proposal_id]
                if not of_file:
                    del self.by_file[live.file]
                self.events.file_unfollowed(live.file)

    def _detach(self, live: LiveProposal) -> None:
        doc = live.doc
        if doc is None:
            return
        for key in live.keys:
            if key is not None:
                doc.regions.remove(key)
                self.by_key.pop(key, None)
        live.keys = []
        live.doc = None
        inside = self.in_docs.get(doc)
        if inside is not None:
            inside.remove(live)
            if not inside:
                del self.in_docs[doc]

    def in_document(self, doc: Document) -> list[LiveProposal]:
        return self.in_docs.get(doc, [])

    # ------------------------------------------------------------------ documents

    def document_opened(self, doc: Document) -> None:
        if doc.fs_path is None:
            return
        future = self.writer.submit(partial(open_job, doc.fs_path), "open document")
        future.add_done_callback(partial(self._opened, doc))

    def _opened(
        self, doc: Document, future: asyncio.Future[tuple[str, list[StoredProposal]]]
    ) -> None:
        if future.exception() is not None:
            return
        file, stored = future.result()
        if not self.documents.resolved(doc, file):
            return
        for item in stored:
            self.adopt(item, doc)

    def document_changed(self, doc: Document, touched: list[int], raw: bytes) -> None:
        """A change moved (or touched) regions of ``doc``'s proposals: log it, persist soon."""
        if touched:
            by_key = self.by_key
            doc.recent.append((doc.version, tuple({by_key[k] for k in touched if k in by_key})))
        root = next((p.root for p in self.in_docs.get(doc, ()) if p.root is not None), None)
        self.writer.event((time.time(), "edit", "lsp", root, _raw_text(raw)), droppable=True)
        self._moved(doc)

    def document_saved(self, doc: Document, now: float) -> None:
        if self.in_document(doc):
            self.persist(doc)

    def document_closed(self, doc: Document) -> None:
        if doc.persist_handle is not None:
            doc.persist_handle.cancel()
            doc.persist_handle = None
        inside = list(self.in_document(doc))
        if not inside:
            return
        self.persist(doc)
        for live in inside:
            self._detach(live)

    def _moved(self, doc: Document) -> None:
        doc.dirty = True
        if doc.persist_handle is None:
            doc.persist_handle = self.context.loop.call_later(
                PERSIST_DELAY, self._persist_later, doc
            )

    def _persist_later(self, doc: Document) -> None:
        doc.persist_handle = None
        if doc.dirty and self.documents.get(doc.uri) is doc:
            self.persist(doc)

    def persist(self, doc: Document, *, observe_at: float | None = None) -> asyncio.Future[Any]:
        """Write the document's regions (and its text as their baseline); with ``observe_at``,
        also record the checkpoints due then, measured in the buffer."""
        doc.dirty = False
        spans = [
            (live, [None if k is None else doc.regions.get(k) for k in live.keys])
            for live in self.in_document(doc)
        ]
        now = time.time() if observe_at is None else observe_at
        job = partial(persist_job, doc.buffer.text, spans, now, observe_at is not None)
        return self.writer.submit(job, "persist regions")

    # ------------------------------------------------------------------ checkpoints

    def observe_open_documents(self, now: float) -> list[asyncio.Future[Any]]:
        """Record, from the buffers, the checkpoints due by ``now`` of proposals in open docs."""
        futures = []
        for doc, inside in list(self.in_docs.items()):
            if any(p.due and p.due[0] <= now for p in inside if p.proposal_id in self.live):
                futures.append(self.persist(doc, observe_at=now))
        return futures

    def checkpoints_observed(self, now: float, tracked: set[str]) -> None:
        """The checkpoints due by ``now`` of the ``tracked`` proposals were observed: forget
        those, and the proposals whose last one it was."""
        for live in list(self.live.values()):
            if live.proposal_id in tracked and live.due and live.due[0] <= now:
                live.due = [d for d in live.due if d > now]
                if not live.due:
                    self._drop(live)

    def next_due(self) -> float | None:
        dues = [p.due[0] for p in self.live.values() if p.due]
        return min(dues) if dues else None

    # ------------------------------------------------------------------ capture/proposal

    def _follow_now(self, doc: Document, hunks: list[HunkInput]) -> LiveProposal:
        """Start following an editor-reported edit at once, located in the buffer as the
        writer thread will locate it (same text, same hints): edits typed before the record
        is written move it like any other region."""
        if doc.dirty and self.in_document(doc):
            # Write where the document's regions are now, with the buffer as their baseline:
            # the record job then finds the baseline already true and carries nothing, where
            # it would otherwise diff the file and move every live proposal of it.
            self.persist(doc)
        located = locate(doc.buffer.text, hunks)
        live = LiveProposal()
        regions = [None if h.span is None else Region(*h.span) for h in located]
        self._attach(live, doc, regions, as_stored=True)
        return live

    def on_proposal(self, params: Any, raw: bytes) -> None:
        p = parse_proposal(params)
        fs_path = to_fs_path(p.uri) if p.uri.startswith("file:") else None
        if fs_path is None:
            raise ParamsError(f"capture/proposal needs a file: URI, not {p.uri[:100]!r}")
        if self.context.refuse_outside(fs_path, "capture/proposal"):
            return
        doc = self.documents.get(p.uri)
        hunks = self._hunk_inputs(doc, p.hunks)
        text = None
        live = None
        if doc is not None and p.state is State.APPLIED:
            text = doc.buffer.text
            live = self._follow_now(doc, hunks)
        if p.state is State.SHOWN and p.editor_id:
            self.shown[p.editor_id] = _Shown(p.uri, p.hunks)
        job = partial(
            record_job,
            self.config,
            p,
            fs_path,
            hunks,
            text,
            live,
            list(self.context.folders),
            not self.context.allow_outside,
            self.known,
            time.time(),
            _raw_text(raw),
        )
        future = self.writer.submit(job, "capture/proposal")
        future.add_done_callback(partial(self._recorded, live))

    def _hunk_inputs(self, doc: Document | None, hunks: Iterable[HunkParam]) -> list[HunkInput]:
        inputs = []
        for h in hunks:
            start = line = None
            if h.range is not None:
                if doc is not None:
                    start = doc.buffer.position_to_offset(
                        h.range.start_line, h.range.start_character, self.context.encoding
                    )
                else:
                    line = h.range.start_line + 1
            inputs.append(HunkInput(h.old_text, h.new_text, start=start, line=line))
        return inputs

    def _recorded(
        self, live: LiveProposal | None, future: asyncio.Future[list[StoredProposal]]
    ) -> None:
        error = future.exception()
        stored = [] if error is not None else future.result()
        if live is not None:
            if error is not None or live.proposal_id is None or live.proposal_id in self.live:
                self._detach(live)  # not recorded (or already followed): stop following it
            else:
                self._register(live)
            return
        for item in stored:
            self.adopt(item, self.documents.by_file.get(item.file))

    # ------------------------------------------------------------------ capture/decision

    def on_decision(self, params: Any, raw: bytes) -> None:
        d = parse_decision(params)
        shown = self.shown.pop(d.editor_id, None) if d.editor_id else None
        uri = d.uri or (shown.uri if shown else None)
        doc = self.documents.get(uri)
        text = doc.buffer.text if doc is not None and d.accepted else None
        hints: list[int | None] = []
        ranges = d.ranges or (tuple(h.range for h in shown.hunks) if shown else ())
        for rng in ranges:
            if rng is None or doc is None:
                hints.append(None)
            else:
                hints.append(
                    doc.buffer.position_to_offset(
                        rng.start_line, rng.start_character, self.context.encoding
                    )
                )
        live = None
        if doc is not None and d.accepted and shown is not None:
            hunks = [
                HunkInput(h.old_text, h.new_text, start=hints[i] if i < len(hints) else None)
                for i, h in enumerate(shown.hunks)
            ]
            live = self._follow_now(doc, hunks)
        job = partial(
            decision_job,
            self.config,
            d.proposal_id,
            d.editor_id,
            d.accepted,
            d.decided_by,
            text,
            hints,
            live,
            self.known,
            time.time(),
            _raw_text(raw),
        )
        future = self.writer.submit(job, "capture/decision")
        future.add_done_callback(partial(self._recorded, live))
