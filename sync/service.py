"""What `capture sync now` and the server's background uploader do: fill the outbox, then drain
it. The server calls `start_background_sync`, which starts nothing (and imports no HTTP client)
unless sync is enabled."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from capture.config import Config
from capture.store.database import Store
from sync.anonymize.pipeline import Anonymizer
from sync.lock import upload_lock
from sync.refresh import RefreshReport, refresh
from sync.settings import (
    SyncSettings,
    anonymize_workers,
    contributor_id,
    load_settings,
    local_identity,
    record_run,
    salt,
    upload_options,
)
from sync.store.schema import open_store
from sync.uploader import DrainReport, Uploader

__all__ = [
    "BackgroundSync",
    "anonymizer_for",
    "fill_outbox",
    "start_background_sync",
    "sync_now",
    "upload",
]

log = logging.getLogger("capture.sync")


def anonymizer_for(store: Store, config: Config) -> Anonymizer:
    with store.transaction():
        key = salt(store.conn)
    return Anonymizer(key, local_identity(config.paths.config_file))


def fill_outbox(
    store: Store,
    config: Config,
    settings: SyncSettings,
    *,
    now: float,
    progress: Callable[[int, int], None] | None = None,
    anonymizer: Anonymizer | None = None,
) -> RefreshReport:
    return refresh(
        store,
        settings,
        anonymizer or anonymizer_for(store, config),
        now=now,
        progress=progress,
        workers=anonymize_workers(config.paths.config_file),
    )


def upload(
    store: Store,
    config: Config,
    settings: SyncSettings,
    *,
    deadline: float | None = None,
    stop: threading.Event | None = None,
    progress: Callable[[DrainReport], None] | None = None,
    wait_for_lock: float = 0.0,
    filling: threading.Event | None = None,
) -> DrainReport | None:
    """Drain the outbox; None when another uploader holds the lock."""
    assert settings.url and settings.token
    with upload_lock(config.paths.state_dir / "sync.lock", wait=wait_for_lock) as held:
        if not held:
            return None
        with store.transaction():
            contributor = contributor_id(salt(store.conn))
        uploader = Uploader(
            store,
            url=settings.url,
            token=settings.token,
            contributor=contributor,
            options=upload_options(config.paths.config_file),
            opt_in_gate=True,
        )
        try:
            report = uploader.drain(
                deadline=deadline, stop=stop, progress=progress, filling=filling
            )
        finally:
            uploader.close()
        failed = report.auth_failed or (report.timed_out and report.last_error is not None)
        with store.transaction():
            record_run(store.conn, at=time.time(), error=report.last_error, success=not failed)
        return report


def sync_now(
    store: Store,
    config: Config,
    settings: SyncSettings,
    *,
    deadline: float,
    refresh_progress: Callable[[int, int], None] | None = None,
    upload_progress: Callable[[DrainReport], None] | None = None,
    wait_for_lock: float = 0.0,
) -> tuple[RefreshReport, DrainReport | None]:
    """Fill the outbox and drain it at the same time: a thread with its own connection uploads
    each chunk as soon as it is queued, so the network wait overlaps the anonymizing."""
    filling = threading.Event()
    filling.set()
    result: dict[str, DrainReport | None] = {}
    failure: list[BaseException] = []

    def drain() -> None:
        try:
            with open_store(store.path) as own:
                result["report"] = upload(
                    own,
                    config,
                    settings,
                    deadline=deadline,
                    progress=upload_progress,
                    wait_for_lock=wait_for_lock,
                    filling=filling,
                )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=drain, name="capture-sync-upload", daemon=True)
    thread.start()
    try:
        prepared = fill_outbox(store, config, settings, now=time.time(), progress=refresh_progress)
    finally:
        filling.clear()
        thread.join()
    if failure:
        raise failure[0]
    return prepared, result.get("report")


class BackgroundSync:
    """A daemon thread: every `interval` seconds, fill the outbox and drain it."""

    def __init__(self, config: Config, interval: float = 60.0) -> None:
        self.config = config
        self.interval = interval
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self._run, name="capture-sync", daemon=True)

    def start(self) -> BackgroundSync:
        self.thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self.stop_event.set()
        self.thread.join(timeout)

    def _run(self) -> None:
        store = open_store(self.config.paths.db)
        anonymizer: Anonymizer | None = None
        try:
            while not self.stop_event.is_set():
                try:
                    settings = load_settings(store.conn)
                    if settings.active:
                        anonymizer = anonymizer or anonymizer_for(store, self.config)
                        fill_outbox(
                            store, self.config, settings, now=time.time(), anonymizer=anonymizer
                        )
                        upload(
                            store,
                            self.config,
                            settings,
                            deadline=time.time() + self.interval,
                            stop=self.stop_event,
                        )
                except Exception:  # noqa: BLE001 - the server must outlive a failed upload
                    log.exception("background sync failed; retrying in %.0fs", self.interval)
                self.stop_event.wait(self.interval)
        finally:
            store.close()


def start_background_sync(config: Config, interval: float = 60.0) -> BackgroundSync | None:
    """For `capture serve`: a background uploader when sync is enabled, else nothing at all."""
    with open_store(config.paths.db) as store:
        if not load_settings(store.conn).active:
            return None
    return BackgroundSync(config, interval).start()
