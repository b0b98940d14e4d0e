"""`Store`'s rows of proposals: recording and deciding them, their hunks and regions, and the
baseline text of the files they touch.

A proposal is recorded with its hunks, the checkpoints it is due and its file's baseline in one
transaction; a backfill's proposal arrives `Settled`, its checkpoints already observed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from capture.connection import sqlite3
from capture.edits.windows import Window
from capture.errors import NotFoundError
from capture.model import Outcome, ProposalInput, State
from capture.store.ids import new_id
from capture.store.row_groups import RowGroup

if TYPE_CHECKING:
    from capture.edits.hunks import LocatedHunk

__all__ = ["Observed", "ProposalRows", "Settled"]

#: The outcome of a call recorded as decided already.
_CLOSED_OUTCOME = {State.REJECTED: Outcome.REJECTED, State.FAILED: Outcome.FAILED}


@dataclass(frozen=True, slots=True)
class Observed:
    """What the checkpoints of a window observed."""

    similarity: float | None
    retention: float | None
    outcome: Outcome
    via: str


@dataclass(frozen=True, slots=True)
class Settled:
    """An applied proposal judged as it is recorded (a backfill): its outcome and what its
    windows and its late check observed, all at `at`. Recorded so at once, the rows are the
    ones scheduling the checkpoints and observing them one by one would leave."""

    at: float
    outcome: Outcome
    reason: str
    windows: Observed  # every window but the late check; also the proposal's measures
    late: Observed


class ProposalRows(RowGroup):
    """Proposals, their hunks and regions, and the baselines of their files."""

    def add_proposal(
        self,
        proposal: ProposalInput,
        located: Sequence[LocatedHunk],
        *,
        relative_path: str,
        now: float,
        windows: Sequence[Window],
        late: Window,
        gap: float,
        settled: Settled | None = None,
        episode: tuple[int, str] | None = None,
    ) -> str:
        """Record a proposal with its hunks, its checkpoints and the file's baseline text.
        Returns the proposal id (the existing one when dedupe_key was seen before). An applied
        proposal `settled` already is recorded with its outcome and its checkpoints observed.
        `episode`: its (workspace id, episode id), when the caller has ensured them."""
        # Imported here: recording a test run (capture run, the pytest plugin) has no need of
        # the diff machinery and its start-up cost.
        from capture.edits.hunks import Change, count_change
        from capture.edits.outcomes import RULES_VERSION

        with self.transaction():
            if proposal.dedupe_key:
                row = self.conn.execute(
                    "SELECT id FROM proposals WHERE dedupe_key = ?", (proposal.dedupe_key,)
                ).fetchone()
                if row:
                    return str(row[0])
            if episode is not None:
                workspace_id, episode_id = episode
            else:
                workspace_id = self.ensure_workspace(proposal.workspace, now)
                episode_id = self.ensure_episode(
                    workspace_id=workspace_id,
                    agent=proposal.agent,
                    now=now,
                    gap=gap,
                    session_id=proposal.session_id,
                    turn_id=proposal.turn_id,
                    model=proposal.model,
                    prompt=proposal.prompt,
                    source=proposal.source,
                )
            change = Change(0, 0, 0, 0)
            for hunk in located:
                change = change + count_change(hunk.old_text, hunk.new_text)
            proposal_id = new_id(now)
            state = proposal.state
            # a refused or failed call is decided when it is recorded: nothing to follow
            closed = state in (State.REJECTED, State.FAILED)
            outcome = _CLOSED_OUTCOME.get(state, Outcome.PENDING)
            applied_at = now if state is State.APPLIED else None
            settled_at = now if closed else None
            if settled is not None and state is State.APPLIED:
                outcome, settled_at = settled.outcome, settled.at
            else:
                settled = None
            self.conn.execute(
                """INSERT INTO proposals (id, episode_id, workspace_id, path, agent, model, tool,
                   tool_use_id, dedupe_key, state, outcome, reason, similarity, retention,
                   chars_added, chars_removed, lines_added, lines_removed, created_file,
                   backfilled, source, created_at, applied_at, decided_at, decided_by,
                   settled_at, rules_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                   ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
                (
                    proposal_id,
                    episode_id,
                    workspace_id,
                    relative_path,
                    proposal.agent,
                    proposal.model,
                    proposal.tool,
                    proposal.tool_use_id,
                    proposal.dedupe_key,
                    state.value,
                    outcome.value,
                    settled.reason if settled else proposal.reason,
                    settled.windows.similarity if settled else None,
                    settled.windows.retention if settled else None,
                    change.chars_added,
                    change.chars_removed,
                    change.lines_added,
                    change.lines_removed,
                    int(proposal.created_file),
                    int(proposal.backfilled),
                    proposal.source,
                    now,
                    applied_at,
                    now if closed else None,
                    proposal.decided_by,
                    settled_at,
                    RULES_VERSION,
                ),
            )
            self._insert_hunks(proposal_id, located)
            if state is State.APPLIED:
                self._schedule(proposal_id, now, windows, late, settled)
                if proposal.file_text is not None:
                    self.set_baseline(workspace_id, relative_path, proposal.file_text, now)
            if closed:
                self._settle_episode_if_done(episode_id, now)
            return proposal_id

    def _insert_hunks(self, proposal_id: str, located: Sequence[LocatedHunk]) -> None:
        self.conn.executemany(
            """INSERT INTO hunks (proposal_id, idx, old_text, new_text, region_start, region_end,
               context_before, context_after, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            [
                (
                    proposal_id,
                    i,
                    h.old_text,
                    h.new_text,
                    h.span[0] if h.span else None,
                    h.span[1] if h.span else None,
                    h.context_before,
                    h.context_after,
                    "tracking" if h.span else "lost",
                )
                for i, h in enumerate(located)
            ],
        )

    def _schedule(
        self,
        proposal_id: str,
        applied_at: float,
        windows: Sequence[Window],
        late: Window,
        settled: Settled | None = None,
    ) -> None:
        if settled is None:
            self.conn.executemany(
                """INSERT OR IGNORE INTO checkpoints (proposal_id, window, window_seconds,
                   due_at) VALUES (?, ?, ?, ?)""",
                [
                    (proposal_id, w.label, w.seconds, applied_at + w.seconds)
                    for w in (*windows, late)
                ],
            )
            return
        rows = []
        for window in (*windows, late):
            seen = settled.late if window.label == late.label else settled.windows
            rows.append(
                (
                    proposal_id,
                    window.label,
                    window.seconds,
                    applied_at + window.seconds,
                    settled.at,
                    seen.similarity,
                    seen.retention,
                    seen.outcome.value,
                    seen.via,
                )
            )
        self.conn.executemany(
            """INSERT OR IGNORE INTO checkpoints (proposal_id, window, window_seconds, due_at,
               observed_at, similarity, retention, outcome, via)
               VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)""",
            rows,
        )

    def decide_proposal(
        self,
        proposal_id: str,
        *,
        accepted: bool,
        decided_by: str | None,
        now: float,
        located: Sequence[LocatedHunk] | None = None,
        file_text: str | None = None,
        windows: Sequence[Window] = (),
        late: Window | None = None,
    ) -> None:
        """Accept (apply) or reject a shown proposal."""
        with self.transaction():
            row = self.proposal_row(proposal_id)
            if row["state"] != State.SHOWN.value:
                return
            if not accepted:
                self.conn.execute(
                    """UPDATE proposals SET state = 'rejected', outcome = 'rejected',
                       decided_at = ?, decided_by = ?, settled_at = ? WHERE id = ?""",
                    (now, decided_by, now, proposal_id),
                )
                self._settle_episode_if_done(row["episode_id"], now)
                return
            self.conn.execute(
                """UPDATE proposals SET state = 'applied', applied_at = ?, decided_at = ?,
                   decided_by = ? WHERE id = ?""",
                (now, now, decided_by, proposal_id),
            )
            if located is not None:
                self.conn.execute("DELETE FROM hunks WHERE proposal_id = ?", (proposal_id,))
                self._insert_hunks(proposal_id, located)
            if late is not None:
                self._schedule(proposal_id, now, windows, late)
            if file_text is not None:
                self.set_baseline(row["workspace_id"], row["path"], file_text, now)

    def proposal_with_key(self, dedupe_key: str) -> str | None:
        """The id of the proposal recorded under this key, if one was."""
        row = self.conn.execute(
            "SELECT id FROM proposals WHERE dedupe_key = ?", (dedupe_key,)
        ).fetchone()
        return None if row is None else str(row[0])

    def known_proposal_keys(self, keys: Sequence[str]) -> set[str]:
        """The keys among `keys` a proposal was recorded under (a hook or an earlier import)."""
        return self._known_keys("proposals", keys)

    def proposal_row(self, proposal_id: str) -> sqlite3.Row:
        row = self.conn.execute("SELECT * FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no proposal {proposal_id}")
        return row

    def hunk_rows(self, proposal_id: str) -> list[sqlite3.Row]:
        return self.conn.execute(
            "SELECT * FROM hunks WHERE proposal_id = ? ORDER BY idx", (proposal_id,)
        ).fetchall()

    def hunk_rows_of(self, proposal_ids: Sequence[str]) -> dict[str, list[sqlite3.Row]]:
        found: dict[str, list[sqlite3.Row]] = {pid: [] for pid in proposal_ids}
        for i in range(0, len(proposal_ids), 500):
            chunk = proposal_ids[i : i + 500]
            for row in self.conn.execute(
                f"SELECT * FROM hunks WHERE proposal_id IN ({','.join('?' * len(chunk))}) "
                "ORDER BY proposal_id, idx",
                chunk,
            ):
                found[row["proposal_id"]].append(row)
        return found

    def live_proposal_ids(self, workspace_id: int, path: str) -> set[str]:
        """The ids of `live_proposals`, without reading their rows."""
        return {
            str(row[0])
            for row in self.conn.execute(
                """SELECT p.id FROM proposals p WHERE p.workspace_id = ? AND p.path = ?
                   AND p.state = 'applied' AND EXISTS (SELECT 1 FROM checkpoints c
                   WHERE c.proposal_id = p.id AND c.observed_at IS NULL)""",
                (workspace_id, path),
            )
        }

    def live_proposals_everywhere(
        self, *, ids: Sequence[str] | None = None, after_rowid: int | None = None
    ) -> list[sqlite3.Row]:
        """Live proposals of every file, oldest first, with their workspace's root: all, those
        with the given ids, or those inserted after a rowid. Rows hold `rid` (the rowid), `id`,
        `workspace_id`, `root` and `path`."""
        sql = """SELECT p.rowid AS rid, p.id, p.workspace_id, w.root, p.path
            FROM proposals p JOIN workspaces w ON w.id = p.workspace_id
            WHERE p.state = 'applied' AND EXISTS (SELECT 1 FROM checkpoints c
                WHERE c.proposal_id = p.id AND c.observed_at IS NULL)"""
        params: list[object] = []
        if ids is not None:
            sql += f" AND p.id IN ({','.join('?' * len(ids))})"
            params.extend(ids)
        if after_rowid is not None:
            sql += " AND p.rowid > ?"
            params.append(after_rowid)
        return self.conn.execute(sql + " ORDER BY p.rowid", params).fetchall()

    def max_proposal_rowid(self) -> int:
        row = self.conn.execute("SELECT max(rowid) FROM proposals").fetchone()
        return int(row[0] or 0)

    def live_proposals(self, workspace_id: int, path: str) -> list[sqlite3.Row]:
        """Applied proposals of a file whose tracking is not over (late check included)."""
        return self.conn.execute(
            """SELECT p.* FROM proposals p WHERE p.workspace_id = ? AND p.path = ?
               AND p.state = 'applied' AND EXISTS (SELECT 1 FROM checkpoints c
               WHERE c.proposal_id = p.id AND c.observed_at IS NULL) ORDER BY p.id""",
            (workspace_id, path),
        ).fetchall()

    # -- baselines -------------------------------------------------------------------------

    def baseline(self, workspace_id: int, path: str) -> str | None:
        row = self.conn.execute(
            "SELECT text FROM tracked_files WHERE workspace_id = ? AND path = ?",
            (workspace_id, path),
        ).fetchone()
        return None if row is None else row[0]

    def baseline_seen(self, workspace_id: int, path: str) -> tuple[str | None, float] | None:
        """The file's baseline text and when it was read (None: never seen)."""
        row = self.conn.execute(
            "SELECT text, observed_at FROM tracked_files WHERE workspace_id = ? AND path = ?",
            (workspace_id, path),
        ).fetchone()
        return None if row is None else (row[0], float(row[1]))

    def set_baseline(self, workspace_id: int, path: str, text: str | None, now: float) -> None:
        self.conn.execute(
            """INSERT INTO tracked_files (workspace_id, path, text, observed_at) VALUES (?, ?, ?, ?)
               ON CONFLICT (workspace_id, path) DO UPDATE SET text = excluded.text,
               observed_at = excluded.observed_at""",
            (workspace_id, path, text, now),
        )

    def set_author(self, proposal_ids: Sequence[str], author: str) -> None:
        """Who last changed these proposals' regions (see capture.edits.evidence.Author)."""
        self.conn.executemany(
            "UPDATE proposals SET author = ? WHERE id = ?", [(author, p) for p in proposal_ids]
        )

    def update_regions(self, spans: dict[int, tuple[int, int] | None]) -> None:
        """New (start, end) per hunk id; None marks the region lost."""
        self.conn.executemany(
            """UPDATE hunks SET region_start = ?, region_end = ?,
               status = CASE WHEN ? IS NULL THEN 'lost' ELSE 'tracking' END WHERE id = ?""",
            [
                (s[0] if s else None, s[1] if s else None, s[0] if s else None, hunk_id)
                for hunk_id, s in spans.items()
            ],
        )
