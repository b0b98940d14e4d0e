"""A workspace, a store and a clock for the labelled outcome corpus.

The hook's own code records every scenario: each agent call goes through the fast lane (the
files its payload names snapshotted, the payload queued) and the queue's applier, exactly as
`capture hook` does, in this process. Time is a clock the scenario moves, so ten minutes of
checkpoint windows take no time; the disk, the git work tree and the store are real.

`delay` is how long the queue waits before it is applied: 0 applies each payload as it is
queued; 2.0 applies it only once the scenario has moved 2 s past it, after whatever the user,
a formatter or the agent did meanwhile. A label must not depend on it.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capture.config import load_config
from capture.files import MAX_TRACKED_BYTES
from capture.hooks.inbox import enqueue
from capture.hooks.queue import drain
from capture.hooks.snapshot import edit_paths, take
from capture.recording.observer import observe_due
from capture.store.database import Store

T0 = 1_800_000_000.0


@dataclass
class World:
    root: Path
    home: Path
    delay: float = 0.0
    now: float = T0
    store: Store = field(init=False)
    _queued: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root = self.root.resolve()
        env = {"CAPTURE_HOME": str(self.home), "HOME": str(self.home)}
        self.config = load_config(env)
        self.store = Store.open(self.config.paths.db)
        self.db = str(self.config.paths.db)
        subprocess.run(["git", "init", "-q", str(self.root)], check=True)
        git_env = {
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        }
        self._git_env = {**os.environ, **git_env}

    # ------------------------------------------------------------------ the world moves

    def path(self, relative: str) -> Path:
        return self.root / relative

    def write(self, relative: str, text: str | bytes) -> None:
        target = self.path(relative)
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            with target.open("w", encoding="utf-8", newline="") as fh:
                fh.write(text)

    def read(self, relative: str) -> str:
        with self.path(relative).open(encoding="utf-8", newline="") as fh:
            return fh.read()

    def delete(self, relative: str) -> None:
        self.path(relative).unlink()

    def git(self, *args: str) -> None:
        subprocess.run(
            ["git", "-C", str(self.root), *args],
            check=True,
            capture_output=True,
            env=self._git_env,
        )

    def commit_all(self) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "base", "--allow-empty")

    def advance(self, seconds: float) -> None:
        """Move the clock; payloads queued long enough ago are applied on the way."""
        target = self.now + seconds
        while self._queued and self._queued[0] + self.delay <= target:
            self.now = max(self.now, self._queued[0] + self.delay)
            self.apply_queue()
        self.now = target

    # ------------------------------------------------------------------ the agent's hooks

    def hook(self, agent: str, payload: dict[str, Any], event: str | None = None) -> None:
        """What `capture hook <agent>` does at this moment: snapshot, queue, and (at no delay)
        apply."""
        payload.setdefault("cwd", str(self.root))
        raw = json.dumps(payload).encode()
        snapshots = [take(p, MAX_TRACKED_BYTES) for p in edit_paths(raw, str(self.root), event)]
        assert enqueue(
            self.db, agent, event, raw, str(self.root), "", snapshots=snapshots, at=self.now
        )
        self._queued.append(self.now)
        if self.delay == 0:
            self.apply_queue()
        self.now += 0.01  # the agent's next step comes a little later

    def apply_queue(self) -> None:
        drain(self.store, self.config, clock=lambda: self.now)
        self._queued.clear()

    def finish(self, after: float = 11 * 60) -> None:
        """Apply what is queued, then let every window pass, observing the disk as
        `capture observe` does."""
        self.advance(self.delay + 0.5)
        self.apply_queue()
        for at in (T0 + 31, T0 + 121, T0 + after):
            self.now = max(self.now, at)
            observe_due(self.store, self.config, now=self.now)

    # ------------------------------------------------------------------ what was recorded

    def outcomes(self) -> list[tuple[str, str, str]]:
        """(path, outcome, reason) of every proposal, in the order they were recorded."""
        rows = self.store.conn.execute(
            "SELECT path, outcome, coalesce(reason, '') FROM proposals ORDER BY created_at, rowid"
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def runs(self) -> list[tuple[int, str]]:
        """(episodes linked, seen_by or source) of every test run, in start order."""
        rows = self.store.conn.execute(
            """SELECT (SELECT count(*) FROM episode_test_runs l WHERE l.test_run_id = r.id),
               coalesce(r.seen_by, r.source) FROM test_runs r ORDER BY r.started_at"""
        ).fetchall()
        return [(int(r[0]), r[1]) for r in rows]

    def close(self) -> None:
        self.store.close()
