"""Slowloris on loopback: 1,100 connections that send their request headers a line at a time
(reconnecting when closed) against a collector whose open-file limit is 1,024, as a default
systemd unit gives. Legitimate uploads keep succeeding, and the collector says in its log that
it reached its connection limit."""

from __future__ import annotations

import gzip
import json
import resource
import socket
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.support.collector_support import (
    Collector,
    item,
    make_episode,
    make_token,
    upload_headers,
)

TRICKLERS = 1_100
FILE_LIMIT = 1_024
UPLOADS = 12


class Trickler:
    """Holds `count` connections open, each sending one header line now and then, never the
    blank line that ends the headers; a connection the server closes is opened again."""

    def __init__(self, host: str, port: int, count: int) -> None:
        self.address = (host, port)
        self.count = count
        self.stop = threading.Event()
        self.reconnects = 0
        self.peak_open = 0
        self.thread = threading.Thread(target=self.run, daemon=True)

    def connect(self) -> socket.socket | None:
        try:
            s = socket.create_connection(self.address, timeout=5)
            s.sendall(b"POST /v1/episodes HTTP/1.1\r\nHost: collector\r\n")
            s.setblocking(False)
            return s
        except OSError:
            return None

    def run(self) -> None:
        sockets: list[socket.socket | None] = [self.connect() for _ in range(self.count)]
        while not self.stop.is_set():
            for i, s in enumerate(sockets):
                if self.stop.is_set():
                    break
                if s is not None:
                    try:
                        s.send(b"X-Trickle: 1\r\n")
                        if s.recv(1, socket.MSG_PEEK) == b"":
                            raise OSError("closed")
                    except BlockingIOError:
                        continue
                    except OSError:
                        s.close()
                        s = None
                    else:
                        continue
                sockets[i] = self.connect()
                self.reconnects += 1
            self.peak_open = max(self.peak_open, sum(s is not None for s in sockets))
            self.stop.wait(0.5)
        for s in sockets:
            if s is not None:
                s.close()


def test_legitimate_uploads_succeed_under_1100_trickling_connections(tmp_path: Path) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < TRICKLERS + 200:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
    db = f"sqlite:///{tmp_path / 'collector.db'}"
    token = make_token(db, "team", "ingest")
    collector = Collector(db, tmp_path / "home", nofile=FILE_LIMIT).start()
    trickler = Trickler(
        urlsplit(collector.url).hostname or "", urlsplit(collector.url).port or 0, TRICKLERS
    )
    answers: list[str] = []
    try:
        trickler.thread.start()
        deadline = time.monotonic() + 60
        while trickler.peak_open < TRICKLERS and time.monotonic() < deadline:
            time.sleep(0.1)  # the tricklers are all in
        for i in range(UPLOADS):
            episode = make_episode(f"legit{i}")
            body = gzip.compress(json.dumps({"episodes": [item(episode)]}).encode())
            r = httpx.post(
                f"{collector.url}/v1/episodes",
                content=body,
                headers=upload_headers(token),
                timeout=30,
            )
            assert r.status_code == 200, r.text
            answers.append(r.json()["results"][0]["status"])
    finally:
        trickler.stop.set()
        trickler.thread.join(timeout=30)
        collector.stop()
    assert answers == ["accepted"] * UPLOADS
    assert trickler.reconnects > 0  # the collector closed tricklers to make room
    log = collector.proc.stderr.read() if collector.proc.stderr else ""
    assert "at the limit of" in log, log[-2000:]
