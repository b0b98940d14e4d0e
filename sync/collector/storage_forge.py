"""Where the collector keeps a team's forge data: its webhook secret and the deliveries'
facts, in SQLite and in PostgreSQL (one mixin per backend, one migration each).

The secret is kept as it is, not as a digest: GitHub's signature is an HMAC keyed by it, so the
collector needs the secret itself to check one. A delivery is unique per (team, source,
delivery id): a replayed delivery changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

from capture.connection import sqlite3
from sync.collector.forge import Delivery

__all__ = [
    "POSTGRES_MIGRATION",
    "SQLITE_MIGRATION",
    "PostgresForgeStorage",
    "SqliteForgeStorage",
]


def _migration(text: str, real: str) -> tuple[str, list[str]]:
    return (
        "m005_forge",
        [
            f"""CREATE TABLE forge_secrets (
                team {text} PRIMARY KEY,
                secret {text} NOT NULL,
                created_at {real} NOT NULL
            )""",
            f"""CREATE TABLE forge_deliveries (
                team {text} NOT NULL,
                source {text} NOT NULL,
                delivery_id {text} NOT NULL,
                event {text} NOT NULL,
                received_at {real} NOT NULL,
                facts {text} NOT NULL,
                PRIMARY KEY (team, source, delivery_id)
            )""",
        ],
    )


SQLITE_MIGRATION = _migration("TEXT", "REAL")
POSTGRES_MIGRATION = _migration("text", "double precision")

_DELIVERY_COLUMNS = "source, delivery_id, event, received_at, facts"


def _delivery(row: tuple[Any, ...]) -> Delivery:
    return Delivery(row[0], row[1], row[2], row[3], json.loads(row[4]))


class SqliteForgeStorage:
    # Both given by `SqliteStorage`: the thread's connection, and a write transaction.
    @property
    def conn(self) -> sqlite3.Connection:
        raise NotImplementedError

    def _write(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError

    def webhook_secret(self, team: str) -> str | None:
        row = self.conn.execute(
            "SELECT secret FROM forge_secrets WHERE team = ?", (team,)
        ).fetchone()
        return str(row[0]) if row else None

    def ensure_webhook_secret(self, team: str, candidate: str, now: float) -> str:
        """The team's secret: `candidate` if it had none (then kept), else the one it has."""
        with self._write() as conn:
            conn.execute(
                "INSERT INTO forge_secrets VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                (team, candidate, now),
            )
            (secret,) = conn.execute(
                "SELECT secret FROM forge_secrets WHERE team = ?", (team,)
            ).fetchone()
        return str(secret)

    def store_delivery(self, team: str, delivery: Delivery) -> bool:
        """Keep a delivery; False when this one was kept before."""
        with self._write() as conn:
            cur = conn.execute(
                f"INSERT INTO forge_deliveries (team, {_DELIVERY_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (
                    team,
                    delivery.source,
                    delivery.delivery_id,
                    delivery.event,
                    delivery.received_at,
                    json.dumps(delivery.facts, sort_keys=True),
                ),
            )
            return cur.rowcount == 1

    def deliveries(self, team: str) -> Iterator[Delivery]:
        cur = self.conn.execute(
            f"SELECT {_DELIVERY_COLUMNS} FROM forge_deliveries WHERE team = ? "
            "ORDER BY received_at, delivery_id",
            (team,),
        )
        return (_delivery(r) for r in cur.fetchall())


class PostgresForgeStorage:
    pool: Any

    def webhook_secret(self, team: str) -> str | None:
        with self.pool.connection() as conn:
            row = conn.execute(
                "SELECT secret FROM forge_secrets WHERE team = %s", (team,)
            ).fetchone()
        return str(row[0]) if row else None

    def ensure_webhook_secret(self, team: str, candidate: str, now: float) -> str:
        with self.pool.connection() as conn:
            conn.execute(
                "INSERT INTO forge_secrets VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (team, candidate, now),
            )
            (secret,) = conn.execute(
                "SELECT secret FROM forge_secrets WHERE team = %s", (team,)
            ).fetchone()
        return str(secret)

    def store_delivery(self, team: str, delivery: Delivery) -> bool:
        with self.pool.connection() as conn:
            cur = conn.execute(
                f"INSERT INTO forge_deliveries (team, {_DELIVERY_COLUMNS}) "
                "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    team,
                    delivery.source,
                    delivery.delivery_id,
                    delivery.event,
                    delivery.received_at,
                    json.dumps(delivery.facts, sort_keys=True),
                ),
            )
            return cur.rowcount == 1

    def deliveries(self, team: str) -> Iterator[Delivery]:
        with self.pool.connection() as conn:
            rows = conn.execute(
                f"SELECT {_DELIVERY_COLUMNS} FROM forge_deliveries WHERE team = %s "
                "ORDER BY received_at, delivery_id",
                (team,),
            ).fetchall()
        return (_delivery(r) for r in rows)
