"""`capture sync disable` disables what the user names, end to end with real processes.

Part one: every path of enabling and disabling, against the real team collector listening on
loopback, judged by what reached the collector's stored bytes. Part two: opted out in each way,
nothing connects anywhere (`capture sync now`, the background sync of a `capture serve` session,
the hook command), shown by a listening sentinel socket that counts the connections it accepts
and by the network guard's log of every connection attempt.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from capture.config import load_config
from capture.connection import sqlite3
from capture.store.database import Store
from sync.outbox import Outbox
from sync.service import fill_outbox
from sync.settings import disable, enable, load_settings
from sync.uploader import Uploader
from tests.conftest import FORMATS
from tests.e2e.test_sync_privacy import Sentinel
from tests.support.sync_e2e import Home
from tests.support.sync_support import CollectorDouble, RealCollector, make_collector
from tests.support.synthetic_episodes import make_episode, write_episodes

MARK_A = "amber heron"
MARK_W = "quartz lantern"


class TwoWorkspaces(Home):
    """A capture home with settled episodes in two workspaces, A and W, each prompt marked."""

    def __init__(self, tmp: Path, n: int = 6) -> None:
        super().__init__(tmp)
        self.a = self.ws
        self.w = tmp / "home-w"
        self.w.mkdir()
        rng = random.Random(17)
        self.ids: dict[Path, set[str]] = {self.a: set(), self.w: set()}
        episodes = []
        for i in range(2 * n):
            root, mark = (self.a, MARK_A) if i % 2 == 0 else (self.w, MARK_W)
            e = make_episode(rng, i, root=str(root))
            e["prompt"] = f"{e['prompt']} {mark} {i}"
            self.ids[root].add(e["id"])
            episodes.append(e)
        self.fill(episodes)

    def add(self, root: Path, n: int, first: int) -> set[str]:
        """More settled episodes in one workspace, written after the others."""
        rng = random.Random(first)
        episodes = [make_episode(rng, first + i, root=str(root)) for i in range(n)]
        self.fill(episodes)
        ids = {e["id"] for e in episodes}
        self.ids[root] |= ids
        return ids


@pytest.fixture
def collector(tmp_path: Path) -> Iterator[RealCollector]:
    c = make_collector(tmp_path / "collector")
    if not isinstance(c, RealCollector):
        pytest.fail("these tests need the real collector (pip install -e '.[collector,test]')")
    c.start()
    yield c
    c.stop()


def stored_ids(c: RealCollector) -> set[str]:
    return set(c.episodes())


def test_a_workspace_taken_out_after_enable_all_sends_nothing_and_comes_back(
    tmp_path: Path, collector: RealCollector
) -> None:
    home = TwoWorkspaces(tmp_path)
    home.run("sync", "enable", "--all", "--url", collector.url, "--token", collector.token)
    # Queue both workspaces' episodes (preview fills the outbox), then take W out.
    home.run("sync", "preview")
    assert home.status()["queued"] == 12
    out = home.run("sync", "disable", "--workspace", str(home.w))
    assert f"sync disabled for {home.w.resolve()}; 6 queued episode(s) dropped" in out.stdout
    status = home.status()
    assert status["enabled"] is True and status["all"] is True
    assert status["queued"] == 6
    assert {(w["root"], w["why"]) for w in status["in"]} == {(str(home.a.resolve()), "--all")}
    assert {(w["root"], w["why"]) for w in status["out"]} == {
        (str(home.w.resolve()), "taken out by name")
    }
    assert status["opted_out"] == [str(home.w.resolve())]
    text = home.run("sync", "status").stdout
    assert f"out       {home.w.resolve()} (taken out by name)" in text
    assert f"in        {home.a.resolve()} (redacted; --all)" in text

    home.run("sync", "now")
    assert stored_ids(collector) == home.ids[home.a]
    # New episodes of W, settled after it was taken out, stay home too.
    home.add(home.w, 3, first=100)
    home.run("sync", "now")
    stored = collector.stored_bytes()
    assert MARK_A.encode() in stored
    assert MARK_W.encode() not in stored
    assert not any(i.encode() in stored for i in home.ids[home.w])

    # `enable --all` again leaves W out; enabling W by name brings it back, queue and all.
    again = home.run("sync", "enable", "--all")
    assert f"still out (taken out by name): {home.w.resolve()}" in again.stdout
    home.run("sync", "now")
    assert stored_ids(collector) == home.ids[home.a]
    home.run("sync", "enable", "--workspace", str(home.w))
    status = home.status()
    assert status["out"] == [] and status["opted_out"] == []
    home.run("sync", "now")
    assert stored_ids(collector) == home.ids[home.a] | home.ids[home.w]
    assert MARK_W.encode() in collector.stored_bytes()


def test_disable_all_turns_sync_off_when_only_single_workspaces_were_in(
    tmp_path: Path, collector: RealCollector
) -> None:
    home = TwoWorkspaces(tmp_path)
    for ws in (home.a, home.w):
        home.run("sync", "enable", "--workspace", str(ws), "--url", collector.url,
                 "--token", collector.token)  # fmt: skip
    home.run("sync", "preview")
    assert home.status()["queued"] == 12
    off = home.run("sync", "disable", "--all")
    assert off.returncode == 0
    assert "sync disabled; every opt-in removed, 12 queued episode(s) dropped" in off.stdout
    status = home.status()
    assert (status["enabled"], status["all"], status["in"], status["queued"]) == (
        False, False, [], 0,
    )  # fmt: skip
    assert {w["why"] for w in status["out"]} == {"not opted in"}
    refused = home.run("sync", "now", check=False)
    assert refused.returncode == 1 and "sync is not enabled" in refused.stderr
    assert collector.stored_bytes().count(MARK_A.encode()) == 0
    assert stored_ids(collector) == set()
    # Off again is still a success, and says so.
    again = home.run("sync", "disable", "--all")
    assert "sync was not on; it stays off and nothing is sent" in again.stdout
    # Enabling one workspace afterwards brings back that one only, not the earlier opt-ins.
    home.run("sync", "enable", "--workspace", str(home.a))
    home.run("sync", "now")
    assert stored_ids(collector) == home.ids[home.a]
    assert MARK_W.encode() not in collector.stored_bytes()


def test_disable_without_a_name_is_disable_all(tmp_path: Path, collector: RealCollector) -> None:
    home = TwoWorkspaces(tmp_path)
    home.run("sync", "enable", "--all", "--url", collector.url, "--token", collector.token)
    home.run("sync", "enable", "--workspace", str(home.w), "--level", "metrics")
    home.run("sync", "disable")
    status = home.status()
    assert (status["enabled"], status["workspaces"], status["in"]) == (False, [], [])
    home.run("sync", "enable", "--workspace", str(home.a))
    home.run("sync", "now")
    assert stored_ids(collector) == home.ids[home.a]


def test_a_lower_level_holds_at_once_for_what_was_queued(
    tmp_path: Path, collector: RealCollector
) -> None:
    home = TwoWorkspaces(tmp_path)
    home.run("sync", "enable", "--all", "--url", collector.url, "--token", collector.token)
    home.run("sync", "preview")  # queued at the redacted level, prompts and code included
    assert home.status()["queued"] == 12
    home.run("sync", "enable", "--all", "--level", "metrics")
    assert home.status()["queued"] == 0  # what was queued under redacted never goes
    home.run("sync", "now")
    assert stored_ids(collector) == home.ids[home.a] | home.ids[home.w]
    stored = collector.stored_bytes()
    assert MARK_A.encode() not in stored and MARK_W.encode() not in stored
    levels = {json.loads(body)["level"] for body in collector.stored_bodies().values()}
    assert levels == {"metrics"}


def _two_workspaces(store: Store, tmp_path: Path) -> tuple[set[str], set[str]]:
    a, w = tmp_path / "a", tmp_path / "w"
    rng = random.Random(3)
    episodes = [make_episode(rng, i, root=str(a if i % 2 else w)) for i in range(10)]
    write_episodes(store, episodes, now=0.0)
    return (
        {e["id"] for e in episodes if e["workspace"] == str(a)},
        {e["id"] for e in episodes if e["workspace"] == str(w)},
    )


def test_a_refresh_that_read_the_settings_before_disable_queues_nothing_of_it(
    tmp_path: Path, capture_home: Path
) -> None:
    """A background sync filling the outbox while the user disables: what it projected under
    the old settings is checked against the settings inside its write, and not queued."""
    config = load_config()
    with Store.open(config.paths.db) as store:
        a_ids, w_ids = _two_workspaces(store, tmp_path)
        with store.transaction():
            enable(store.conn, now=1.0, root="*", url="http://127.0.0.1:9", token="tok")
        stale = load_settings(store.conn)
        with store.transaction():
            disable(store.conn, now=2.0, root=str(tmp_path / "w"))
        report = fill_outbox(store, config, stale, now=3.0)
        assert (report.stale, report.queued) == (5, 5)
        assert {r.episode_id for r in Outbox(store.conn).queued()} == a_ids
        # Nothing of W was marked as projected: enabled again, it is queued in full.
        with store.transaction():
            enable(store.conn, now=4.0, root=str(tmp_path / "w"))
        fill_outbox(store, config, load_settings(store.conn), now=5.0)
        assert {r.episode_id for r in Outbox(store.conn).queued()} == a_ids | w_ids


def test_the_uploader_sends_nothing_of_a_workspace_out_whatever_is_queued(
    tmp_path: Path, capture_home: Path
) -> None:
    """Rows in the outbox of a workspace that is out now (queued by an earlier version, whose
    `disable` kept them) are dropped before the request, never sent."""
    config = load_config()
    with CollectorDouble(token="tok") as double, Store.open(config.paths.db) as store:
        _, w_ids = _two_workspaces(store, tmp_path)
        with store.transaction():
            enable(store.conn, now=1.0, root="*", url=double.url, token="tok")
        fill_outbox(store, config, load_settings(store.conn), now=2.0)
        with store.transaction():
            # Out by name, its queued rows left behind (what `disable` itself would drop).
            store.conn.execute(
                """INSERT INTO sync_workspaces (root, level, enabled_at, opted_out_at)
                   VALUES (?, 'redacted', 3.0, 3.0)""",
                (str(tmp_path / "w"),),
            )
        assert len(Outbox(store.conn).queued()) == 10
        uploader = Uploader(store, url=double.url, token="tok", contributor="c0",
                            opt_in_gate=True)  # fmt: skip
        try:
            report = uploader.drain(deadline=time.time() + 30)
        finally:
            uploader.close()
        assert report.withdrawn == 5 and report.sent == 5
        assert set(double.episodes()).isdisjoint(w_ids)
        assert not any(i.encode() in b"".join(double.bodies) for i in w_ids)
        assert Outbox(store.conn).counts()["queued"] == 0


# -- part two: opted out, nothing connects -------------------------------------------------


def _never(home: Home, url: str) -> None:
    pass


def _disable_all_after_single(home: Home, url: str) -> None:
    home.run("sync", "enable", "--workspace", str(home.ws), "--url", url, "--token", "t")
    home.run("sync", "preview")  # something queued, to be dropped
    home.run("sync", "disable", "--all")


def _disable_plain(home: Home, url: str) -> None:
    home.run("sync", "enable", "--all", "--url", url, "--token", "t")
    home.run("sync", "preview")
    home.run("sync", "disable")


def _workspace_after_all(home: Home, url: str) -> None:
    home.run("sync", "enable", "--all", "--url", url, "--token", "t")
    home.run("sync", "preview")
    home.run("sync", "disable", "--workspace", str(home.ws))


def _workspace_after_workspace(home: Home, url: str) -> None:
    home.run("sync", "enable", "--workspace", str(home.ws), "--url", url, "--token", "t")
    home.run("sync", "preview")
    home.run("sync", "disable", "--workspace", str(home.ws))


WAYS: dict[str, Callable[[Home, str], None]] = {
    "never-enabled": _never,
    "disable-all-after-single-workspaces": _disable_all_after_single,
    "disable-after-enable-all": _disable_plain,
    "workspace-out-after-enable-all": _workspace_after_all,
    "workspace-out-after-enable-workspace": _workspace_after_workspace,
}


def _lsp(message: dict[str, object]) -> bytes:
    data = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


def _read_message(stream: object, want_id: int) -> None:
    while True:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            byte = stream.read(1)  # type: ignore[attr-defined]
            assert byte, "the server closed its output"
            header += byte
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        message = json.loads(stream.read(length))  # type: ignore[attr-defined]
        if message.get("id") == want_id and "method" not in message:
            return


def _serve_session(home: Home, env: dict[str, str], sync_on: bool) -> None:
    """A `capture serve` session over stdio: initialize, and, when sync is still enabled (a
    workspace taken out under --all), until its background sync has run once; then exit."""
    db = home.path / "data" / "capture.db"
    before = _last_run(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "capture", "serve"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=home.ws,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    uri = home.ws.as_uri()
    try:
        proc.stdin.write(_lsp({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "processId": None, "rootUri": uri, "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": "ws"}]}}))  # fmt: skip
        proc.stdin.flush()
        _read_message(proc.stdout, 1)
        if sync_on:
            deadline = time.monotonic() + 60
            while _last_run(db) == before:
                assert time.monotonic() < deadline, "the background sync never ran"
                time.sleep(0.1)
        proc.stdin.write(_lsp({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
        proc.stdin.flush()
        _read_message(proc.stdout, 2)
        proc.stdin.write(_lsp({"jsonrpc": "2.0", "method": "exit"}))
        proc.stdin.flush()
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def _last_run(db: Path) -> float | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT last_run_at FROM sync_settings WHERE id = 1").fetchone()
    finally:
        conn.close()
    return None if row is None else row[0]


@pytest.mark.parametrize("way", list(WAYS))
def test_opted_out_nothing_connects(tmp_path: Path, way: str) -> None:
    sentinel = Sentinel()
    try:
        home = Home(tmp_path)
        subprocess.run(["git", "init", "-q", str(home.ws)], check=True)
        rng = random.Random(5)
        home.fill([make_episode(rng, i, root=str(home.ws.resolve())) for i in range(8)])
        WAYS[way](home, sentinel.url)
        log = tmp_path / "network.log"
        env = home.env(CAPTURE_NETGUARD_LOG=str(log))
        status = home.status()
        assert status["in"] == [] and status["queued"] == 0, status
        # Still on with something opted in: the workspace was taken out under --all.
        sync_on = bool(status["enabled"] and status["workspaces"])

        # 1. `capture sync now`: refused when off or nothing is opted in; with the workspace
        # out under --all, it runs and has nothing to send.
        now = subprocess.run([sys.executable, "-m", "capture", "sync", "now"], env=env,
                             capture_output=True, text=True, timeout=120)  # fmt: skip
        if sync_on:
            assert now.returncode == 0 and now.stdout.startswith("0 episode(s) sent"), now.stderr
        else:
            assert now.returncode == 1, now.stderr
            assert ("sync is not enabled" if not status["enabled"] else "no workspace is "
                    "opted in") in now.stderr  # fmt: skip
        # 2. The hook command, with an edit of a file in the workspace.
        (home.ws / "app.py").write_text("def total():\n    return 1\n")
        payload = (FORMATS / "examples" / "claude_code_posttooluse_edit.json").read_text()
        payload = payload.replace("/Users/", str(home.ws) + "/").replace(
            "/home/", str(home.ws) + "/"
        )
        hook = subprocess.run([sys.executable, "-m", "capture", "hook", "claude-code"],
                              input=payload, env=env, capture_output=True, text=True,
                              timeout=60, cwd=home.ws)  # fmt: skip
        assert hook.returncode == 0, hook.stderr
        # 3. A `capture serve` session, whose background sync runs once when sync is on.
        _serve_session(home, env, sync_on)
        time.sleep(0.2)  # an accept already under way is counted before we look
        attempts = (
            [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        )
        assert [a for a in attempts if a["port"] == sentinel.port] == []
        assert sentinel.connections == 0
        assert home.status()["sent"] == 0
    finally:
        sentinel.close()


def test_control_the_sentinel_counts_an_upload(tmp_path: Path) -> None:
    """The same set-up with the workspace left in: the sentinel sees the uploader connect."""
    sentinel = Sentinel()
    try:
        home = Home(tmp_path)
        rng = random.Random(5)
        home.fill([make_episode(rng, i, root=str(home.ws.resolve())) for i in range(2)])
        home.run("sync", "enable", "--all", "--url", sentinel.url, "--token", "t")
        now = home.run("sync", "now", "--timeout", "2", check=False)
        assert now.returncode == 1
        assert sentinel.connections >= 1
    finally:
        sentinel.close()
