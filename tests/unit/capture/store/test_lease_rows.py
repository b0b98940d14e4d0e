"""One owner per document (capture.store.lease_rows): a lease is held, renewed, refused to
another owner while live, taken over once lapsed; an observer leaves a leased file's due
checkpoints to its owner, so an edit held in a buffer is never judged from the disk."""

from __future__ import annotations

from pathlib import Path

from capture.config import Config
from capture.edits.windows import parse_windows
from capture.model import HunkInput, ProposalInput
from capture.paths import Paths
from capture.recording.observer import observe_due
from capture.recording.recorder import record_proposal
from capture.store.database import Store
from capture.store.lease_rows import (
    LEASE_TTL_S,
    leased_elsewhere,
    release_all,
    release_lease,
    renew_leases,
    take_lease,
)

T0 = 1_800_000_000.0


def _store(tmp_path: Path) -> tuple[Store, Config]:
    paths = Paths(tmp_path / "data", tmp_path / "config", tmp_path / "state")
    return Store.open(paths.db), Config(paths=paths, windows=parse_windows("1m"))


def test_a_live_lease_is_refused_to_another_owner_and_taken_over_once_lapsed(
    tmp_path: Path,
) -> None:
    store, _ = _store(tmp_path)
    conn = store.conn
    ws = store.ensure_workspace(str(tmp_path), T0)
    assert take_lease(conn, ws, "a.py", "editor", T0)
    assert not take_lease(conn, ws, "a.py", "hooks", T0 + 1)
    assert leased_elsewhere(conn, "hooks", T0 + 1) == {(ws, "a.py")}
    assert leased_elsewhere(conn, "editor", T0 + 1) == set()
    # the heartbeat keeps it past the TTL
    assert renew_leases(conn, "editor", T0 + LEASE_TTL_S) == 1
    assert not take_lease(conn, ws, "a.py", "hooks", T0 + LEASE_TTL_S + 1)
    # the owner died: no heartbeat, and the lease lapses
    later = T0 + 3 * LEASE_TTL_S
    assert leased_elsewhere(conn, "hooks", later) == set()
    assert take_lease(conn, ws, "a.py", "hooks", later)
    assert not take_lease(conn, ws, "a.py", "editor", later)
    release_lease(conn, ws, "a.py", "hooks")
    assert take_lease(conn, ws, "a.py", "editor", later)
    release_all(conn, "editor")
    assert leased_elsewhere(conn, None, later) == set()


def test_an_observer_leaves_a_leased_file_to_its_owner(tmp_path: Path) -> None:
    store, config = _store(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "a.py"
    target.write_text("def f():\n    return compute_the_total(values)\n")
    proposal = ProposalInput(
        path=str(target),
        workspace=str(ws),
        agent="claude-code",
        hunks=[HunkInput("    return 0\n", "    return compute_the_total(values)\n")],
    )
    proposal_id = record_proposal(store, config, proposal, now=T0)
    workspace_id = int(store.proposal_row(proposal_id)["workspace_id"])
    # the editor holds the buffer (unsaved); on disk the agent's line is gone
    target.write_text("def f():\n    return 0\n")
    assert take_lease(store.conn, workspace_id, "a.py", "editor", T0 + 50)
    due = T0 + 61
    renew_leases(store.conn, "editor", due)
    report = observe_due(store, config, now=due, owner="hooks")
    assert report.checkpoints == 0
    assert store.proposal_row(proposal_id)["outcome"] == "pending"
    # its owner observes it (from its buffer; here the disk, as no buffer is handed in)
    report = observe_due(store, config, now=due, owner="editor")
    assert report.checkpoints == 1
