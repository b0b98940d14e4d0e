"""The trajectory's rows: each step an agent took (`steps`), the large texts they carry stored
once by their hash and compressed (`texts`), the file's text before each edit
(`proposal_before`), and each episode's task statement.

A text is keyed by the SHA-256 of its UTF-8 bytes: a file read five times, or a transcript
imported twice, is stored once. Texts of some size are compressed with zstd; the library is
imported when a text is written or read, never by the hook's fast lane. A step is keyed by its
source's own id (a session and a tool call id, a message's uuid): recording it again adds
nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from capture.store.row_groups import RowGroup, episode_key

__all__ = [
    "COMPRESS_FROM",
    "StepRow",
    "TrajectoryRows",
    "compress",
    "decompress",
    "text_hash",
]

#: texts shorter than this are stored as they are: compression would not pay
COMPRESS_FROM = 96


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def compress(data: bytes) -> tuple[str, bytes]:
    if len(data) < COMPRESS_FROM:
        return "raw", data
    import zstandard

    return "zstd", zstandard.ZstdCompressor(level=6).compress(data)


def decompress(codec: str, body: bytes) -> bytes:
    if codec == "raw":
        return body
    import zstandard

    return zstandard.ZstdDecompressor().decompress(body)


class StepRow(NamedTuple):
    """One step as stored and read back (texts resolved)."""

    key: str
    at: float
    kind: str
    text: str | None
    tool: str | None = None
    call_id: str | None = None
    input: str | None = None
    is_error: bool = False
    harness: str | None = None
    parent: str | None = None
    spawned: str | None = None
    path: str | None = None
    done_at: float | None = None
    truncated: bool = False
    episode_id: str | None = None
    session_id: str | None = None
    source: str = "import"


_STEP_COLUMNS = (
    "key, at, kind, text_hash, tool, call_id, input_hash, is_error, harness, parent, spawned, "
    "path, done_at, truncated, episode_id, session_id, source"
)


class TrajectoryRows(RowGroup):
    def put_texts(self, texts: Iterable[str], *, now: float) -> list[str]:
        """Store texts not stored yet; their hashes, in order."""
        hashes = [text_hash(t) for t in texts]
        pending = dict(zip(hashes, texts, strict=True))
        if not pending:
            return hashes
        known: set[str] = set()
        keys = list(pending)
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(f"SELECT hash FROM texts WHERE hash IN ({marks})", chunk)
            known.update(str(r[0]) for r in rows)
        rows_in = []
        for digest, text in pending.items():
            if digest in known:
                continue
            data = text.encode("utf-8", "surrogatepass")
            codec, body = compress(data)
            rows_in.append((digest, len(data), codec, body, now))
        self.conn.executemany(
            "INSERT OR IGNORE INTO texts (hash, size, codec, body, first_at) VALUES (?,?,?,?,?)",
            rows_in,
        )
        return hashes

    def text_of(self, digest: str | None) -> str | None:
        if digest is None:
            return None
        row = self.conn.execute("SELECT codec, body FROM texts WHERE hash = ?", (digest,))
        found = row.fetchone()
        if found is None:
            return None
        return decompress(str(found[0]), bytes(found[1])).decode("utf-8", "surrogatepass")

    def known_step_keys(self, keys: Sequence[str]) -> set[str]:
        known: set[str] = set()
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            rows = self.conn.execute(f"SELECT key FROM steps WHERE key IN ({marks})", chunk)
            known.update(str(r[0]) for r in rows)
        return known

    def add_steps(self, steps: Sequence[StepRow], *, now: float) -> int:
        """Record steps not recorded yet (by key); how many were new."""
        with self.transaction():
            known = self.known_step_keys([s.key for s in steps])
            fresh = [s for s in steps if s.key not in known]
            texts = [t for s in fresh for t in (s.text, s.input) if t is not None]
            self.put_texts(texts, now=now)
            rows: list[tuple[Any, ...]] = []
            for s in fresh:
                rows.append(
                    (
                        s.key,
                        s.at,
                        s.kind,
                        None if s.text is None else text_hash(s.text),
                        s.tool,
                        s.call_id,
                        None if s.input is None else text_hash(s.input),
                        int(s.is_error),
                        s.harness,
                        s.parent,
                        s.spawned,
                        s.path,
                        s.done_at,
                        int(s.truncated),
                        s.episode_id,
                        s.session_id,
                        s.source,
                    )
                )
            self.conn.executemany(
                f"INSERT OR IGNORE INTO steps ({_STEP_COLUMNS}) VALUES ({','.join('?' * 17)})",
                rows,
            )
            return len(rows)

    def _step_rows(self, where: str, args: tuple[Any, ...]) -> list[StepRow]:
        rows = self.conn.execute(
            f"SELECT {_STEP_COLUMNS} FROM steps WHERE {where} ORDER BY at, id", args
        ).fetchall()
        out = []
        for r in rows:
            out.append(
                StepRow(
                    key=r[0],
                    at=r[1],
                    kind=r[2],
                    text=self.text_of(r[3]),
                    tool=r[4],
                    call_id=r[5],
                    input=self.text_of(r[6]),
                    is_error=bool(r[7]),
                    harness=r[8],
                    parent=r[9],
                    spawned=r[10],
                    path=r[11],
                    done_at=r[12],
                    truncated=bool(r[13]),
                    episode_id=r[14],
                    session_id=r[15],
                    source=r[16],
                )
            )
        return out

    def steps_of_episode(self, episode_id: str) -> list[StepRow]:
        return self._step_rows("episode_id = ?", (episode_id,))

    def steps_of_session(self, session_id: str) -> list[StepRow]:
        return self._step_rows("session_id = ?", (session_id,))

    def step_counts(self, episode_id: str) -> dict[str, int]:
        """Tool name (or kind, for messages) -> number of steps: what the metrics level shares."""
        rows = self.conn.execute(
            "SELECT coalesce(tool, kind), count(*) FROM steps WHERE episode_id = ? GROUP BY 1",
            (episode_id,),
        )
        return {str(name): int(n) for name, n in rows}

    def episodes_of_turns(
        self, agent: str, session_id: str | None, turn_ids: Sequence[str]
    ) -> dict[str, str]:
        """Turn id -> episode, for the turns of a session that have one."""
        found: dict[str, str] = {}
        for turn_id in turn_ids:
            row = self.conn.execute(
                "SELECT id FROM episodes WHERE key = ?",
                (episode_key(agent, session_id, turn_id),),
            ).fetchone()
            if row is not None:
                found[turn_id] = str(row[0])
        return found

    def episodes_of_proposal_keys(self, keys: Sequence[str]) -> dict[str, str]:
        """Dedupe key -> episode of the proposals recorded under those keys."""
        found: dict[str, str] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start : start + 500])
            marks = ",".join("?" * len(chunk))
            for key, episode in self.conn.execute(
                f"SELECT dedupe_key, episode_id FROM proposals WHERE dedupe_key IN ({marks})",
                chunk,
            ):
                found[str(key)] = str(episode)
        return found

    def set_before_text(self, proposal_id: str, text: str, via: str, *, now: float) -> None:
        with self.transaction():
            (digest,) = self.put_texts([text], now=now)
            self.conn.execute(
                "INSERT OR IGNORE INTO proposal_before (proposal_id, text_hash, via) "
                "VALUES (?, ?, ?)",
                (proposal_id, digest, via),
            )

    def before_text(self, proposal_id: str) -> tuple[str, str] | None:
        row = self.conn.execute(
            "SELECT text_hash, via FROM proposal_before WHERE proposal_id = ?", (proposal_id,)
        ).fetchone()
        if row is None:
            return None
        text = self.text_of(row[0])
        return None if text is None else (text, str(row[1]))

    def set_task(self, episode_id: str, task: str | None, source: str | None) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE episodes SET task = ?, task_source = ? WHERE id = ? AND task IS NULL",
                (task, source, episode_id),
            )

    def last_task(
        self, agent: str, session_id: str | None, other_than: str
    ) -> tuple[str, str] | None:
        """The latest task an earlier episode of the session named."""
        row = self.conn.execute(
            "SELECT task, task_source FROM episodes WHERE agent = ? AND session_id IS ? "
            "AND id != ? AND task IS NOT NULL ORDER BY started_at DESC LIMIT 1",
            (agent, session_id, other_than),
        ).fetchone()
        return None if row is None else (str(row[0]), str(row[1]))

    def task_of_episode(self, episode_id: str) -> tuple[str | None, str | None]:
        row = self.conn.execute(
            "SELECT task, task_source FROM episodes WHERE id = ?", (episode_id,)
        ).fetchone()
        return (None, None) if row is None else (row[0], row[1])

    def prune_steps(self, before: float) -> int:
        """The events log's retention applied to the trajectory: steps older than `before` go,
        and the texts nothing refers to any more."""
        with self.transaction():
            gone = self.conn.execute("DELETE FROM steps WHERE at < ?", (before,)).rowcount
            self.conn.execute(
                "DELETE FROM texts WHERE hash NOT IN (SELECT text_hash FROM steps WHERE "
                "text_hash IS NOT NULL UNION SELECT input_hash FROM steps WHERE input_hash IS "
                "NOT NULL UNION SELECT text_hash FROM proposal_before)"
            )
            return int(gone)

    def trajectory_json(
        self, episode_ids: Sequence[str], iso: Callable[[float | None], str | None]
    ) -> dict[str, dict[str, Any]]:
        """Each episode's task, task source and trajectory, as the episode JSON holds them."""
        out: dict[str, dict[str, Any]] = {}
        for episode_id in episode_ids:
            task, source = self.task_of_episode(episode_id)
            steps = self.steps_of_episode(episode_id)
            counts: dict[str, int] = {}
            for s in steps:
                if s.tool:
                    counts[s.tool] = counts.get(s.tool, 0) + 1
            trajectory = None
            if steps:
                trajectory = {
                    "tool_calls": counts,
                    "steps": [
                        {
                            "kind": s.kind,
                            "at": iso(s.at),
                            "tool": s.tool,
                            "call_id": s.call_id,
                            "input": s.input,
                            "text": s.text,
                            "is_error": s.is_error,
                            "harness": s.harness,
                            "subagent": s.parent,
                            "spawned": s.spawned,
                            "path": s.path,
                            "truncated": s.truncated,
                        }
                        for s in steps
                    ],
                    "truncated": any(s.truncated for s in steps),
                }
            out[episode_id] = {"task": task, "task_source": source, "trajectory": trajectory}
        return out

    def trajectory_space(self) -> tuple[int, int, int, int]:
        """(steps, texts, their bytes as written, their bytes stored): `capture doctor`."""
        (steps,) = self.conn.execute("SELECT count(*) FROM steps").fetchone()
        texts, raw, stored = self.conn.execute(
            "SELECT count(*), coalesce(sum(size), 0), coalesce(sum(length(body)), 0) FROM texts"
        ).fetchone()
        return int(steps), int(texts), int(raw), int(stored)
