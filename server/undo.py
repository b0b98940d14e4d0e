"""``capture/undo``: the editor says a change was an undo or a redo.

The outcome rules read the text, not the reason (an undo and a hand deletion that restore
the old text are both ``undone``), so the reason is kept as an event, with the proposals
whose regions that change touched, for whoever studies how edits are taken back.
"""

from __future__ import annotations

import json
import time
from functools import partial
from typing import Any

from capture.config import Config
from capture.recording.recorder import Recorder
from capture.store.database import Store
from server.documents import Documents
from server.feature import Context, Feature, NotificationHandler
from server.live_proposal import LiveProposal
from server.params import parse_undo

__all__ = ["Undo"]


class Undo(Feature):
    def __init__(self, context: Context, documents: Documents) -> None:
        super().__init__(context)
        self.documents = documents

    def notifications(self) -> dict[str, NotificationHandler]:
        return {"capture/undo": self.on_undo}

    def on_undo(self, params: Any, raw: bytes) -> None:
        p = parse_undo(params)
        doc = self.documents.get(p.uri)
        touched: tuple[LiveProposal, ...] = ()
        if doc is not None:
            version = p.version if p.version is not None else doc.version
            for seen, lives in reversed(doc.recent):
                if seen == version:
                    touched = lives
                    break
        payload = {"uri": p.uri, "version": p.version, "reason": p.reason}
        self.context.writer.post(
            partial(_record, self.context.config, payload, touched, time.time()), "capture/undo"
        )


def _record(
    config: Config,
    payload: dict[str, Any],
    touched: tuple[LiveProposal, ...],
    now: float,
    store: Store,
) -> None:
    # On the writer thread, a proposal reported just before has its id by now.
    ids = sorted(p.proposal_id for p in touched if p.proposal_id is not None)
    root = next((p.root for p in touched if p.root is not None), None)
    Recorder(store, config).event(
        "undo", json.dumps({**payload, "proposals": ids}), at=now, source="lsp", workspace=root
    )
