"""Sending the outbox to the collector: gzip'd JSON batches over httpx.

The shell around `sync.outbox`'s decisions. What happens to a batch:

- 200: each episode's result is applied (accepted and duplicate are sent; rejected is set aside);
  an episode the answer does not mention is retried;
- 401/403: the upload stops (the token is wrong; nothing is wrong with the episodes);
- 413, 422 and other 4xx: a batch of several is halved until the refused episodes are alone; an
  episode refused alone is set aside, so it never blocks newer ones;
- 429: wait as long as Retry-After says;
- 5xx, a timeout after sending: the batch's rows back off (exponentially, with jitter) and count
  an attempt; a row that reaches the attempt limit is set aside. Rows that failed twice go alone;
- the collector cannot be reached: the uploader waits (exponential backoff with jitter) and
  tries again; no attempt is counted, since nothing reached the collector.

Every change of a row's state is one short transaction after the answer: a process killed at any
moment leaves each row either still queued (sent again with the same idempotency key, which the
collector answers `duplicate`) or done.
"""

from __future__ import annotations

import gzip
import json
import random
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from capture.errors import CaptureError
from capture.store.database import Store
from sync.outbox import (
    DEFAULT_MAX_ATTEMPTS,
    ISOLATE_AFTER,
    Outbox,
    Row,
    Verdict,
    backoff_delay,
    body_for,
    classify_status,
    parse_retry_after,
    read_results,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["DrainReport", "SyncAuthError", "UploadOptions", "Uploader"]

ENDPOINT = "/v1/episodes"


class SyncAuthError(CaptureError):
    exit_code = 5


@dataclass(frozen=True, slots=True)
class UploadOptions:
    batch_size: int = 200
    max_batch_bytes: int = 4_000_000
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    backoff_base: float = 1.0
    backoff_cap: float = 60.0
    max_pause: float = 300.0
    timeout: float = 30.0
    compress_level: int = 3


@dataclass(slots=True)
class DrainReport:
    sent: int = 0
    duplicates: int = 0
    set_aside: int = 0
    retried: int = 0
    requests: int = 0
    unreachable: int = 0
    last_error: str | None = None
    auth_failed: bool = False
    timed_out: bool = False
    stopped: bool = False
    withdrawn: int = 0  # queued rows dropped unsent: their workspace was taken out meanwhile
    set_aside_ids: list[str] = field(default_factory=list)


class Uploader:
    def __init__(
        self,
        store: Store,
        *,
        url: str,
        token: str,
        contributor: str,
        options: UploadOptions = UploadOptions(),
        client: httpx.Client | None = None,
        clock: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
        opt_in_gate: bool = False,
    ) -> None:
        """`opt_in_gate`: before each request, drop the batch's rows whose workspace is not
        opted in any more (what `capture sync` and the server use; off for rows queued by hand
        without settings, as in the uploader's own tests)."""
        self.store = store
        self.opt_in_gate = opt_in_gate
        self.outbox = Outbox(store.conn)
        self.url = url.rstrip("/") + ENDPOINT
        self.options = options
        self.clock = clock
        self.rand = rand
        self.batch_limit = options.batch_size
        self._headers = {
            "Content-Encoding": "gzip",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
            "X-Capture-Contributor": contributor,
        }
        self._client = client
        self._own_client = client is None

    @property
    def client(self) -> httpx.Client:
        if self._client is None:
            import httpx

            # trust_env=False: no proxy or netrc from the environment; the user named the URL.
            self._client = httpx.Client(timeout=self.options.timeout, trust_env=False)
        return self._client

    def close(self) -> None:
        if self._own_client and self._client is not None:
            self._client.close()
            self._client = None

    # -- one batch -------------------------------------------------------------------------

    def form_batch(self, rows: Sequence[Row]) -> list[Row]:
        """The next batch from due rows (oldest first): a row that failed before goes alone."""
        first = rows[0]
        if first.attempts >= ISOLATE_AFTER:
            return [first]
        batch: list[Row] = []
        size = 0
        for row in rows:
            if row.attempts >= ISOLATE_AFTER:
                continue
            if batch and (
                len(batch) >= self.batch_limit or size + row.size > self.options.max_batch_bytes
            ):
                break
            batch.append(row)
            size += row.size
        return batch

    def _post(self, batch: Sequence[Row]) -> httpx.Response:
        body = gzip.compress(body_for(batch), compresslevel=self.options.compress_level)
        return self.client.post(self.url, content=body, headers=self._headers)

    def _backoff(self, failures: int) -> float:
        return backoff_delay(
            failures, base=self.options.backoff_base, cap=self.options.backoff_cap, rand=self.rand()
        )

    def _fail(self, rows: Sequence[Row], error: str, report: DrainReport) -> None:
        now = self.clock()
        updates = [(r.id, now + self._backoff(r.attempts + 1), error) for r in rows]
        with self.store.transaction():
            gave_up = self.outbox.failed(updates, self.options.max_attempts)
        report.retried += len(rows) - gave_up
        report.set_aside += gave_up
        report.last_error = error

    def send(self, batch: Sequence[Row], report: DrainReport) -> tuple[Verdict | None, float]:
        """Send one batch and apply the answer. Returns the verdict (None: not reached) and how
        long the caller should pause before the next request."""
        import httpx

        report.requests += 1
        try:
            response = self._post(batch)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            report.unreachable += 1
            report.last_error = f"collector unreachable: {type(exc).__name__}: {exc}"
            with self.store.transaction():
                self.outbox.note_error([r.id for r in batch], report.last_error)
            return None, 0.0
        except httpx.HTTPError as exc:
            # The request may have reached the collector: the rows count an attempt.
            self._fail(batch, f"{type(exc).__name__}: {exc}", report)
            return Verdict.RETRY, 0.0
        verdict = classify_status(response.status_code, len(batch))
        if verdict is Verdict.RESULTS:
            try:
                answer = response.json()
            except (json.JSONDecodeError, UnicodeDecodeError):
                self._fail(batch, "collector answered 200 with a body that is not JSON", report)
                return Verdict.RETRY, 0.0
            self._apply_results(batch, answer, report)
            return verdict, 0.0
        detail = f"HTTP {response.status_code}: {_excerpt(response)}"
        if verdict is Verdict.AUTH:
            report.auth_failed = True
            report.last_error = f"the collector refused the token ({detail})"
            return verdict, 0.0
        if verdict is Verdict.RATE_LIMITED:
            report.last_error = detail
            wait = parse_retry_after(response.headers.get("Retry-After"), self.clock())
            if wait is None:
                wait = self._backoff(2)
            return verdict, min(wait, self.options.max_pause)
        if verdict is Verdict.SET_ASIDE:
            report.set_aside += 1
            report.set_aside_ids.append(batch[0].key)
            report.last_error = detail
            with self.store.transaction():
                self.outbox.set_aside([(batch[0].id, detail)])
            return verdict, 0.0
        if verdict is Verdict.SPLIT:
            if response.status_code == 413:
                self.batch_limit = max(1, len(batch) // 2)
            report.last_error = detail
            return verdict, 0.0
        self._fail(batch, detail, report)
        return verdict, 0.0

    def _apply_results(self, batch: Sequence[Row], answer: object, report: DrainReport) -> None:
        results = read_results(batch, answer)
        now = self.clock()
        done = [i for i, (status, _) in results.items() if status in ("accepted", "duplicate")]
        refused = [
            (i, f"rejected by the collector: {error or 'no reason given'}")
            for i, (status, error) in results.items()
            if status == "rejected"
        ]
        missing = [r for r in batch if r.id not in results]
        with self.store.transaction():
            self.outbox.mark_sent(done, now)
            if refused:
                self.outbox.set_aside(refused)
        report.sent += len(done)
        report.duplicates += sum(1 for s, _ in results.values() if s == "duplicate")
        report.set_aside += len(refused)
        by_id = {r.id: r for r in batch}
        report.set_aside_ids.extend(by_id[i].key for i, _ in refused)
        if missing:
            self._fail(missing, "the collector's answer did not mention this episode", report)

    # -- until done ------------------------------------------------------------------------

    def drain(
        self,
        *,
        deadline: float | None = None,
        stop: threading.Event | None = None,
        progress: Callable[[DrainReport], None] | None = None,
        filling: threading.Event | None = None,
    ) -> DrainReport:
        """Send until nothing is due any more (rows waiting for a retry are waited for), the
        token is refused, `deadline` passes or `stop` is set. While `filling` is set, another
        thread is still queueing rows: an empty outbox means "wait", not "done"."""
        report = DrainReport()
        splits: list[list[Row]] = []
        unreachable_in_a_row = 0

        def pause(seconds: float) -> bool:
            """Sleep, unless stopped or past the deadline first; False when the drain ends."""
            if deadline is not None:
                seconds = min(seconds, deadline - self.clock())
                if seconds <= 0:
                    report.timed_out = True
                    return False
            if stop is not None:
                if stop.wait(max(0.0, seconds)):
                    report.stopped = True
                    return False
            elif seconds > 0:
                time.sleep(seconds)
            return True

        while True:
            if stop is not None and stop.is_set():
                report.stopped = True
                break
            now = self.clock()
            if deadline is not None and now >= deadline:
                report.timed_out = True
                break
            if splits:
                batch = splits.pop()
            else:
                rows = self.outbox.due(now, self.batch_limit * 2 + 1)
                if not rows:
                    next_at = self.outbox.next_due_at()
                    if next_at is None:
                        if filling is not None and filling.is_set():
                            if not pause(0.05):
                                break
                            continue
                        break
                    if not pause(max(0.01, next_at - now)):
                        break
                    continue
                batch = self.form_batch(rows)
            if self.opt_in_gate:
                # Checked per request, not once per drain: `sync disable` in another process
                # takes effect before the next request, and nothing of what it took out goes.
                gone = self.outbox.uncovered([r.id for r in batch])
                if gone:
                    with self.store.transaction():
                        gone = self.outbox.withdraw_uncovered(sorted(gone))
                if gone:
                    report.withdrawn += len(gone)
                    batch = [r for r in batch if r.id not in gone]
                    if not batch:
                        continue
            verdict, wait = self.send(batch, report)
            if progress is not None:
                progress(report)
            if verdict is None:
                unreachable_in_a_row += 1
                if not pause(self._backoff(unreachable_in_a_row)):
                    break
                continue
            unreachable_in_a_row = 0
            if verdict is Verdict.AUTH:
                break
            if verdict is Verdict.SPLIT:
                half = len(batch) // 2
                splits.extend([batch[half:], batch[:half]])
            elif wait > 0 and not pause(wait):
                break
        return report


def _excerpt(response: httpx.Response, limit: int = 200) -> str:
    try:
        text = response.text
    except Exception:  # noqa: BLE001 - an undecodable body says nothing useful
        return response.reason_phrase or ""
    text = " ".join(text.split())
    return (text[:limit] + "...") if len(text) > limit else (text or response.reason_phrase or "")
