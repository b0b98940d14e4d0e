"""The collector's decisions as plain functions: validation, per-episode figures, the report's
aggregation and privacy threshold, tokens, the rate limiter, the body decoder."""

from __future__ import annotations

import gzip
from typing import Any

import pytest

from sync.collector.errors import ApiError
from sync.collector.ingest import (
    EpisodeRow,
    Rejection,
    check_batch,
    decode_body,
    episode_metrics,
    parse_time,
    prepare,
    week_of,
)
from sync.collector.limits import take
from sync.collector.report import ReportRow, aggregate
from sync.collector.storage import StorageUrlError, parse_db_url
from sync.collector.tokens import authorize, bearer_token, digest, new_token
from sync.collector.validation import SchemaViolation, compile_schema
from sync.collector.wire import BATCH_EXAMPLE, batch_schema
from tests.support.collector_support import item, make_episode

VALIDATE = compile_schema(batch_schema())

#: When the collector receives the items: after every time they carry (2100-01-01).
T0 = 4_102_444_800.0


def violation(value: Any) -> str:
    with pytest.raises(SchemaViolation) as info:
        VALIDATE(value)
    return info.value.field


def test_the_documented_example_and_generated_episodes_are_valid() -> None:
    VALIDATE(BATCH_EXAMPLE)
    VALIDATE(
        {
            "episodes": [
                item(make_episode(f"e{i}", level=lv), level=lv)
                for i, lv in enumerate(("metrics", "redacted", "full"))
            ]
        }
    )


def test_violations_name_the_field() -> None:
    ep = make_episode("e1")
    assert violation({"episodes": [item(ep) | {"revision": True}]}) == "episodes[0].revision"
    ep["proposals"][0]["chars_added"] = 1.5
    assert violation({"episodes": [item(ep)]}) == "episodes[0].episode.proposals[0].chars_added"
    ep = make_episode("e1")
    ep["test_runs"] = [{"failing_ids": ["a", 3]}]
    assert violation({"episodes": [item(ep)]}) == "episodes[0].episode.test_runs[0].failing_ids[1]"
    ep = make_episode("e1")
    ep["started_at"] = "yesterday"
    assert violation({"episodes": [item(ep)]}) == "episodes[0].episode.started_at"
    assert violation({"episodes": [item(make_episode("e1")) | {"id": "a b"}]}) == "episodes[0].id"
    # JSON Schema's `$` ends the string: no trailing newline sneaks through.
    assert violation({"episodes": [item(make_episode("e1")) | {"id": "abc\n"}]}) == "episodes[0].id"


def test_permissive_where_anonymization_removes_things() -> None:
    ep = {"schema": "agent-capture/episode@1", "id": "x1", "proposals": [{}], "new_field": [1]}
    VALIDATE({"episodes": [item(ep)]})
    # 1.0 is an integer in JSON.
    VALIDATE({"episodes": [item(ep) | {"revision": 1.0}]})


def test_check_batch_maps_violations_and_sizes_to_statuses() -> None:
    with pytest.raises(ApiError) as info:
        check_batch({"episodes": [1]}, VALIDATE, 10)
    assert (info.value.status, info.value.field) == (422, "episodes[0]")
    with pytest.raises(ApiError) as info:
        check_batch({"episodes": [1] * 11}, VALIDATE, 10)
    assert info.value.status == 413


def test_decode_body_refuses_bombs_and_broken_gzip() -> None:
    assert decode_body(gzip.compress(b"{}"), "gzip", 10) == b"{}"
    assert decode_body(b"{}", None, 10) == b"{}"
    with pytest.raises(ApiError) as info:
        decode_body(gzip.compress(b"0" * 1000), "gzip", 999)
    assert info.value.status == 413
    with pytest.raises(ApiError) as info:
        decode_body(gzip.compress(b"{}")[:-4], "gzip", 100)
    assert info.value.status == 400
    with pytest.raises(ApiError) as info:
        decode_body(b"{}", "deflate", 100)
    assert info.value.status == 415


def test_episode_metrics_are_counted_by_hand() -> None:
    ep = {
        "proposals": [
            {
                "state": "applied",
                "outcome": "kept",
                "chars_added": 100,
                "retention": 0.9,
                "lines_added": 3,
            },
            {"state": "applied", "outcome": "undone", "chars_added": 50, "retention": 0.0},
            {"state": "applied", "outcome": "pending", "chars_added": 10, "retention": None},
            {"state": "rejected", "outcome": "rejected", "chars_added": 7},
            {"state": "shown", "outcome": "pending"},
        ],
        "test_runs": [{"exit_code": 0}, {"exit_code": 1}, {"passed": 3, "failed": 0}],
    }
    m = episode_metrics(ep)
    assert (m.proposals, m.applied, m.rejected, m.shown) == (5, 3, 1, 1)
    assert (m.kept, m.undone, m.pending, m.edited, m.lost) == (1, 1, 2, 0, 0)
    assert (m.chars_added, m.lines_added) == (167, 3)
    assert (m.measured_chars, m.retained_millichars) == (150, 90_000)
    assert (m.test_runs, m.test_runs_passed) == (3, 2)


def test_prepare_refuses_what_policy_forbids() -> None:
    ep = make_episode("e1", level="redacted")
    row = prepare(item(ep), contributor="c", received_at=T0)
    assert isinstance(row, EpisodeRow) and row.key == ("e1", 1)
    refused = prepare(item(ep), contributor="c", received_at=T0, max_level="metrics")
    assert isinstance(refused, Rejection) and "at most metrics" in refused.error
    bad_date = dict(ep, started_at="2026-13-45T00:00:00Z")
    refused = prepare(item(bad_date), contributor="c", received_at=T0)
    assert isinstance(refused, Rejection) and "started_at" in refused.error
    for far in ("9999-12-31T23:59:59-23:59", "1970-01-01T00:00:00Z", "2100-01-02T00:00:01Z"):
        refused = prepare(item(dict(ep, started_at=far)), contributor="c", received_at=T0)
        assert isinstance(refused, Rejection) and "outside 2000" in refused.error


def test_times_and_weeks() -> None:
    assert parse_time("1970-01-01T01:00:00+01:00") == 0.0
    assert parse_time("2026-12-02T10:00:00.5Z") == 1_796_205_600.5
    assert parse_time("0001-01-01T00:00:00+23:59") < -62_135_000_000  # no overflow
    with pytest.raises(ValueError):
        parse_time("2026-12-02")
    assert week_of(parse_time("2026-12-06T23:59:59Z")) == "2026-11-30"  # a Sunday
    assert week_of(parse_time("2026-12-07T00:00:00Z")) == "2026-12-07"


def _row(agent: str, contributor: str | None, episodes: int, **sums: float) -> ReportRow:
    from sync.collector.ingest import METRIC_FIELDS

    return ReportRow(
        agent,
        "m",
        "2026-11-30",
        contributor,
        episodes,
        tuple(float(sums.get(f, 0)) for f in METRIC_FIELDS),
    )


def test_report_aggregates_and_hides_small_groups() -> None:
    rows = [
        _row(
            "a",
            f"c{i}",
            2,
            proposals=4,
            applied=3,
            rejected=1,
            kept=2,
            edited=1,
            chars_added=100,
            measured_chars=100,
            retained_millichars=80_000,
            test_runs=1,
            test_runs_passed=1,
        )
        for i in range(5)
    ]
    rows += [
        _row(
            "b",
            "c0",
            1,
            proposals=1,
            applied=1,
            undone=1,
            chars_added=10,
            measured_chars=10,
            retained_millichars=0,
        )
    ]
    rows += [_row("b", None, 1, proposals=1, applied=1, kept=1)]  # no contributor id
    report = aggregate(rows, team="t", min_contributors=5, generated_at="now")
    total = report["total"]
    assert total["contributors"] == 5 and total["episodes"] == 12
    assert total["proposals"] == {"total": 22, "shown": 0, "applied": 17, "rejected": 5}
    assert total["outcomes"]["kept"] == 11 and total["outcomes"]["undone"] == 1
    assert total["rates"]["kept"] == {
        "value": round(11 / 17, 4),
        "numerator": 11,
        "denominator": 17,
    }
    assert total["rates"]["retention"] == {
        "value": round(400 / 510, 4),
        "numerator": 400,
        "denominator": 510,
    }
    assert total["rates"]["test_pass"]["value"] == 1.0
    a, b = report["by_agent"]
    assert a["key"] == "a" and a["suppressed"] is False and a["episodes"] == 10
    assert b == {"key": "b", "suppressed": True, "reason": "fewer than 5 contributors"}
    few = aggregate(rows[:4], team="t", min_contributors=5, generated_at="now")
    assert few["total"]["suppressed"] is True and "episodes" not in few["total"]
    empty = aggregate([], team="t", min_contributors=5, generated_at="now")
    assert empty["total"]["suppressed"] is True and empty["by_week"] == []


def test_tokens_are_hashed_bound_to_a_team_and_scoped() -> None:
    token, record = new_token("alpha", "read", None, 1.0)
    assert record.digest == digest(token) and token not in record.digest
    assert bearer_token(f"Bearer {token}") == token
    assert authorize(record, "read", "alpha") == "alpha"
    for action, team, status in (
        ("read", "beta", 403),
        ("export", "alpha", 403),
        ("ingest", None, 403),
    ):
        with pytest.raises(ApiError) as info:
            authorize(record, action, team)
        assert info.value.status == status
    export = new_token("alpha", "export", None, 1.0)[1]
    assert authorize(export, "read", "alpha") == "alpha"
    revoked = new_token("alpha", "read", None, 1.0)[1]
    from dataclasses import replace

    with pytest.raises(ApiError) as info:
        authorize(replace(revoked, revoked_at=2.0), "read", "alpha")
    assert info.value.status == 401
    for header in (None, "", "Bearer", "Basic abc", "Bearer not-a-token"):
        with pytest.raises(ApiError) as info:
            bearer_token(header)
        assert info.value.status == 401
    with pytest.raises(ValueError):
        new_token("no spaces", "read", None, 1.0)


def test_token_bucket() -> None:
    state = None
    allowed = []
    for _ in range(5):
        ok, state, wait = take(state, 100.0, rate=1.0, burst=3)
        allowed.append(ok)
    assert allowed == [True, True, True, False, False] and wait == 1
    ok, state, _ = take(state, 101.0, rate=1.0, burst=3)
    assert ok  # one second refills one request
    ok, state, wait = take(state, 101.0, rate=0.25, burst=3)
    assert not ok and wait == 4


def test_database_urls() -> None:
    assert parse_db_url("sqlite:///rel/c.db") == ("sqlite", "rel/c.db")
    assert parse_db_url("sqlite:////var/lib/c.db") == ("sqlite", "/var/lib/c.db")
    assert parse_db_url("/var/lib/c.db") == ("sqlite", "/var/lib/c.db")
    assert parse_db_url("postgresql://u@h/db")[0] == "postgresql"
    for bad in ("mysql://x", "sqlite://", "sqlite:///"):
        with pytest.raises(StorageUrlError):
            parse_db_url(bad)
