"""`Store`'s rows of checkpoints: which are due, what they observed, and the outcomes they settle
(a proposal's, then its episode's once every proposal of it is settled).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from capture.model import Outcome
from capture.store.row_groups import RowGroup

__all__ = ["CheckpointResult", "CheckpointRows", "DueCheckpoint"]


def _rules_version() -> int:
    # Imported when a label is written: the store loads without the diff machinery (a test run's
    # recording has no use for it, nor for its start-up cost).
    from capture.edits.outcomes import RULES_VERSION

    return RULES_VERSION


@dataclass(frozen=True, slots=True)
class DueCheckpoint:
    checkpoint_id: int
    proposal_id: str
    window: str
    due_at: float
    workspace_id: int
    root: str
    path: str
    is_final: bool


@dataclass(frozen=True, slots=True)
class CheckpointResult:
    """What one checkpoint observed; `final` marks the last window, where the outcome sticks.
    `late_seconds`: how long after its due time the measured state was, when it was not the
    state at the due time."""

    checkpoint_id: int
    proposal_id: str
    window: str
    similarity: float | None
    retention: float | None
    outcome: Outcome
    reason: str
    final: bool
    late_seconds: float | None = None


class CheckpointRows(RowGroup):
    """Checkpoints, and the outcomes of proposals and episodes they settle."""

    def due_checkpoints(
        self, now: float, *, workspace_root: str | None = None, paths: Sequence[str] = ()
    ) -> list[DueCheckpoint]:
        sql = """SELECT c.id, c.proposal_id, c.window, c.due_at, p.workspace_id, w.root, p.path,
                 c.window_seconds = (SELECT max(c2.window_seconds) FROM checkpoints c2
                    WHERE c2.proposal_id = c.proposal_id AND c2.window != 'late') AS is_final
                 FROM checkpoints c JOIN proposals p ON p.id = c.proposal_id
                 JOIN workspaces w ON w.id = p.workspace_id
                 WHERE c.observed_at IS NULL AND c.due_at <= ?"""
        params: list[Any] = [now]
        if workspace_root is not None:
            sql += " AND w.root = ?"
            params.append(workspace_root)
        if paths:
            sql += f" AND p.path IN ({','.join('?' * len(paths))})"
            params.extend(paths)
        sql += " ORDER BY c.due_at"
        return [
            DueCheckpoint(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]) and r[2] != "late")
            for r in self.conn.execute(sql, params)
        ]

    def unobserved_due_times(self, proposal_id: str) -> tuple[float, ...]:
        """When each of the proposal's checkpoints not observed yet falls due."""
        return tuple(
            float(r[0])
            for r in self.conn.execute(
                "SELECT due_at FROM checkpoints WHERE proposal_id = ? AND observed_at IS NULL",
                (proposal_id,),
            )
        )

    def next_due_at(self) -> float | None:
        row = self.conn.execute(
            "SELECT min(due_at) FROM checkpoints WHERE observed_at IS NULL"
        ).fetchone()
        return None if row is None or row[0] is None else float(row[0])

    def record_checkpoint(
        self,
        checkpoint_id: int,
        *,
        observed_at: float,
        similarity: float | None,
        retention: float | None,
        outcome: Outcome,
        via: str,
        reason: str | None = None,
        late_seconds: float | None = None,
    ) -> None:
        self.conn.execute(
            """UPDATE checkpoints SET observed_at = ?, similarity = ?, retention = ?, outcome = ?,
               via = ?, reason = ?, rules_version = ?, late_seconds = ?
               WHERE id = ? AND observed_at IS NULL""",
            (
                observed_at,
                similarity,
                retention,
                outcome.value,
                via,
                reason,
                _rules_version(),
                late_seconds,
                checkpoint_id,
            ),
        )

    def record_checkpoints(
        self, results: Sequence[CheckpointResult], *, observed_at: float, via: str
    ) -> None:
        """Record observed checkpoints; a proposal shows `pending` with the provisional reason
        until its final window, then its outcome is settled (and its episode, when complete)."""
        if not results:
            return
        version = _rules_version()
        with self.transaction():
            self.conn.executemany(
                """UPDATE checkpoints SET observed_at = ?, similarity = ?, retention = ?,
                   outcome = ?, via = ?, reason = ?, rules_version = ?, late_seconds = ?
                   WHERE id = ? AND observed_at IS NULL""",
                [
                    (
                        observed_at,
                        r.similarity,
                        r.retention,
                        r.outcome.value,
                        via,
                        r.reason,
                        version,
                        r.late_seconds,
                        r.checkpoint_id,
                    )
                    for r in results
                ],
            )
            windows = [r for r in results if r.window != "late"]
            self.conn.executemany(
                """UPDATE proposals SET outcome = ?, reason = ?, similarity = ?, retention = ?,
                   rules_version = ?, settled_at = ? WHERE id = ? AND settled_at IS NULL""",
                [
                    (
                        r.outcome.value if r.final else Outcome.PENDING.value,
                        r.reason if r.final else f"at {r.window}: {r.outcome.value}",
                        r.similarity,
                        r.retention,
                        version,
                        observed_at if r.final else None,
                        r.proposal_id,
                    )
                    for r in windows
                ],
            )
            finals = [r.proposal_id for r in windows if r.final]
            for i in range(0, len(finals), 500):
                chunk = finals[i : i + 500]
                episodes = self.conn.execute(
                    f"SELECT DISTINCT episode_id FROM proposals WHERE id IN "
                    f"({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchall()
                for (episode_id,) in episodes:
                    self._settle_episode_if_done(episode_id, observed_at)

    def set_outcome(
        self,
        proposal_id: str,
        *,
        outcome: Outcome,
        reason: str,
        similarity: float | None,
        retention: float | None,
        settled_at: float | None,
    ) -> None:
        self.conn.execute(
            """UPDATE proposals SET outcome = ?, reason = ?, similarity = ?, retention = ?,
               rules_version = ?, settled_at = ? WHERE id = ?""",
            (
                outcome.value,
                reason,
                similarity,
                retention,
                _rules_version(),
                settled_at,
                proposal_id,
            ),
        )
        if settled_at is not None:
            episode_id = self.conn.execute(
                "SELECT episode_id FROM proposals WHERE id = ?", (proposal_id,)
            ).fetchone()[0]
            self._settle_episode_if_done(episode_id, settled_at)

    def _settle_episode_if_done(self, episode_id: str, now: float) -> None:
        self.conn.execute(
            """UPDATE episodes SET settled_at = ? WHERE id = ? AND settled_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM proposals WHERE episode_id = ?
               AND settled_at IS NULL)""",
            (now, episode_id, episode_id),
        )
