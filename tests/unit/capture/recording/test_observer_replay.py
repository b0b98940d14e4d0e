"""Checkpoints evaluated after their due time: rebuilt from the changes a watcher recorded
where it followed the file then, else read now and marked late."""

from __future__ import annotations

from pathlib import Path

from capture.config import load_config
from capture.edits.history import Coverage
from capture.model import HunkInput, ProposalInput
from capture.recording.observer import DISK_LATE, DISK_WATCHED, observe_due
from capture.recording.recorder import Recorder
from capture.store.database import Store

BEFORE = "def tax(subtotal, rate):\n    return round(subtotal * rate, 2)\n"
OLD = "    return round(subtotal * rate, 2)\n"
NEW = "    return (subtotal * rate).quantize(CENTS)\n"
AFTER = BEFORE.replace(OLD, NEW)
APPLIED = 1000.0


def recorded(tmp_path: Path) -> tuple[Store, Recorder, Path]:
    config = load_config({"CAPTURE_HOME": str(tmp_path / "home"), "CAPTURE_WINDOWS": "2s,4s,8s"})
    store = Store.open(config.paths.db)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "totals.py").write_text(BEFORE)  # on disk now: the user restored it
    proposal = ProposalInput(
        path=str(ws / "totals.py"),
        workspace=str(ws),
        agent="claude-code",
        hunks=[HunkInput(OLD, NEW)],
        file_text=AFTER,
    )
    recorder = Recorder(store, config)
    recorder.proposal(proposal, now=APPLIED)
    recorder.file_change(str(ws), "totals.py", AFTER, at=APPLIED + 0.5)
    recorder.file_change(str(ws), "totals.py", BEFORE, at=APPLIED + 5)
    return store, recorder, ws


def checkpoints(store: Store) -> dict[str, tuple[float | None, str, float | None, float]]:
    return {
        r[0]: (r[1], r[2], r[3], round(r[4] - r[5], 3))
        for r in store.conn.execute(
            "SELECT window, retention, via, late_seconds, observed_at, due_at FROM checkpoints "
            "WHERE window != 'late'"
        )
    }


def test_checkpoints_the_watcher_covered_are_rebuilt_on_time(tmp_path: Path) -> None:
    store, recorder, _ = recorded(tmp_path)
    observe_due(
        store, recorder.config, now=APPLIED + 20, coverage=Coverage(APPLIED + 0.2, APPLIED + 20)
    )
    assert checkpoints(store) == {
        "2s": (1.0, DISK_WATCHED, None, 0.0),
        "4s": (1.0, DISK_WATCHED, None, 0.0),
        "8s": (0.0, DISK_WATCHED, None, 0.0),
    }
    assert store.conn.execute("SELECT outcome FROM proposals").fetchone()[0] == "undone"


def test_past_the_watchers_last_sign_of_life_they_are_read_now_and_late(tmp_path: Path) -> None:
    store, recorder, _ = recorded(tmp_path)
    observe_due(
        store, recorder.config, now=APPLIED + 20, coverage=Coverage(APPLIED + 0.2, APPLIED + 3)
    )
    assert checkpoints(store) == {
        "2s": (1.0, DISK_WATCHED, None, 0.0),
        "4s": (0.0, DISK_LATE, 16.0, 16.0),
        "8s": (0.0, DISK_LATE, 12.0, 12.0),
    }


def test_with_no_watcher_every_late_one_is_read_now(tmp_path: Path) -> None:
    store, recorder, _ = recorded(tmp_path)
    observe_due(store, recorder.config, now=APPLIED + 20, coverage=None)
    assert {w: c[1] for w, c in checkpoints(store).items()} == dict.fromkeys(
        ("2s", "4s", "8s"), DISK_LATE
    )
