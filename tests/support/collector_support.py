"""What the collector's tests and benchmarks share: a throwaway PostgreSQL cluster, a collector
process, and episodes shaped like the uploader's.

The cluster is Debian's PostgreSQL, run from a temporary directory on a free port; as root it runs
as the `postgres` user (the server refuses to run as root).
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import pwd
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from capture.connection import sqlite3

ROOT = Path(__file__).resolve().parents[2]


class PostgresMissing(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pg_bindir() -> Path:
    """Where initdb and pg_ctl are: Debian's versioned directory, else PATH."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    raise PostgresMissing(
        "PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql"
    )


@dataclass
class PgCluster:
    """A PostgreSQL server of our own: initdb in a temp dir, pg_ctl start, stop at the end."""

    durable: bool = False  # fsync on (benchmarks) or off (tests)
    settings: dict[str, str] = field(default_factory=dict)
    base: Path = field(init=False)
    port: int = field(init=False)

    def _as_server_user(self, args: Sequence[str]) -> list[str]:
        if os.geteuid() != 0:
            return list(args)
        return ["runuser", "-u", "postgres", "--", *args]

    def start(self) -> PgCluster:
        bindir = pg_bindir()
        self.base = Path(tempfile.mkdtemp(prefix="capture-pg-"))
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresMissing("no 'postgres' user to run the server as") from None
            os.chown(self.base, user.pw_uid, user.pw_gid)
        data = self.base / "data"
        subprocess.run(
            self._as_server_user(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(data),
                    "--auth=trust",
                    "-U",
                    "postgres",
                    "--encoding=UTF8",
                    "--no-locale",
                    "--no-sync",
                ]
            ),
            check=True,
            capture_output=True,
        )
        self.port = free_port()
        options = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self.base),
            "max_connections": "200",
            "shared_buffers": "256MB",
        }
        if not self.durable:
            options |= {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}
        options |= self.settings
        flags = " ".join(f"-c {k}={v}" for k, v in options.items())
        subprocess.run(
            self._as_server_user(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(self.base / "server.log"),
                    "-o",
                    f"-p {self.port} {flags}",
                    "-w",
                    "-t",
                    "60",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
        )
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def postmaster_pid(self) -> int:
        return int((self.base / "data" / "postmaster.pid").read_text().split()[0])

    def stop(self) -> None:
        bindir = pg_bindir()
        subprocess.run(
            self._as_server_user(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(self.base / "data"),
                    "-m",
                    "immediate",
                    "-w",
                    "stop",
                ]
            ),
            capture_output=True,
        )
        shutil.rmtree(self.base, ignore_errors=True)


def collector_env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["CAPTURE_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@dataclass
class Collector:
    """`capture collector serve` as a real process on a free loopback port."""

    db: str
    home: Path
    args: Sequence[str] = ()
    #: The process's open-file limit (RLIMIT_NOFILE), when the test sets one.
    nofile: int | None = None
    proc: subprocess.Popen[str] = field(init=False)
    url: str = field(init=False)

    def start(self, timeout: float = 30.0) -> Collector:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "capture",
                "collector",
                "serve",
                "--db",
                self.db,
                "--port",
                "0",
                *self.args,
            ],
            env=collector_env(self.home),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
            preexec_fn=None if self.nofile is None else self._limit_files,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"collector did not start: {line}{self.proc.stderr.read()}")
        self.url = line.split("listening on ")[1].split()[0]
        deadline = time.monotonic() + timeout
        while True:
            try:
                if httpx.get(f"{self.url}/v1/health", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.kill9()
                raise RuntimeError("collector never became healthy")
            time.sleep(0.05)

    def _limit_files(self) -> None:
        import resource

        assert self.nofile is not None
        _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, hard))

    def kill9(self) -> None:
        # The whole process group: with --workers, the workers die with their supervisor.
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill9()


def stored_keys(db: str, team: str) -> Counter[tuple[str, int]]:
    """Every (id, revision) row in the collector's ledger, counted (straight from the database)."""
    if db.startswith("postgresql"):
        import psycopg

        with psycopg.connect(db) as conn:
            rows = conn.execute(
                "SELECT episode_id, revision FROM revisions WHERE team = %s", (team,)
            ).fetchall()
    else:
        conn3 = sqlite3.connect(db.removeprefix("sqlite:///"))
        rows = conn3.execute(
            "SELECT episode_id, revision FROM revisions WHERE team = ?", (team,)
        ).fetchall()
        conn3.close()
    return Counter((e, int(r)) for e, r in rows)


def make_token(db: str, team: str, scope: str, expires_in: float | None = None) -> str:
    """A token stored the way `capture collector token create` stores it (expiring
    `expires_in` seconds from now: negative for one that has expired already)."""
    from sync.collector.storage import open_storage
    from sync.collector.tokens import new_token

    storage = open_storage(db)
    try:
        storage.migrate()
        token, record = new_token(team, scope, "test", time.time(), expires_in)
        storage.add_token(record)
    finally:
        storage.close()
    return token


AGENTS = ("claude-code", "codex", "cursor", "gemini-cli")
MODELS = ("opus", "sonnet", "gpt-5", "gemini-2.5-pro", "composer")
OUTCOMES = ("kept", "kept", "kept", "edited", "undone", "lost", "pending")


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int(ts % 1 * 1000):03d}Z"


def make_episode(
    episode_id: str,
    *,
    level: str = "redacted",
    rng: random.Random | None = None,
    started_at: float | None = None,
    agent: str | None = None,
    model: str | None = None,
    proposals: int | None = None,
) -> dict[str, Any]:
    """An episode as `capture episodes --json` prints it, after anonymization at `level`."""
    rng = rng or random.Random(episode_id)
    started = started_at if started_at is not None else 1_764_000_000 + rng.random() * 86400 * 60
    code = level != "metrics"
    props = []
    for i in range(proposals if proposals is not None else rng.randint(1, 3)):
        state = rng.choice(("applied", "applied", "applied", "applied", "rejected", "shown"))
        outcome = "rejected" if state == "rejected" else rng.choice(OUTCOMES)
        if state == "shown":
            outcome = "pending"
        added = rng.randint(1, 400)
        retention = None if state != "applied" else round(rng.random(), 3)
        props.append(
            {
                "id": f"{episode_id}p{i}",
                "file": f"src/{f'{rng.getrandbits(32):08x}'}/mod{i}.py",
                "state": state,
                "outcome": outcome,
                "reason": "similarity 0.97 at 10m" if code else None,
                "similarity": retention,
                "retention": retention,
                "chars_added": added,
                "chars_removed": rng.randint(0, 200),
                "lines_added": added // 30 + 1,
                "lines_removed": rng.randint(0, 5),
                "agent": agent,
                "model": model,
                "tool": "Edit",
                "source": "hook",
                "backfilled": False,
                "created_file": False,
                "created_at": iso(started + i),
                "applied_at": iso(started + i) if state == "applied" else None,
                "decided_by": "hook",
                "settled_at": iso(started + 600),
                "hunks": [
                    {
                        "old_text": "    return 0\n" if code else None,
                        "new_text": "    total = sum(values)\n    return total\n" if code else None,
                        "status": "tracking",
                    }
                ],
                "checkpoints": [
                    {
                        "window": w,
                        "due_at": iso(started + s),
                        "observed_at": iso(started + s + 0.2),
                        "similarity": retention,
                        "retention": retention,
                        "outcome": outcome,
                        "via": "disk",
                    }
                    for w, s in (("30s", 30), ("2m", 120), ("10m", 600))
                ],
            }
        )
    runs = []
    for j in range(rng.randint(0, 2)):
        failed = rng.choice((0, 0, 0, 1, 2))
        runs.append(
            {
                "id": f"{episode_id}r{j}",
                "command": "pytest -q" if code else None,
                "name": "pytest",
                "source": "wrapper",
                "exit_code": 1 if failed else 0,
                "passed": rng.randint(1, 300),
                "failed": failed,
                "errors": 0,
                "skipped": 0,
                "failing_ids": ["tests/test_app.py::test_total"] if failed and code else [],
                "started_at": iso(started + 40),
                "duration_s": round(rng.random() * 10, 3),
            }
        )
    agent_name = agent or rng.choice(AGENTS)
    for p in props:
        p["agent"] = agent_name
        p["model"] = model or "opus"
    return {
        "schema": "agent-capture/episode@1",
        "id": episode_id,
        "agent": agent_name,
        "model": model or rng.choice(MODELS),
        "session_id": f"{rng.getrandbits(48):012x}",
        "turn_id": str(rng.randint(1, 50)),
        "workspace": f"ws-{rng.getrandbits(24):06x}",
        "prompt": "make the total right" if code else None,
        "source": "hook",
        "started_at": iso(started),
        "ended_at": iso(started + 20),
        "settled_at": iso(started + 600),
        "proposals": props,
        "test_runs": runs,
    }


def item(episode: dict[str, Any], revision: int = 1, level: str = "redacted") -> dict[str, Any]:
    return {
        "id": episode["id"],
        "revision": revision,
        "idempotency_key": f"{episode['id']}:{revision}",
        "level": level,
        "episode": episode,
    }


def batch_body(items: Sequence[dict[str, Any]], *, compress: bool = True) -> bytes:
    raw = json.dumps({"episodes": list(items)}).encode()
    return gzip.compress(raw, compresslevel=5) if compress else raw


def upload_headers(token: str | None, contributor: str | None = "c0", gz: bool = True) -> dict:
    headers = {"Content-Type": "application/json"}
    if gz:
        headers["Content-Encoding"] = "gzip"
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if contributor:
        headers["X-Capture-Contributor"] = contributor
    return headers


def post_batch(
    client: httpx.Client,
    base: str,
    token: str | None,
    items: Sequence[dict[str, Any]],
    contributor: str | None = "c0",
) -> httpx.Response:
    return client.post(
        f"{base}/v1/episodes",
        content=batch_body(items),
        headers=upload_headers(token, contributor),
    )


def recomputed_report(lines: Sequence[dict[str, Any]], team: str) -> dict[str, Any]:
    """The report computed afresh from an export, every group shown: what the collector's
    incrementally kept report cells must equal."""
    from dataclasses import astuple

    from sync.collector.ingest import EpisodeRow, prepare
    from sync.collector.report import CurveRow, ReportRow, aggregate

    rows = []
    curves = []
    for line in lines:
        row = prepare(
            {
                "id": line["id"],
                "revision": line["revision"],
                "idempotency_key": f"{line['id']}:{line['revision']}",
                "level": line["level"],
                "episode": line["episode"],
            },
            contributor=line["contributor"],
            received_at=4_102_444_800.0,  # 2100: after every fixture's time
        )
        assert isinstance(row, EpisodeRow)
        rows.append(
            ReportRow(
                row.agent,
                row.model,
                row.week,
                row.contributor,
                1,
                tuple(float(x) for x in astuple(row.metrics)),
            )
        )
        curve = row.curve
        if curve.first_test_s is not None:
            curves.append(
                CurveRow(
                    row.agent, row.model, row.week, first_test_s=curve.first_test_s, episodes=1
                )
            )
        for window, (n, millis) in (curve.windows or {}).items():
            curves.append(
                CurveRow(
                    row.agent, row.model, row.week, window=window, checkpoints=n,
                    retained_millis=millis,
                )
            )  # fmt: skip
    return aggregate(rows, team=team, min_contributors=1, generated_at="", curves=curves)
