"""`Store`'s episodes as turns come and go: a turn id given to the episode its prompt opened, the
episode of the agent's current turn, the episodes a turn's or a session's end closes, and the
past sessions an import closes and settles at once.

Opening an episode (`ensure_episode`) is the business of `capture.store.row_groups`, which every
proposal and run hangs from; what is here is what the recording shell asks of episodes besides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from capture.store.row_groups import RowGroup, episode_key

__all__ = ["EpisodeRows"]


class EpisodeRows(RowGroup):
    """Episodes adopted, looked up, ended and settled by turn, session or id."""

    def adopt_turn(
        self, *, workspace_id: int, agent: str, session_id: str | None, turn_id: str, now: float
    ) -> None:
        """Give a turn id to the episode its prompt opened before the id was known (a prompt
        hook without it, then tool hooks with it), so the turn stays one episode."""
        key = episode_key(agent, session_id, turn_id)
        if self.conn.execute("SELECT 1 FROM episodes WHERE key = ?", (key,)).fetchone():
            return
        self.conn.execute(
            """UPDATE episodes SET turn_id = ?, key = ?, last_at = max(last_at, ?) WHERE id = (
               SELECT e.id FROM episodes e WHERE e.workspace_id = ? AND e.agent = ?
               AND e.session_id IS ? AND e.turn_id IS NULL AND e.ended_at IS NULL
               AND NOT EXISTS (SELECT 1 FROM proposals p WHERE p.episode_id = e.id)
               ORDER BY e.last_at DESC LIMIT 1)""",
            (turn_id, key, now, workspace_id, agent, session_id),
        )

    def current_episode(
        self,
        *,
        workspace_id: int,
        agent: str,
        session_id: str | None,
        turn_id: str | None,
        since: float,
    ) -> str | None:
        """The episode of the agent's current turn, if one is on record (none is created)."""
        if turn_id:
            row = self.conn.execute(
                "SELECT id FROM episodes WHERE key = ?", (episode_key(agent, session_id, turn_id),)
            ).fetchone()
        else:
            row = self.conn.execute(
                """SELECT id FROM episodes WHERE workspace_id = ? AND agent = ? AND session_id IS ?
                   AND ended_at IS NULL AND last_at >= ? ORDER BY last_at DESC LIMIT 1""",
                (workspace_id, agent, session_id, since),
            ).fetchone()
        return None if row is None else str(row[0])

    def end_open_episodes(
        self, *, workspace_id: int, agent: str, session_id: str | None, now: float
    ) -> None:
        """Close the agent's open episodes of this session in this workspace: a new prompt (or
        the end of a turn) without a turn id of its own starts the next one."""
        self.conn.execute(
            """UPDATE episodes SET ended_at = ? WHERE workspace_id = ? AND agent = ?
               AND session_id IS ? AND ended_at IS NULL""",
            (now, workspace_id, agent, session_id),
        )

    def end_turn_episode(
        self, *, agent: str, session_id: str | None, turn_id: str, now: float
    ) -> None:
        """Close the episode of the turn the agent named (kept closed at its first end)."""
        self.conn.execute(
            "UPDATE episodes SET ended_at = coalesce(ended_at, ?) WHERE key = ?",
            (now, episode_key(agent, session_id, turn_id)),
        )

    def end_session_episodes(self, *, agent: str, session_id: str, now: float) -> None:
        """Close every open episode of the agent's session, whatever its workspace."""
        self.conn.execute(
            """UPDATE episodes SET ended_at = ? WHERE agent = ? AND session_id = ?
               AND ended_at IS NULL""",
            (now, agent, session_id),
        )

    def move_last_activity(self, moved: Mapping[str, float]) -> None:
        """Move each episode's last activity to the time given (never back)."""
        self.conn.executemany(
            "UPDATE episodes SET last_at = max(last_at, ?) WHERE id = ?",
            [(at, episode_id) for episode_id, at in moved.items()],
        )

    def close_past_episodes(self, episode_ids: Sequence[str], now: float) -> None:
        """Close episodes of a session that is over at their last activity, and settle at `now`
        those whose every proposal has its outcome."""
        self.conn.executemany(
            """UPDATE episodes SET ended_at = coalesce(ended_at, last_at),
               settled_at = CASE WHEN NOT EXISTS (SELECT 1 FROM proposals p WHERE
               p.episode_id = episodes.id AND p.settled_at IS NULL)
               THEN coalesce(settled_at, ?) ELSE settled_at END WHERE id = ?""",
            [(now, episode) for episode in episode_ids],
        )

    def episodes_of(self, proposal_ids: Sequence[str]) -> list[str]:
        """The episodes these proposals belong to, each once, in the order first met."""
        found: dict[str, None] = {}
        ids = list(proposal_ids)
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            for (episode_id,) in self.conn.execute(
                f"SELECT DISTINCT episode_id FROM proposals WHERE id IN ({_marks(chunk)})", chunk
            ):
                found[episode_id] = None
        return list(found)


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))
