"""Sync settings: off by default, opted into per workspace (or for all), kept in the local store.

The HMAC salt is generated on first use from the OS's randomness, stored in the local database,
and never sent: without it no path digest or secret placeholder can be reversed or linked to
another machine's.
"""

from __future__ import annotations

import getpass
import hmac
import json
import os
import secrets
import socket
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from capture.connection import sqlite3
from capture.errors import ConfigError, InputError
from sync.anonymize.identity import Identity
from sync.anonymize.levels import Level, parse_level
from sync.anonymize.pipeline import WorkspacePolicy
from sync.store import settings_rows
from sync.store.settings_rows import ALL

__all__ = [
    "ALL",
    "Disabled",
    "WorkspaceState",
    "anonymize_workers",
    "OptIn",
    "SyncSettings",
    "contributor_id",
    "disable",
    "enable",
    "load_settings",
    "local_identity",
    "record_run",
    "salt",
    "upload_options",
    "validate_url",
    "workspace_states",
]


@dataclass(frozen=True, slots=True)
class OptIn:
    root: str
    level: Level
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    @property
    def policy(self) -> WorkspacePolicy:
        return WorkspacePolicy(self.level, self.include, self.exclude)

    @property
    def key(self) -> str:
        """Changes whenever what this opt-in lets through changes (a new projection is due)."""
        return json.dumps([self.level.value, self.include, self.exclude])


@dataclass(frozen=True, slots=True)
class SyncSettings:
    enabled: bool = False
    url: str | None = None
    token: str | None = None
    opt_ins: tuple[OptIn, ...] = ()
    #: Workspaces taken out by name: out even under `--all`, until enabled again by name.
    opted_out: tuple[str, ...] = ()
    last_run_at: float | None = None
    last_success_at: float | None = None
    last_error: str | None = None

    @property
    def all_workspaces(self) -> bool:
        return any(o.root == ALL for o in self.opt_ins)

    def opt_in_for(self, root: str | None) -> OptIn | None:
        """The opt-in covering a workspace: none when it was taken out by name, else its own,
        else the `--all` one, else none."""
        if root in self.opted_out:
            return None
        fallback = None
        for o in self.opt_ins:
            if o.root == root:
                return o
            if o.root == ALL:
                fallback = o
        return fallback

    @property
    def active(self) -> bool:
        """Uploads may happen: enabled, with somewhere to send and something opted in."""
        return self.enabled and bool(self.url) and bool(self.token) and bool(self.opt_ins)


@dataclass(frozen=True, slots=True)
class WorkspaceState:
    """Whether one workspace's episodes go, and why (for `capture sync status`)."""

    root: str
    included: bool
    why: str  # "own opt-in", "--all", "taken out by name", "not opted in", "sync is off"
    level: str | None = None


def workspace_states(settings: SyncSettings, known: list[str]) -> list[WorkspaceState]:
    """Every workspace the store knows, plus every one named in an opt-in or opt-out, each
    in or out with the reason: exactly what `refresh` and the uploader's gate go by."""
    roots = sorted(
        set(known) | {o.root for o in settings.opt_ins if o.root != ALL} | set(settings.opted_out)
    )
    out = []
    for root in roots:
        opt_in = settings.opt_in_for(root)
        if root in settings.opted_out:
            out.append(WorkspaceState(root, False, "taken out by name"))
        elif opt_in is None:
            out.append(WorkspaceState(root, False, "not opted in"))
        elif not settings.enabled:
            out.append(WorkspaceState(root, False, "sync is off"))
        else:
            why = "--all" if opt_in.root == ALL else "own opt-in"
            out.append(WorkspaceState(root, True, why, opt_in.level.value))
    return out


def load_settings(conn: sqlite3.Connection) -> SyncSettings:
    row = settings_rows.settings_row(conn)
    if row is None:
        return SyncSettings()
    rows = settings_rows.workspace_rows(conn)
    opt_ins = tuple(
        OptIn(r.root, Level(r.level), r.include, r.exclude) for r in rows if r.opted_out_at is None
    )
    return SyncSettings(
        enabled=bool(row["enabled"]),
        url=row["url"],
        token=row["token"],
        opt_ins=opt_ins,
        opted_out=tuple(r.root for r in rows if r.opted_out_at is not None),
        last_run_at=row["last_run_at"],
        last_success_at=row["last_success_at"],
        last_error=row["last_error"],
    )


def salt(conn: sqlite3.Connection) -> bytes:
    """This machine's salt, created on first use. Concurrent first uses agree on one value."""
    stored = settings_rows.stored_salt(conn)
    if stored is not None:
        return stored
    return settings_rows.keep_salt(conn, secrets.token_bytes(32))


def contributor_id(salt_value: bytes) -> str:
    """Identifies this user to the collector without saying who they are: a salted digest."""
    return hmac.digest(salt_value, b"agent-capture/contributor", "sha256").hex()[:24]


def validate_url(url: str) -> str:
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"not an http(s) URL: {url!r} (e.g. https://collector.example.com)")
    if parts.query or parts.fragment:
        raise InputError(f"the collector URL takes no query or fragment: {url!r}")
    return url.strip().rstrip("/")


def _globs(values: list[str] | None) -> list[str]:
    out = []
    for v in values or []:
        v = v.strip()
        if not v:
            raise InputError("an empty glob pattern")
        out.append(v)
    return out


def enable(
    conn: sqlite3.Connection,
    *,
    now: float,
    root: str,
    url: str | None = None,
    token: str | None = None,
    level: str | None = None,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
) -> SyncSettings:
    """Opt a workspace (or ALL) in. url and token are needed the first time, kept after."""
    current = load_settings(conn)
    url = validate_url(url) if url else current.url
    if token is not None and not token.strip():
        raise InputError("the token is empty")
    token = token.strip() if token else current.token
    if not url:
        raise InputError("--url is required the first time sync is enabled")
    if not token:
        raise InputError("--token is required the first time sync is enabled")
    try:
        chosen = parse_level(level) if level else None
    except ValueError as exc:
        raise InputError(str(exc)) from None
    # What this root's own row holds is kept when not given again: `enable --all` run a second
    # time must not raise a metrics level back to the default, nor a workspace enabled again
    # after `disable --workspace` lose its --exclude globs.
    row = settings_rows.own_opt_in(conn, root)
    existing = OptIn(root, Level(row.level), row.include, row.exclude) if row is not None else None
    new_level = chosen or (existing.level if existing else Level.REDACTED)
    new_include = (
        _globs(include) if include is not None else list(existing.include if existing else [])
    )
    new_exclude = (
        _globs(exclude) if exclude is not None else list(existing.exclude if existing else [])
    )
    before = current.opt_in_for(root) if root != ALL else existing
    after = OptIn(root, new_level, tuple(new_include), tuple(new_exclude))
    if before is not None and before.key != after.key:
        # A lower level or a new glob holds from now on: what was queued under the old one is
        # dropped (and projected afresh by the next refresh), never sent.
        settings_rows.drop_queued(conn, root)
    settings_rows.turn_on(conn, url=url, token=token, now=now)
    # Enabling a workspace by name takes it out of the opted-out list; `--all` leaves that
    # list alone (what was taken out by name stays out).
    settings_rows.opt_in(
        conn, root=root, level=new_level.value, include=new_include, exclude=new_exclude, now=now
    )
    salt(conn)
    return load_settings(conn)


@dataclass(frozen=True, slots=True)
class Disabled:
    """What `disable` did: queued episodes dropped, and whether what was named had been in."""

    dropped: int
    was_in: bool
    removed: tuple[str, ...] = ()  # the opt-ins removed (`--all`: every one)


def disable(conn: sqlite3.Connection, *, now: float, root: str | None = None) -> Disabled:
    """Turn sync off (root None or ALL), or take one workspace out by name.

    Off: sync is disabled and every opt-in removed (a later `enable` names again what goes),
    whether it was `--all` or single workspaces. One workspace: it is marked opted out, which
    holds under `--all` too, until `enable --workspace` names it again. Either way the episodes
    queued and not yet sent for what is taken out are dropped from the outbox (and projected
    afresh if it is opted in again)."""
    current = load_settings(conn)
    if root is None or root == ALL:
        removed = tuple(o.root for o in current.opt_ins)
        settings_rows.turn_off(conn, now=now)
        was_in = current.enabled and bool(removed)
        dropped = settings_rows.drop_queued(conn, None)
    else:
        covering = current.opt_in_for(root)
        was_in = current.enabled and covering is not None
        level = covering.level.value if covering is not None else Level.REDACTED.value
        settings_rows.opt_out(conn, root=root, level=level, now=now)
        removed = (root,) if covering is not None and covering.root == root else ()
        dropped = settings_rows.drop_queued(conn, root)
    return Disabled(dropped, was_in, removed)


def record_run(conn: sqlite3.Connection, *, at: float, error: str | None, success: bool) -> None:
    if success:
        settings_rows.record_success(conn, at=at)
    else:
        settings_rows.record_failure(conn, at=at, error=error)


def local_identity(config_file: Path | None = None, env: dict[str, str] | None = None) -> Identity:
    """This user's names as the machine knows them, plus `[sync] scrub = [...]` from
    config.toml (a real name, a company, a client's name: words to remove wherever they are)."""
    env = dict(os.environ) if env is None else env
    users = {getpass.getuser(), env.get("USER", ""), env.get("LOGNAME", "")}
    extra: list[str] = []
    try:
        import pwd

        entry = pwd.getpwuid(os.getuid())
        users.add(entry.pw_name)
        real_name = entry.pw_gecos.split(",")[0].strip()
        if real_name:
            extra.append(real_name)
            extra.extend(part for part in real_name.split() if len(part) >= 3)
    except (ImportError, KeyError):  # pragma: no cover - not on Windows
        pass
    home = env.get("HOME")
    if home:
        users.add(Path(home).name)
    # gethostname only: getfqdn would ask DNS, and nothing here may touch the network.
    hosts = {socket.gethostname()}
    hosts.update(h.split(".")[0] for h in list(hosts))
    if config_file is not None:
        extra.extend(_configured_scrub(config_file))
    return Identity(
        usernames=tuple(sorted(u for u in users if u)),
        hostnames=tuple(sorted(h for h in hosts if h and h != "localhost")),
        extra=tuple(extra),
    )


def _configured_scrub(config_file: Path) -> list[str]:
    try:
        with config_file.open("rb") as fh:
            table: dict[str, Any] = tomllib.load(fh)
    except FileNotFoundError:
        return []
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc
    section = table.get("sync", {})
    words = section.get("scrub", []) if isinstance(section, dict) else []
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ConfigError(f"{config_file}: [sync] scrub must be a list of strings")
    return list(words)


def upload_options(config_file: Path | None = None, env: dict[str, str] | None = None) -> Any:
    """How the uploader paces itself: `[sync]` in config.toml (batch_size, max_attempts,
    backoff = "1s,60s", timeout = "30s"), overridden by CAPTURE_SYNC_BATCH,
    CAPTURE_SYNC_MAX_ATTEMPTS, CAPTURE_SYNC_BACKOFF and CAPTURE_SYNC_TIMEOUT."""
    from capture.edits.windows import parse_duration
    from sync.uploader import UploadOptions

    env = dict(os.environ) if env is None else env
    section: dict[str, Any] = {}
    if config_file is not None:
        try:
            with config_file.open("rb") as fh:
                loaded = tomllib.load(fh).get("sync", {})
            section = loaded if isinstance(loaded, dict) else {}
        except FileNotFoundError:
            pass
        except (tomllib.TOMLDecodeError, OSError) as exc:
            raise ConfigError(f"{config_file}: {exc}") from exc

    def setting(key: str, var: str) -> str | None:
        value = env.get(var) or section.get(key)
        return None if value is None else str(value)

    values: dict[str, Any] = {}
    try:
        if (v := setting("batch_size", "CAPTURE_SYNC_BATCH")) is not None:
            values["batch_size"] = max(1, int(v))
        if (v := setting("max_attempts", "CAPTURE_SYNC_MAX_ATTEMPTS")) is not None:
            values["max_attempts"] = max(1, int(v))
    except ValueError as exc:
        raise ConfigError(f"sync settings: {exc}") from None
    if (v := setting("backoff", "CAPTURE_SYNC_BACKOFF")) is not None:
        parts = [p for p in v.split(",") if p.strip()]
        if len(parts) != 2:
            raise ConfigError(f"sync backoff must be 'BASE,CAP' (e.g. 1s,60s), not {v!r}")
        values["backoff_base"] = parse_duration(parts[0])
        values["backoff_cap"] = parse_duration(parts[1])
    if (v := setting("timeout", "CAPTURE_SYNC_TIMEOUT")) is not None:
        values["timeout"] = parse_duration(v)
    return UploadOptions(**values)


def anonymize_workers(config_file: Path | None = None, env: dict[str, str] | None = None) -> int:
    """Processes to anonymize a large backlog with: `[sync] workers` or CAPTURE_SYNC_WORKERS;
    by default 2 where there is more than one CPU (loading and anonymizing cost 3x what queueing
    and uploading do: two processes for them keep the uploader fed), else 1."""
    env = dict(os.environ) if env is None else env
    value: Any = env.get("CAPTURE_SYNC_WORKERS")
    if value is None and config_file is not None and config_file.exists():
        with config_file.open("rb") as fh:
            section = tomllib.load(fh).get("sync", {})
        value = section.get("workers") if isinstance(section, dict) else None
    if value is None:
        return 2 if (os.cpu_count() or 1) > 1 else 1
    try:
        return max(1, min(16, int(value)))
    except ValueError:
        raise ConfigError(f"sync workers must be a number, not {value!r}") from None
