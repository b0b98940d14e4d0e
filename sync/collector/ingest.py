"""From an upload's bytes to rows to store: plain functions, no I/O.

The order of the checks is the contract: undecodable bytes are 400, a body or batch over the
limits 413, a batch that breaks the wire schema 422 (naming the field) — in all three cases
nothing of the batch is stored. Within a well-formed batch each episode is judged on its own:
`rejected` (with the reason) when it is inconsistent or against the collector's policy, else it
becomes a row whose fate (`accepted` or `duplicate`) the storage decides.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

import orjson

from capture.episode.vocabulary import LEVELS, SUPPORTED_SCHEMAS, TIERS, Outcome
from capture.moments import believable, readable
from sync.collector.errors import ApiError
from sync.collector.validation import SchemaViolation, Validator

__all__ = [
    "MAX_GZIP_MEMBERS",
    "METRIC_FIELDS",
    "METRIC_FIELDS_V1",
    "TIERS",
    "EpisodeCurve",
    "EpisodeMetrics",
    "EpisodeRow",
    "Rejection",
    "check_batch",
    "decode_body",
    "dedupe_in_batch",
    "episode_curve",
    "episode_metrics",
    "latest_per_episode",
    "parse_json",
    "parse_time",
    "prepare",
    "week_of",
]

#: Members one gzip body may hold (an uploader sends one; a proxy or `cat` may join a few).
MAX_GZIP_MEMBERS = 64

#: The outcomes counted per proposal (a rejected proposal is counted by its state).
_KNOWN_OUTCOMES = tuple(o.value for o in Outcome if o is not Outcome.REJECTED)


@dataclass(frozen=True, slots=True)
class EpisodeMetrics:
    """What the team report sums, computed once per episode when it arrives."""

    proposals: int = 0
    shown: int = 0
    applied: int = 0
    rejected: int = 0
    kept: int = 0
    edited: int = 0
    undone: int = 0
    lost: int = 0
    pending: int = 0
    chars_added: int = 0
    lines_added: int = 0
    # Characters of applied, measured proposals, and how many of them survived (retention x
    # chars_added, in thousandths of a character so that sums stay exact integers as revisions
    # add and remove them): the team's retention is the ratio of the two sums.
    measured_chars: int = 0
    retained_millichars: int = 0
    test_runs: int = 0
    test_runs_passed: int = 0
    # Proposals per current tier (uploads from before tiers were carried count in none).
    tier_gold: int = 0
    tier_silver: int = 0
    tier_edited: int = 0
    tier_rejected: int = 0
    tier_undone: int = 0
    tier_debt: int = 0
    tier_noise: int = 0
    tier_quarantine: int = 0
    # Repairs: 1 when a linked run failed, and 1 when a passing run followed a failing one.
    failing_episodes: int = 0
    repaired_episodes: int = 0


METRIC_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(EpisodeMetrics))
#: The figures the collector's first schema (m001, m002) made columns for; the later ones were
#: added by m004_tier_figures. Shipped migrations must keep building what they built.
METRIC_FIELDS_V1: tuple[str, ...] = METRIC_FIELDS[: METRIC_FIELDS.index("tier_gold")]


@dataclass(frozen=True, slots=True)
class EpisodeCurve:
    """What the report needs of each episode beyond sums: not additive, so kept per episode.

    `first_test_s`: whole seconds from the first applied proposal to the first linked test run
    that started at or after it (None: no such run; whole, so that the storage's cells of it
    stay few). `windows`: per checkpoint window label, the
    number of applied proposals' checkpoints that measured a retention and their retentions'
    sum in thousandths."""

    first_test_s: float | None = None
    windows: dict[str, tuple[int, int]] | None = None

    def windows_json(self) -> str | None:
        if not self.windows:
            return None
        return orjson.dumps({k: list(v) for k, v in self.windows.items()}).decode()


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    episode_id: str
    revision: int
    level: str
    contributor: str | None
    received_at: float
    agent: str
    model: str
    started_at: float | None
    week: str | None
    metrics: EpisodeMetrics
    body: str
    curve: EpisodeCurve = EpisodeCurve()

    @property
    def key(self) -> tuple[str, int]:
        return (self.episode_id, self.revision)


@dataclass(frozen=True, slots=True)
class Rejection:
    episode_id: str
    revision: int
    error: str


def decode_body(raw: bytes, content_encoding: str | None, max_decoded: int) -> bytes:
    """The JSON bytes of a body sent with Content-Encoding gzip (or none).

    A gzip body may hold several members one after the other (RFC 1952 allows it; `cat a.gz
    b.gz` makes one): every member is read and their output joined, as `gzip -d` does. The size
    limit holds for the whole output, and at most MAX_GZIP_MEMBERS members are read (a body of
    many empty members would cost a decoder each). Anything after a member that is not another
    whole member (garbage, zero padding, a truncated member) is a 400: nothing is ignored.
    """
    encoding = (content_encoding or "identity").strip().lower()
    if encoding == "identity":
        return raw
    if encoding not in ("gzip", "x-gzip"):
        raise ApiError(
            415, "unsupported_encoding", f"Content-Encoding {encoding!r}: send gzip or identity"
        )
    parts: list[bytes] = []
    size = 0
    rest = raw
    members = 0
    while True:
        # A small gzip body can inflate to gigabytes: inflate at most max_decoded + 1 bytes
        # over all members (the budget is never 0, which zlib would read as "no limit").
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            part = inflater.decompress(rest, max_decoded + 1 - size)
        except zlib.error as exc:
            where = f" after member {members}" if members else ""
            raise ApiError(400, "bad_gzip", f"the body is not valid gzip{where}: {exc}") from None
        parts.append(part)
        size += len(part)
        if size > max_decoded:
            raise ApiError(
                413, "body_too_large", f"the body inflates to more than {max_decoded} bytes"
            )
        if not inflater.eof:
            raise ApiError(400, "bad_gzip", "the gzip stream is truncated")
        members += 1
        rest = inflater.unused_data
        if rest and members >= MAX_GZIP_MEMBERS:
            raise ApiError(
                400, "bad_gzip", f"the body holds more than {MAX_GZIP_MEMBERS} gzip members"
            )
        if not rest:
            return parts[0] if len(parts) == 1 else b"".join(parts)


def parse_json(data: bytes) -> Any:
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, "bad_json", f"the body is not valid JSON: {exc}") from None


def check_batch(batch: Any, validate: Validator, max_batch: int) -> list[dict[str, Any]]:
    """The batch's items, once the whole batch matches the wire schema."""
    if isinstance(batch, dict) and isinstance(batch.get("episodes"), list):
        count = len(batch["episodes"])
        if count > max_batch:
            raise ApiError(
                413,
                "batch_too_large",
                f"the batch holds {count} episodes; at most {max_batch} per request",
                field="episodes",
            )
    try:
        validate(batch)
    except SchemaViolation as exc:
        raise ApiError(422, "invalid", str(exc), field=exc.field) from None
    items: list[dict[str, Any]] = batch["episodes"]
    return items


def _revision(item: dict[str, Any]) -> int:
    return int(item["revision"])


def prepare(
    item: dict[str, Any],
    *,
    contributor: str | None,
    received_at: float,
    max_level: str = "full",
) -> EpisodeRow | Rejection:
    """One validated batch item as a row to store, or the reason it is refused."""
    episode_id = item["id"]
    revision = _revision(item)
    episode: dict[str, Any] = item["episode"]
    level = item["level"]

    def refuse(error: str) -> Rejection:
        return Rejection(episode_id, revision, error)

    if episode["id"] != episode_id:
        return refuse(f"episode.id {episode['id']!r} differs from id {episode_id!r}")
    if item["idempotency_key"] != f"{episode_id}:{revision}":
        return refuse(f"idempotency_key must be {episode_id}:{revision}")
    if episode["schema"] not in SUPPORTED_SCHEMAS:
        return refuse(
            f"episode.schema {episode['schema']!r} is not supported by this collector "
            f"(supported: {', '.join(SUPPORTED_SCHEMAS)})"
        )
    if LEVELS.index(level) > LEVELS.index(max_level):
        return refuse(f"level {level} is not accepted by this collector (at most {max_level})")
    leak = _code_in_metrics_level(episode) if level == "metrics" else None
    if leak:
        return refuse(f"level metrics must not carry {leak}")
    started_at: float | None = None
    if episode.get("started_at") is not None:
        try:
            started_at = parse_time(episode["started_at"])
        except ValueError:
            return refuse(f"episode.started_at {episode['started_at']!r} is not a valid time")
        if not believable(started_at, wall=received_at):
            return refuse(
                f"episode.started_at {episode['started_at']!r} is outside 2000 .. a day from now"
            )
    return EpisodeRow(
        episode_id=episode_id,
        revision=revision,
        level=level,
        contributor=contributor,
        received_at=received_at,
        agent=_clean(episode.get("agent")) or "unknown",
        model=_clean(episode.get("model")) or "unknown",
        started_at=started_at,
        week=week_of(started_at) if started_at is not None else None,
        metrics=episode_metrics(episode),
        body=orjson.dumps(episode).decode(),
        curve=episode_curve(episode),
    )


def _clean(text: str | None) -> str | None:
    # PostgreSQL text cannot hold NUL; the body keeps it (escaped in JSON), the columns drop it.
    return text.replace("\x00", "") if text else text


def _code_in_metrics_level(episode: dict[str, Any]) -> str | None:
    if episode.get("prompt") is not None:
        return "episode.prompt"
    for i, proposal in enumerate(episode["proposals"]):
        for j, hunk in enumerate(proposal.get("hunks") or ()):
            for name in ("old_text", "new_text"):
                if hunk.get(name) is not None:
                    return f"episode.proposals[{i}].hunks[{j}].{name}"
    return None


_EPOCH = datetime(1970, 1, 1)
_RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)


def parse_time(text: str) -> float:
    """Seconds since the epoch of an RFC 3339 date-time; ValueError if it is not one."""
    if not _RFC3339.match(text):
        raise ValueError(f"not an RFC 3339 date-time: {text!r}")
    moment = datetime.fromisoformat(text.upper())
    offset = moment.utcoffset() or timedelta(0)
    # Naive arithmetic: aware datetimes overflow near year 1 and 9999 once shifted to UTC.
    return (moment.replace(tzinfo=None) - _EPOCH).total_seconds() - offset.total_seconds()


def week_of(ts: float) -> str | None:
    """The Monday (UTC) of the ISO week holding `ts`, as YYYY-MM-DD (None out of range)."""
    try:
        day = (_EPOCH + timedelta(seconds=ts)).date()
        return (day - timedelta(days=day.weekday())).isoformat()
    except OverflowError:
        return None


def _count(value: Any) -> int:
    # Validated already: an integer (maybe written 3.0) or null.
    return int(value) if value else 0


def _passed(run: dict[str, Any]) -> bool:
    if run.get("exit_code") is not None:
        return bool(run["exit_code"] == 0)
    return (
        _count(run.get("failed")) == 0
        and _count(run.get("errors")) == 0
        and (_count(run.get("passed")) > 0)
    )


def _failed(run: dict[str, Any]) -> bool:
    if run.get("exit_code") is not None:
        return bool(run["exit_code"] != 0)
    return _count(run.get("failed")) > 0 or _count(run.get("errors")) > 0


def _time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        moment = parse_time(value)
    except ValueError:
        return None
    # a time no report can place is left out of the figures, as a missing one is
    return moment if readable(moment) else None


def _runs_in_order(episode: dict[str, Any]) -> list[tuple[float, dict[str, Any]]]:
    runs = []
    for run in episode.get("test_runs") or ():
        at = _time(run.get("started_at"))
        if at is not None:
            runs.append((at, run))
    runs.sort(key=lambda r: r[0])
    return runs


def _repairs(runs: list[tuple[float, dict[str, Any]]]) -> tuple[int, int]:
    """(1 if a run failed, 1 if a passing run followed a failing one)."""
    failed = repaired = 0
    for _, run in runs:
        if _failed(run):
            failed = 1
        elif failed and _passed(run):
            repaired = 1
    return failed, repaired


def _tier_name(subject: dict[str, Any]) -> str | None:
    tier = subject.get("tier")
    value = tier.get("tier") if isinstance(tier, dict) else tier
    return value if isinstance(value, str) else None


def episode_curve(episode: dict[str, Any]) -> EpisodeCurve:
    """The episode's time to first test and its per-window retentions (see EpisodeCurve)."""
    first_applied: float | None = None
    windows: dict[str, tuple[int, int]] = {}
    for p in episode.get("proposals") or ():
        if p.get("state") != "applied":
            continue
        at = _time(p.get("applied_at"))
        if at is not None and (first_applied is None or at < first_applied):
            first_applied = at
        for c in p.get("checkpoints") or ():
            retention = c.get("retention")
            window = c.get("window")
            if isinstance(window, str) and isinstance(retention, int | float):
                n, total = windows.get(window, (0, 0))
                windows[window] = (n + 1, total + round(retention * 1000))
    first_test: float | None = None
    if first_applied is not None:
        for at, _ in _runs_in_order(episode):
            if at >= first_applied:
                first_test = float(round(at - first_applied))
                break
    return EpisodeCurve(first_test, windows or None)


def episode_metrics(episode: dict[str, Any]) -> EpisodeMetrics:
    # Runs for every episode received: plain locals, no per-field dict updates.
    proposals = shown = applied = rejected = 0
    outcomes = dict.fromkeys(_KNOWN_OUTCOMES, 0)
    chars_added = lines_added = measured = runs = passed = 0
    retained = 0
    tiers = dict.fromkeys(TIERS, 0)
    for p in episode.get("proposals") or ():
        proposals += 1
        tier = _tier_name(p)
        if tier in tiers:
            tiers[tier] += 1
        state = p.get("state")
        if state == "applied":
            applied += 1
        elif state == "rejected":
            rejected += 1
        elif state == "shown":
            shown += 1
        outcome = p.get("outcome")
        if outcome in outcomes:
            outcomes[outcome] += 1
        added = _count(p.get("chars_added"))
        chars_added += added
        lines_added += _count(p.get("lines_added"))
        retention = p.get("retention")
        if state == "applied" and retention is not None:
            measured += added
            retained += round(retention * added * 1000)
    for run in episode.get("test_runs") or ():
        runs += 1
        passed += _passed(run)
    failing, repaired = _repairs(_runs_in_order(episode)) if runs else (0, 0)
    return EpisodeMetrics(
        proposals,
        shown,
        applied,
        rejected,
        outcomes["kept"],
        outcomes["edited"],
        outcomes["undone"],
        outcomes["lost"],
        outcomes["pending"],
        chars_added,
        lines_added,
        measured,
        retained,
        runs,
        passed,
        tier_gold=tiers["gold"],
        tier_silver=tiers["silver"],
        tier_edited=tiers["edited"],
        tier_rejected=tiers["rejected"],
        tier_undone=tiers["undone"],
        tier_debt=tiers["debt"],
        tier_noise=tiers["noise"],
        tier_quarantine=tiers["quarantine"],
        failing_episodes=failing,
        repaired_episodes=repaired,
    )


def latest_per_episode(rows: Iterable[EpisodeRow]) -> list[EpisodeRow]:
    """One row per episode id, its highest revision, sorted by id (a fixed lock order)."""
    best: dict[str, EpisodeRow] = {}
    for row in rows:
        seen = best.get(row.episode_id)
        if seen is None or row.revision > seen.revision:
            best[row.episode_id] = row
    return [best[k] for k in sorted(best)]


def dedupe_in_batch(rows: Sequence[EpisodeRow]) -> tuple[list[EpisodeRow], set[int]]:
    """Rows unique by (id, revision), sorted by key, and the positions of the repeats."""
    seen: set[tuple[str, int]] = set()
    repeats: set[int] = set()
    unique: list[EpisodeRow] = []
    for i, row in enumerate(rows):
        if row.key in seen:
            repeats.add(i)
        else:
            seen.add(row.key)
            unique.append(row)
    unique.sort(key=lambda r: r.key)
    return unique, repeats
