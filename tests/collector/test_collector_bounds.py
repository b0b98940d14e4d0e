"""One token cannot take the collector's memory: 32 zip bombs at once on one token are each
refused 413 while inflating, the process's peak RSS stays under the documented cap, nothing
answers 5xx, and another team's uploads are served meanwhile. A text field over the field
limit is refused 413, naming the field."""

from __future__ import annotations

import gzip
import json
import threading
from pathlib import Path

import httpx

from tests.collector.conftest import StartCollector
from tests.support.collector_support import item, make_episode, make_token, upload_headers

#: The collector's documented peak RSS under this test (docs/collector.md, "Limits").
PEAK_RSS_CAP_MB = 250
BOMBS = 32


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def bomb() -> bytes:
    """A 60 MB body that gzips to about 60 KB: a valid start, then a prompt that never ends."""
    start = b'{"episodes": [{"id": "bomb", "revision": 1, "episode": {"prompt": "'
    return gzip.compress(start + b"a" * (60 * 1024 * 1024) + b'"}}]}', compresslevel=9)


def test_32_zip_bombs_on_one_token_are_413_and_other_teams_are_served(
    tmp_path: Path, start_collector: StartCollector
) -> None:
    db = f"sqlite:///{tmp_path / 'collector.db'}"
    attacker = make_token(db, "attackers", "ingest")
    others = make_token(db, "others", "ingest")
    collector = start_collector(db, "--rate", "1000", "--burst", "1000")
    body = bomb()
    assert len(body) < 100_000
    statuses: list[int] = []
    errors: list[str] = []
    served: list[int] = []
    lock = threading.Lock()

    def attack() -> None:
        with httpx.Client(timeout=120) as client:
            r = client.post(
                f"{collector.url}/v1/episodes", content=body, headers=upload_headers(attacker)
            )
            with lock:
                statuses.append(r.status_code)
                errors.append(r.json()["error"])

    def legitimate(n: int) -> None:
        with httpx.Client(timeout=120) as client:
            for i in range(4):
                episode = make_episode(f"legit{n}-{i}")
                r = client.post(
                    f"{collector.url}/v1/episodes",
                    content=gzip.compress(json.dumps({"episodes": [item(episode)]}).encode()),
                    headers=upload_headers(others),
                )
                with lock:
                    served.append(r.status_code)
                assert r.json()["results"][0]["status"] == "accepted", r.text

    threads = [threading.Thread(target=attack) for _ in range(BOMBS)]
    threads += [threading.Thread(target=legitimate, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert statuses == [413] * BOMBS, statuses
    assert set(errors) == {"body_too_large"}
    assert served == [200] * 12
    peak = peak_rss_mb(collector.proc.pid)
    print(f"collector peak RSS under {BOMBS} zip bombs: {peak:.0f} MB")
    assert peak < PEAK_RSS_CAP_MB, peak


def test_a_text_field_over_the_limit_is_413_naming_the_field(
    tmp_path: Path, start_collector: StartCollector
) -> None:
    db = f"sqlite:///{tmp_path / 'collector.db'}"
    token = make_token(db, "t", "ingest")
    collector = start_collector(db)
    fine = make_episode("fine")
    big = make_episode("big")
    big["prompt"] = "p" * (3 * 1024 * 1024)  # under the body limits, over the field limit
    raw = gzip.compress(json.dumps({"episodes": [item(fine), item(big)]}).encode())
    with httpx.Client(timeout=60) as client:
        r = client.post(f"{collector.url}/v1/episodes", content=raw, headers=upload_headers(token))
        assert r.status_code == 413, r.text
        assert r.json()["error"] == "field_too_large"
        assert r.json()["field"] == "episodes[1].episode.prompt"
        assert "2097152 bytes" in r.json()["message"]
        # alone, the fine one is taken
        raw = gzip.compress(json.dumps({"episodes": [item(fine)]}).encode())
        r = client.post(f"{collector.url}/v1/episodes", content=raw, headers=upload_headers(token))
        assert r.json()["results"][0]["status"] == "accepted"
