"""Files with live proposals that no editor holds open are followed on disk: their directory
is watched (nothing else), events for other files are dropped, bursts are debounced, and
proposals recorded by another process are picked up within a second."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

from tests.conftest import RunCapture
from tests.support.lspkit import query
from tests.support.rawlsp import RawClient

OLD = "    return 0\n"
NEW = "    result = 0\n    for item in items:\n        result += item\n    return result\n"
ORIGINAL = "def total(items):\n    return 0\n"


def wait_until(predicate, timeout: float, what: str):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_closed_file_followed_on_disk(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "other").mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    target = root / "src" / "calc.py"
    target.write_text(ORIGINAL.replace(OLD, NEW))
    client = RawClient(capture_home, CAPTURE_WINDOWS="30s,60s,90s")
    try:
        client.initialize(root)
        body = {"file": str(target), "old_text": OLD, "new_text": NEW, "agent": "hook"}
        run_capture(
            "propose",
            input=json.dumps(body),
            cwd=root,
            check=True,
            env={"CAPTURE_WINDOWS": "30s,60s,90s"},
        )
        recorded = time.monotonic()
        stats = wait_until(
            lambda: (s := client.stats())["tracking"]["onDisk"] == 1 and s, 5, "the pickup"
        )
        picked = time.monotonic() - recorded
        assert picked < 1.5, f"picked up after {picked:.2f} s"  # polled every 0.25 s
        assert stats["tracking"]["watchedDirectories"] == 1
        # Other files, in the watched directory and elsewhere: nothing reaches the server.
        for i in range(20):
            (root / "src" / f"noise_{i}.py").write_text("x = 1\n")
            (root / "other" / f"noise_{i}.py").write_text("x = 1\n")
        time.sleep(0.5)
        assert client.stats()["server"]["diskEvents"] == 0
        # A burst of writes to the followed file (a formatter, an editor's atomic save) is
        # read once it settles, and carries the region to the new text.
        edited = ORIGINAL.replace(OLD, NEW.replace("result += item", "result += item * 2"))
        for i in range(10):
            target.write_text(edited if i == 9 else edited + "#" * i)
        wait_until(
            lambda: query(capture_home, "SELECT text FROM tracked_files")[0]["text"] == edited,
            5,
            "the disk change to reach the store",
        )
        server = client.stats()["server"]
        assert server["diskEvents"] >= 10
        assert 1 <= server["diskReads"] <= 3
        (hunk,) = query(capture_home, "SELECT region_start, region_end FROM hunks")
        assert edited[hunk["region_start"] : hunk["region_end"]] == NEW.replace(
            "result += item", "result += item * 2"
        )
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.kill()
