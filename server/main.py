"""The composition root: the server, and the features registered with it, built for a config.

Each feature is given the services it shares with the others (a :class:`~server.feature.Context`)
and the features it reads; what flows the other way (a document changed, a file to follow on
disk, a checkpoint due) travels as events. The registration order is the order of the hooks:
the proposals stop (writing what the buffers hold) before the watchers and the pickup thread.
"""

from __future__ import annotations

from capture.config import Config
from server.app import CaptureServer
from server.checkpoints import Checkpoints
from server.documents import Documents
from server.feature import Context
from server.junit_reports import ReportWatching
from server.pickup import ProposalPickup
from server.proposals import Proposals
from server.stats import Stats
from server.testruns import TestRuns
from server.undo import Undo
from server.watcher import DiskWatcher
from server.writer import StoreWriter

__all__ = ["create_server"]


def create_server(config: Config) -> CaptureServer:
    """A server for ``config``, its features registered, not yet serving."""
    context = Context(config, StoreWriter(config.paths.db))
    server = CaptureServer(context)
    documents = Documents(context)
    proposals = Proposals(context, documents)
    watcher = DiskWatcher(context, documents, proposals)
    features = (
        documents,
        proposals,
        Checkpoints(context, proposals, watcher),
        watcher,
        TestRuns(context),
        ReportWatching(context),
        Undo(context, documents),
        Stats(context, documents, proposals, watcher, server.diagnostics),
        ProposalPickup(context, proposals),
    )
    for feature in features:
        server.add_feature(feature)
    return server
