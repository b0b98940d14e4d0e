"""`capture sync` through the real command line, against a collector on loopback."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import RunCapture, episodes_json
from tests.support.sync_support import CollectorDouble, free_port

BODY = "    total = 0\n    for item in items:\n        total += item\n    return total\n"


@pytest.fixture
def collector() -> CollectorDouble:
    with CollectorDouble(token="team-token") as double:
        yield double


def make_ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws


def propose(
    run_capture: RunCapture, ws: Path, name: str, text: str, turn: str, **extra: str
) -> None:
    path = ws / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("def f(items):\n" + text)
    body = {"file": name, "old_text": "", "new_text": text, "line": 2, "agent": "claude-code",
            "model": "opus", "session_id": "s1", "turn_id": turn, **extra}  # fmt: skip
    # A late check 3 s after the edit (24 h by default), so a test can see an episode change.
    result = run_capture("propose", input=json.dumps(body), cwd=ws, env={"CAPTURE_LATE": "3s"})
    assert result.returncode == 0, result.stderr


def settle(run_capture: RunCapture, ws: Path) -> None:
    deadline = time.time() + 20
    while time.time() < deadline:
        time.sleep(0.3)
        run_capture("observe", cwd=ws, check=True)
        if all(e["settled_at"] for e in episodes_json(run_capture)):
            return
    raise AssertionError("episodes did not settle")


def test_off_by_default_and_enable_disable_status(
    tmp_path: Path, run_capture: RunCapture, collector: CollectorDouble
) -> None:
    ws = make_ws(tmp_path)
    status = json.loads(run_capture("sync", "status", "--json", check=True).stdout)
    assert status["enabled"] is False and status["workspaces"] == []
    now = run_capture("sync", "now", cwd=ws)
    assert now.returncode != 0 and now.stderr.startswith("capture: error: sync is not enabled")
    bad = run_capture("sync", "enable", "--url", "collector.example", "--token", "x", cwd=ws)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "capture: error: not an http(s) URL: 'collector.example' (e.g. https://collector.example.com)"
    ]
    first = run_capture("sync", "enable", "--token", "x", cwd=ws)
    assert first.returncode == 2 and "--url is required" in first.stderr
    enabled = run_capture(
        "sync", "enable", "--url", collector.url, "--token", "team-token", "--level", "metrics",
        "--exclude", "secrets/**", cwd=ws,
    )  # fmt: skip
    assert enabled.returncode == 0, enabled.stderr
    assert f"sync enabled for {ws.resolve()} at level metrics" in enabled.stdout
    assert "nothing has been sent" in enabled.stdout
    assert collector.bodies == []  # enabling sends nothing
    status = json.loads(run_capture("sync", "status", "--json", check=True).stdout)
    assert status["enabled"] is True
    assert status["workspaces"] == [
        {"root": str(ws.resolve()), "level": "metrics", "include": [], "exclude": ["secrets/**"]}
    ]
    text = run_capture("sync", "status", check=True).stdout
    assert "0 queued, 0 sent, 0 set aside, 0 quarantined" in text
    off = run_capture("sync", "disable", cwd=ws, check=True)
    assert "sync disabled" in off.stdout
    assert json.loads(run_capture("sync", "status", "--json").stdout)["enabled"] is False
    missing = run_capture("sync", "disable", "--workspace", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr


def test_upload_revisions_and_excluded_files(
    tmp_path: Path, run_capture: RunCapture, collector: CollectorDouble
) -> None:
    ws = make_ws(tmp_path)
    env_secret = "STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n"
    propose(run_capture, ws, "src/total.py", BODY, "t1", prompt="sum the items")
    propose(run_capture, ws, ".env", env_secret, "t1")
    settle(run_capture, ws)
    # Before enabling: preview shows what would go, and nothing connects (nothing listens).
    preview = run_capture("sync", "preview", "--json", cwd=ws, check=True)
    assert "sync is not enabled" in preview.stderr
    body = json.loads(preview.stdout)
    [item] = body["episodes"]
    assert [p["file"] for p in item["episode"]["proposals"]] == ["src/total.py"]
    assert item["episode"]["excluded_files"] == 1
    assert collector.bodies == []

    run_capture("sync", "enable", "--url", collector.url, "--token", "team-token", cwd=ws,
                check=True)  # fmt: skip
    sent = run_capture("sync", "now", cwd=ws)
    assert sent.returncode == 0, sent.stderr
    assert sent.stdout.startswith("1 episode(s) sent")
    [episode_id] = collector.episodes()
    assert collector.episodes() == {episode_id: [1]}
    stored = collector.stored_bytes().decode()
    assert "sk_live_" not in stored and "STRIPE_KEY" not in stored
    assert "total += item" in stored  # redacted level carries code

    again = run_capture("sync", "now", cwd=ws, check=True)
    assert again.stdout.startswith("0 episode(s) sent")
    assert len(collector.bodies) == 1  # nothing changed: nothing sent

    # The late check is observed now: the episode changed after upload.
    time.sleep(3.2)
    run_capture("observe", cwd=ws, check=True)
    later = run_capture("sync", "now", cwd=ws, check=True)
    assert later.stdout.startswith("1 episode(s) sent")
    assert collector.episodes() == {episode_id: [1, 2]}
    assert all(n == 1 for n in collector.store_count.values())
    status = json.loads(run_capture("sync", "status", "--json", check=True).stdout)
    assert (status["queued"], status["sent"], status["superseded"]) == (0, 2, 0)


def test_preview_of_one_episode_and_why_it_is_not_queued(
    tmp_path: Path, run_capture: RunCapture, collector: CollectorDouble
) -> None:
    ws = make_ws(tmp_path)
    propose(run_capture, ws, "a.py", BODY, "t1")
    settle(run_capture, ws)
    [episode] = episodes_json(run_capture)
    run_capture("sync", "enable", "--url", collector.url, "--token", "team-token", cwd=ws,
                check=True)  # fmt: skip
    queued = run_capture("sync", "preview", episode["id"][:10], check=True)
    assert f"== episode {episode['id']} revision 1 (redacted)" in queued.stdout
    run_capture("sync", "now", check=True)
    after = run_capture("sync", "preview", episode["id"], check=True)
    assert "revision 1 was sent and nothing changed since" in after.stdout
    unknown = run_capture("sync", "preview", "ffffffffffff")
    assert unknown.returncode == 4 and unknown.stderr.startswith("capture: error: no episode")


def test_an_unreachable_collector_leaves_everything_queued(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_ws(tmp_path)
    propose(run_capture, ws, "a.py", BODY, "t1")
    settle(run_capture, ws)
    url = f"http://127.0.0.1:{free_port()}"
    run_capture("sync", "enable", "--url", url, "--token", "t", cwd=ws, check=True)
    result = run_capture("sync", "now", "--timeout", "1", env={"CAPTURE_SYNC_BACKOFF": "0.1s,0.2s"})
    assert result.returncode == 1
    assert "1 episode(s) still queued: collector unreachable" in result.stderr
    status = json.loads(run_capture("sync", "status", "--json", check=True).stdout)
    assert status["queued"] == 1 and "unreachable" in status["last_error"]


def test_a_refused_token_is_one_line_and_exit_5(
    tmp_path: Path, run_capture: RunCapture, collector: CollectorDouble
) -> None:
    ws = make_ws(tmp_path)
    propose(run_capture, ws, "a.py", BODY, "t1")
    settle(run_capture, ws)
    run_capture("sync", "enable", "--url", collector.url, "--token", "wrong", cwd=ws, check=True)
    result = run_capture("sync", "now")
    assert result.returncode == 5
    assert result.stderr.startswith("capture: error: the collector refused the token (HTTP 401")
    assert len(result.stderr.strip().splitlines()) == 1


def test_now_shows_progress_bars_on_a_terminal(
    tmp_path: Path, run_capture: RunCapture, collector: CollectorDouble, capture_home: Path
) -> None:
    import os
    import pty
    import sys

    from tests.conftest import capture_env

    ws = make_ws(tmp_path)
    propose(run_capture, ws, "a.py", BODY, "t1")
    propose(run_capture, ws, "b.py", BODY, "t2")
    settle(run_capture, ws)
    run_capture("sync", "enable", "--url", collector.url, "--token", "team-token", cwd=ws,
                check=True)  # fmt: skip
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "capture", "sync", "now"],
        env=capture_env(capture_home, COLUMNS="100"), stdout=subprocess.PIPE, stderr=slave,
    )  # fmt: skip
    os.close(slave)
    shown = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate(timeout=60)
    os.close(master)
    assert proc.returncode == 0
    screen = shown.decode("utf-8", "replace")
    assert "anonymizing" in screen and "uploading" in screen and "2/2" in screen
    assert out.decode().startswith("2 episode(s) sent")
