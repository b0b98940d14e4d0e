"""The collector's storage in PostgreSQL: for a team with several collector replicas.

Replicas share nothing but the database. A batch is one transaction: its rows are COPY'd into
staging tables, then moved by one `INSERT ... SELECT` per table. The ledger insert (`ON CONFLICT
DO NOTHING RETURNING`) tells which (id, revision) pairs are new, and only those update the
per-episode figures. Rows move in key order, so two replicas writing overlapping batches wait
for each other instead of deadlocking; the primary key settles which of them stores an
episode, exactly once. Migrations run under an advisory lock, so replicas starting
together apply each one once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg import errors
from psycopg_pool import ConnectionPool

from sync.collector.backend import ExportRow, time_filter
from sync.collector.ingest import (
    METRIC_FIELDS,
    METRIC_FIELDS_V1,
    EpisodeRow,
    dedupe_in_batch,
    latest_per_episode,
)
from sync.collector.report import CurveRow, ReportRow, week_filter
from sync.collector.storage_forge import POSTGRES_MIGRATION, PostgresForgeStorage
from sync.collector.tokens import TokenRecord

__all__ = ["MIGRATIONS", "PostgresStorage"]

_MIGRATION_LOCK = 0x63617074  # any constant shared by all replicas

# What m001 and m002 built; the figures added since come with their own migration.
_METRIC_COLUMNS = ",\n".join(f"{name} bigint NOT NULL DEFAULT 0" for name in METRIC_FIELDS_V1)
_ADDED_FIELDS = METRIC_FIELDS[len(METRIC_FIELDS_V1) :]

# The report reads `report_cells`: per (team, week, agent, model, contributor), the number of
# episodes and the sums of their figures, kept by statement triggers on `episodes` in the same
# transaction as the write (an updated revision moves its figures from its old cell to its new
# one). The report's cost is then the number of cells, not the number of episodes.
_CELL_KEY = (
    "team, coalesce(week, '') AS week, agent, model, coalesce(contributor, '') AS contributor"
)
_METRIC_LIST = ", ".join(METRIC_FIELDS)


def _new_rows(names: tuple[str, ...]) -> str:
    return f"SELECT {_CELL_KEY}, 1 AS n, {', '.join(names)} FROM new_rows"


def _old_rows_negated(names: tuple[str, ...]) -> str:
    return f"SELECT {_CELL_KEY}, -1, {', '.join(f'-{name}' for name in names)} FROM old_rows"


_NEW_ROWS = _new_rows(METRIC_FIELDS_V1)
_OLD_ROWS_NEGATED = _old_rows_negated(METRIC_FIELDS_V1)


def _cells_upsert(rows_sql: str, names: tuple[str, ...] = METRIC_FIELDS_V1) -> str:
    sums = ", ".join(f"sum({name})::bigint" for name in names)
    updates = ", ".join(f"{name} = c.{name} + excluded.{name}" for name in ("episodes", *names))
    return (
        f"INSERT INTO report_cells AS c (team, week, agent, model, contributor, episodes, "
        f"{', '.join(names)}) "
        f"SELECT team, week, agent, model, contributor, sum(n)::bigint, {sums} "
        f"FROM ({rows_sql}) AS d GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 "
        f"ON CONFLICT (team, week, agent, model, contributor) DO UPDATE SET {updates};"
    )


# The figures that do not add up have cells of their own, kept by the same triggers: per
# (team, week, agent, model) and checkpoint window, the checkpoints and retentions' sum; per
# (team, week, agent, model) and whole seconds to the first test, the number of episodes.
_CURVE_CELL_KEY = "team, coalesce(week, '') AS week, agent, model"


def _curve_rows(table: str, sign: int) -> tuple[str, str]:
    windows = (
        f"SELECT {_CURVE_CELL_KEY}, j.key AS label, {sign} * (j.value->>0)::bigint AS n, "
        f"{sign} * (j.value->>1)::bigint AS m "
        f"FROM {table} CROSS JOIN LATERAL jsonb_each(window_retention) AS j"
    )
    first = (
        f"SELECT {_CURVE_CELL_KEY}, first_test_s AS seconds, {sign} AS n FROM {table} "
        "WHERE first_test_s IS NOT NULL"
    )
    return windows, first


def _curves_upsert(*sources: tuple[str, int]) -> str:
    parts = [_curve_rows(table, sign) for table, sign in sources]
    windows = " UNION ALL ".join(w for w, _ in parts)
    first = " UNION ALL ".join(f for _, f in parts)
    return (
        "INSERT INTO window_cells AS c (team, week, agent, model, label, checkpoints, "
        "retained_millis) SELECT team, week, agent, model, label, sum(n)::bigint, "
        f"sum(m)::bigint FROM ({windows}) AS d GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 "
        "ON CONFLICT (team, week, agent, model, label) DO UPDATE SET "
        "checkpoints = c.checkpoints + excluded.checkpoints, "
        "retained_millis = c.retained_millis + excluded.retained_millis; "
        "INSERT INTO first_test_cells AS c (team, week, agent, model, seconds, episodes) "
        f"SELECT team, week, agent, model, seconds, sum(n)::bigint FROM ({first}) AS d "
        "GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5 "
        "ON CONFLICT (team, week, agent, model, seconds) DO UPDATE SET "
        "episodes = c.episodes + excluded.episodes;"
    )


_CURVE_KEY = "team text NOT NULL, week text NOT NULL, agent text NOT NULL, model text NOT NULL"
_moved_rows = _new_rows(METRIC_FIELDS) + " UNION ALL " + _old_rows_negated(METRIC_FIELDS)

# Numbered, append only: never edit one that has shipped.
MIGRATIONS: list[tuple[str, list[str]]] = [
    (
        "m001_initial",
        [
            """CREATE TABLE tokens (
                id text PRIMARY KEY,
                team text NOT NULL,
                scope text NOT NULL,
                name text,
                digest text NOT NULL UNIQUE,
                created_at double precision NOT NULL,
                revoked_at double precision
            )""",
            """CREATE TABLE revisions (
                team text NOT NULL,
                episode_id text NOT NULL,
                revision integer NOT NULL,
                level text NOT NULL,
                contributor text,
                received_at double precision NOT NULL,
                body text NOT NULL,
                PRIMARY KEY (team, episode_id, revision)
            )""",
            f"""CREATE TABLE episodes (
                team text NOT NULL,
                episode_id text NOT NULL,
                revision integer NOT NULL,
                level text NOT NULL,
                contributor text,
                received_at double precision NOT NULL,
                agent text NOT NULL,
                model text NOT NULL,
                started_at double precision,
                week text,
                {_METRIC_COLUMNS},
                PRIMARY KEY (team, episode_id)
            )""",
            "CREATE INDEX episodes_team_started ON episodes (team, started_at)",
        ],
    ),
    (
        "m002_report_cells",
        [
            f"""CREATE TABLE report_cells (
                team text NOT NULL,
                week text NOT NULL,
                agent text NOT NULL,
                model text NOT NULL,
                contributor text NOT NULL,
                episodes bigint NOT NULL DEFAULT 0,
                {_METRIC_COLUMNS},
                PRIMARY KEY (team, week, agent, model, contributor)
            )""",
            f"""CREATE FUNCTION capture_cells_add() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                {_cells_upsert(_NEW_ROWS)}
                RETURN NULL;
            END $$""",
            f"""CREATE FUNCTION capture_cells_move() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                {_cells_upsert(_NEW_ROWS + " UNION ALL " + _OLD_ROWS_NEGATED)}
                RETURN NULL;
            END $$""",
            """CREATE TRIGGER episodes_cells_insert AFTER INSERT ON episodes
               REFERENCING NEW TABLE AS new_rows
               FOR EACH STATEMENT EXECUTE FUNCTION capture_cells_add()""",
            """CREATE TRIGGER episodes_cells_update AFTER UPDATE ON episodes
               REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
               FOR EACH STATEMENT EXECUTE FUNCTION capture_cells_move()""",
            # Episodes stored before this migration.
            _cells_upsert(_NEW_ROWS.replace("new_rows", "episodes")),
        ],
    ),
    # A token may expire (`capture collector token create --expires 90d`); NULL: never.
    ("m003_token_expiry", ["ALTER TABLE tokens ADD COLUMN expires_at double precision"]),
    # The tier mix and repairs (summed like the others), and per episode what is not additive:
    # the time to its first test and its retention per window. Episodes stored before count in
    # no tier (their uploads carried none).
    (
        "m004_tier_figures",
        [
            *(
                f"ALTER TABLE {table} ADD COLUMN {name} bigint NOT NULL DEFAULT 0"
                for table in ("episodes", "report_cells")
                for name in _ADDED_FIELDS
            ),
            "ALTER TABLE episodes ADD COLUMN first_test_s double precision",
            "ALTER TABLE episodes ADD COLUMN window_retention jsonb",
            f"""CREATE TABLE window_cells ({_CURVE_KEY}, label text NOT NULL,
                checkpoints bigint NOT NULL DEFAULT 0, retained_millis bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (team, week, agent, model, label))""",
            f"""CREATE TABLE first_test_cells ({_CURVE_KEY}, seconds double precision NOT NULL,
                episodes bigint NOT NULL DEFAULT 0,
                PRIMARY KEY (team, week, agent, model, seconds))""",
            f"""CREATE OR REPLACE FUNCTION capture_cells_add() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                {_cells_upsert(_new_rows(METRIC_FIELDS), METRIC_FIELDS)}
                {_curves_upsert(("new_rows", 1))}
                RETURN NULL;
            END $$""",
            f"""CREATE OR REPLACE FUNCTION capture_cells_move() RETURNS trigger
            LANGUAGE plpgsql AS $$
            BEGIN
                {_cells_upsert(_moved_rows, METRIC_FIELDS)}
                {_curves_upsert(("new_rows", 1), ("old_rows", -1))}
                RETURN NULL;
            END $$""",
        ],
    ),  # fmt: skip
    # The team's webhook secret and its forge deliveries (`storage_forge`).
    POSTGRES_MIGRATION,
]

_TOKEN_COLUMNS = "id, team, scope, name, digest, created_at, revoked_at, expires_at"
_EPISODE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("episode_id", "text"),
    ("revision", "integer"),
    ("level", "text"),
    ("contributor", "text"),
    ("received_at", "float8"),
    ("agent", "text"),
    ("model", "text"),
    ("started_at", "float8"),
    ("week", "text"),
    *((name, "int8") for name in METRIC_FIELDS),
    ("first_test_s", "float8"),
    ("window_retention", "jsonb"),
)

_REVISION_COLUMNS = "team, episode_id, revision, level, contributor, received_at, body"
_EPISODE_COLUMN_LIST = "team, " + ", ".join(c for c, _ in _EPISODE_COLUMNS)

# Per-connection staging tables, emptied at every commit: a batch is COPY'd in (the fastest way
# into PostgreSQL), then moved with one INSERT ... SELECT, which settles conflicts.
# They are made once per connection, when the pool opens it.
_STAGING = [
    """CREATE TEMP TABLE incoming_revisions (team text, episode_id text, revision integer,
        level text, contributor text, received_at float8, body text) ON COMMIT DELETE ROWS""",
    "CREATE TEMP TABLE incoming_episodes (team text, "
    + ", ".join(f"{c} {t}" for c, t in _EPISODE_COLUMNS)
    + ") ON COMMIT DELETE ROWS",
]


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Each pooled connection: staging tables, and lz4 for the episode JSON (several times
    faster to compress than the default pglz) where the server was built with it."""
    try:
        conn.execute("SET default_toast_compression = lz4")
    except psycopg.Error:
        conn.rollback()
    for sql in _STAGING:
        conn.execute(sql)
    conn.commit()


_MOVE_REVISIONS = f"""
    INSERT INTO revisions ({_REVISION_COLUMNS})
    SELECT {_REVISION_COLUMNS} FROM incoming_revisions ORDER BY episode_id, revision
    ON CONFLICT DO NOTHING
    RETURNING episode_id, revision
"""

_MOVE_EPISODES = (
    f"INSERT INTO episodes ({_EPISODE_COLUMN_LIST}) "
    f"SELECT {_EPISODE_COLUMN_LIST} FROM incoming_episodes ORDER BY episode_id "
    "ON CONFLICT (team, episode_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c, _ in _EPISODE_COLUMNS[1:])
    + " WHERE excluded.revision > episodes.revision"
)


class PostgresStorage(PostgresForgeStorage):
    kind = "postgresql"

    def __init__(self, conninfo: str, *, max_connections: int = 8) -> None:
        # One plain connection first: a wrong URL or a server that is down is one clear error
        # now, not a pool retrying in the background.
        psycopg.connect(conninfo, connect_timeout=10).close()
        self.pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max_connections,
            open=True,
            timeout=30.0,
            kwargs={"application_name": "capture-collector"},
            configure=_configure,
        )

    def migrate(self) -> int:
        applied = 0
        with self.pool.connection() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                """CREATE TABLE IF NOT EXISTS schema_migrations (
                    version integer PRIMARY KEY, name text NOT NULL,
                    applied_at double precision NOT NULL)"""
            )
            done = {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}
            for version, (name, statements) in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                for sql in statements:
                    conn.execute(sql)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (%s, %s, %s)",
                    (version, name, time.time()),
                )
                applied += 1
        return applied

    def ping(self) -> None:
        # Short: a load balancer's health check must not hang for the pool's 30 s.
        with self.pool.connection(timeout=5.0) as conn:
            conn.execute("SELECT 1").fetchone()

    def store(self, team: str, rows: Sequence[EpisodeRow]) -> set[tuple[str, int]]:
        unique, _ = dedupe_in_batch(rows)
        if not unique:
            return set()
        # Two replicas updating the same report cells in opposite orders can deadlock; the
        # database then aborts one transaction whole, which is simply run again.
        for attempt in range(5):
            try:
                return self._store(team, unique)
            except (errors.DeadlockDetected, errors.SerializationFailure):
                if attempt == 4:
                    raise
                time.sleep(0.01 * (attempt + 1))
        raise AssertionError("unreachable")

    def _store(self, team: str, unique: Sequence[EpisodeRow]) -> set[tuple[str, int]]:
        with self.pool.connection() as conn, conn.cursor() as cur:
            with cur.copy(f"COPY incoming_revisions ({_REVISION_COLUMNS}) FROM STDIN") as copy:
                for r in unique:
                    copy.write_row(
                        (
                            team,
                            r.episode_id,
                            r.revision,
                            r.level,
                            r.contributor,
                            r.received_at,
                            r.body,
                        )
                    )
            cur.execute(_MOVE_REVISIONS)
            inserted = {(e, int(v)) for e, v in cur.fetchall()}
            fresh = latest_per_episode(r for r in unique if r.key in inserted)
            if fresh:
                with cur.copy(
                    f"COPY incoming_episodes ({_EPISODE_COLUMN_LIST}) FROM STDIN"
                ) as copy:
                    for r in fresh:
                        copy.write_row(
                            (
                                team,
                                r.episode_id,
                                r.revision,
                                r.level,
                                r.contributor,
                                r.received_at,
                                r.agent,
                                r.model,
                                r.started_at,
                                r.week,
                                *(getattr(r.metrics, name) for name in METRIC_FIELDS),
                                r.curve.first_test_s,
                                r.curve.windows_json(),
                            )
                        )
                cur.execute(_MOVE_EPISODES)
        return inserted

    def report_rows(self, team: str, since: float | None, until: float | None) -> list[ReportRow]:
        where, params = week_filter(since, until, "%s")
        with self.pool.connection() as conn:
            cur = conn.execute(
                f"""SELECT agent, model, NULLIF(week, ''), NULLIF(contributor, ''), episodes,
                           {_METRIC_LIST}
                    FROM report_cells WHERE team = %s AND episodes > 0{where}""",
                [team, *params],
            )
            return [
                ReportRow(r[0], r[1], r[2], r[3], int(r[4]), tuple(float(x) for x in r[5:]))
                for r in cur
            ]

    def curve_rows(self, team: str, since: float | None, until: float | None) -> list[CurveRow]:
        where, params = week_filter(since, until, "%s")
        with self.pool.connection() as conn:
            first_tests = conn.execute(
                f"""SELECT agent, model, NULLIF(week, ''), seconds, episodes
                    FROM first_test_cells WHERE team = %s AND episodes > 0{where}""",
                [team, *params],
            )
            out = [
                CurveRow(a, m, w, first_test_s=float(s), episodes=int(n))
                for a, m, w, s, n in first_tests
            ]
            windows = conn.execute(
                f"""SELECT agent, model, NULLIF(week, ''), label, checkpoints, retained_millis
                    FROM window_cells WHERE team = %s AND checkpoints > 0{where}""",
                [team, *params],
            )
            out += [
                CurveRow(a, m, w, window=label, checkpoints=int(n), retained_millis=int(r))
                for a, m, w, label, n, r in windows
            ]
            return out

    def export_rows(
        self, team: str, since: float | None, until: float | None
    ) -> Iterator[ExportRow]:
        where, params = time_filter(since, until, "e.started_at", "%s")
        with self.pool.connection() as conn, conn.cursor(name="capture_export") as cur:
            cur.itersize = 2000
            cur.execute(
                f"""SELECT e.episode_id, e.revision, e.level, e.contributor, e.received_at,
                           e.agent, e.model, e.started_at, r.body
                    FROM episodes e JOIN revisions r ON r.team = e.team
                      AND r.episode_id = e.episode_id AND r.revision = e.revision
                    WHERE e.team = %s{where}
                    ORDER BY e.episode_id""",
                [team, *params],
            )
            for r in cur:
                yield ExportRow(*r)

    def add_token(self, record: TokenRecord) -> None:
        with self.pool.connection() as conn:
            conn.execute(
                f"INSERT INTO tokens ({_TOKEN_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    record.id,
                    record.team,
                    record.scope,
                    record.name,
                    record.digest,
                    record.created_at,
                    record.revoked_at,
                    record.expires_at,
                ),
            )

    def find_token(self, digest: str) -> TokenRecord | None:
        with self.pool.connection() as conn:
            row = conn.execute(
                f"SELECT {_TOKEN_COLUMNS} FROM tokens WHERE digest = %s",
                (digest,),
            ).fetchone()
        return TokenRecord(*row) if row else None

    def list_tokens(self, team: str | None = None) -> list[TokenRecord]:
        sql = f"SELECT {_TOKEN_COLUMNS} FROM tokens"
        params: list[str] = []
        if team is not None:
            sql += " WHERE team = %s"
            params.append(team)
        with self.pool.connection() as conn:
            rows = conn.execute(sql + " ORDER BY created_at", params).fetchall()
        return [TokenRecord(*r) for r in rows]

    def revoke_token(self, token_id: str, now: float) -> bool:
        with self.pool.connection() as conn:
            cur = conn.execute(
                "UPDATE tokens SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL",
                (now, token_id),
            )
            return cur.rowcount == 1

    def close(self) -> None:
        self.pool.close()
