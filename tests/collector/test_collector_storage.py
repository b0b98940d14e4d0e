"""The storage backends in-process, on SQLite and a real PostgreSQL: numbered migrations (an
older database is upgraded, its report cells back-filled), and report cells that follow
revisions."""

from __future__ import annotations

import time
from typing import Any

import pytest

from sync.collector.ingest import METRIC_FIELDS_V1, EpisodeRow, prepare
from sync.collector.report import aggregate
from sync.collector.storage import open_storage
from tests.support.collector_support import item, make_episode


def rows(prefix: str, n: int, revision: int = 1, agent: str = "codex") -> list[EpisodeRow]:
    out = []
    for i in range(n):
        ep = make_episode(f"{prefix}{i}", agent=agent, started_at=1_764_547_200 + i * 86400)
        row = prepare(item(ep, revision), contributor=f"c{i % 6}", received_at=time.time())
        assert isinstance(row, EpisodeRow)
        out.append(row)
    return out


def store_as_released(storage: Any, team: str, stored: list[EpisodeRow]) -> None:
    """Rows as the collector before m004 wrote them: only the figures its schema had."""
    columns = (
        "team, episode_id, revision, level, contributor, received_at, agent, model, "
        "started_at, week, " + ", ".join(METRIC_FIELDS_V1)
    )
    values = [
        (
            team, r.episode_id, r.revision, r.level, r.contributor, r.received_at, r.agent,
            r.model, r.started_at, r.week, *(getattr(r.metrics, m) for m in METRIC_FIELDS_V1),
        )
        for r in stored
    ]  # fmt: skip
    ledger = [
        (team, r.episode_id, r.revision, r.level, r.contributor, r.received_at, r.body)
        for r in stored
    ]
    mark = "?" if storage.kind == "sqlite" else "%s"
    insert = f"INSERT INTO episodes ({columns}) VALUES ({', '.join([mark] * len(values[0]))})"
    insert_ledger = f"INSERT INTO revisions VALUES ({', '.join([mark] * 7)})"
    if storage.kind == "sqlite":
        storage.conn.executemany(insert_ledger, ledger)
        storage.conn.executemany(insert, values)
    else:
        with storage.pool.connection() as conn, conn.cursor() as cur:
            cur.executemany(insert_ledger, ledger)
            cur.executemany(insert, values)


def report(storage: Any, since: float | None = None) -> dict[str, Any]:
    return aggregate(
        storage.report_rows("t", since, None), team="t", min_contributors=1, generated_at=""
    )


def test_an_older_database_is_migrated_and_its_report_backfilled(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = open_storage(db_url)
    module = __import__(type(storage).__module__, fromlist=["MIGRATIONS"])
    all_migrations = list(module.MIGRATIONS)
    monkeypatch.setattr(module, "MIGRATIONS", all_migrations[:1])  # as released before m002
    assert storage.migrate() == 1
    store_as_released(storage, "t", rows("old", 12))
    monkeypatch.setattr(module, "MIGRATIONS", all_migrations)
    assert storage.migrate() == len(all_migrations) - 1
    assert storage.migrate() == 0  # applied once
    back = report(storage)
    assert back["total"]["episodes"] == 12 and back["total"]["contributors"] == 6
    storage.store("t", rows("new", 3))
    assert report(storage)["total"]["episodes"] == 15
    storage.close()


def test_report_cells_follow_revisions(db_url: str) -> None:
    storage = open_storage(db_url)
    storage.migrate()
    first = rows("e", 10, agent="codex")
    storage.store("t", first)
    before = report(storage)
    assert [g["key"] for g in before["by_agent"]] == ["codex"]
    # Revision 2 of four episodes moves them to another agent; an older revision arriving late
    # changes nothing.
    storage.store("t", rows("e", 4, revision=2, agent="cursor"))
    storage.store("t", rows("e", 10, revision=1, agent="codex"))  # duplicates: no change
    after = report(storage)
    agents = {g["key"]: g["episodes"] for g in after["by_agent"]}
    assert agents == {"codex": 6, "cursor": 4}
    assert after["total"]["episodes"] == 10
    assert storage.store("t", rows("e", 4, revision=1, agent="gemini")) == set()
    assert {g["key"] for g in report(storage)["by_agent"]} == {"codex", "cursor"}
    # Whole weeks: since rounds down to its Monday.
    assert report(storage, since=1_764_547_200 + 7 * 86400 + 3600)["total"]["episodes"] == 3
    storage.close()
