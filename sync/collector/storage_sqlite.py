"""The collector's storage in one SQLite file: for a team that starts on one machine.

One connection per thread (the server runs storage calls in a thread pool), WAL so that the
report reads while a batch is written, `BEGIN IMMEDIATE` so that writers, in this process or
another collector process on the same file, queue instead of failing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from capture.connection import connect, sqlite3
from sync.collector.backend import ExportRow, time_filter
from sync.collector.ingest import (
    METRIC_FIELDS,
    METRIC_FIELDS_V1,
    EpisodeRow,
    dedupe_in_batch,
    latest_per_episode,
)
from sync.collector.report import CurveRow, ReportRow, week_filter
from sync.collector.storage_forge import SQLITE_MIGRATION, SqliteForgeStorage
from sync.collector.tokens import TokenRecord

__all__ = ["MIGRATIONS", "SqliteStorage"]


def _metric_columns(names: tuple[str, ...]) -> str:
    return ",\n".join(f"{name} INTEGER NOT NULL DEFAULT 0" for name in names)


# What m001 and m002 built; the figures added since come with their own migration.
_METRIC_COLUMNS = _metric_columns(METRIC_FIELDS_V1)
_ADDED_FIELDS = METRIC_FIELDS[len(METRIC_FIELDS_V1) :]

# The report reads `report_cells`: per (team, week, agent, model, contributor), the number of
# episodes and the sums of their figures, kept by triggers on `episodes` in the same transaction
# as the write (an updated revision moves its figures from its old cell to its new one).
_METRIC_LIST = ", ".join(METRIC_FIELDS)


def _cell_upsert(row: str, sign: int, names: tuple[str, ...] = METRIC_FIELDS_V1) -> str:
    values = ", ".join(f"{sign} * {row}.{m}" for m in names)
    updates = ", ".join(f"{c} = {c} + excluded.{c}" for c in ("episodes", *names))
    return (
        f"INSERT INTO report_cells (team, week, agent, model, contributor, episodes, "
        f"{', '.join(names)}) VALUES ({row}.team, coalesce({row}.week, ''), {row}.agent, "
        f"{row}.model, coalesce({row}.contributor, ''), {sign}, {values}) "
        f"ON CONFLICT (team, week, agent, model, contributor) DO UPDATE SET {updates};"
    )


# The figures that do not add up have cells of their own, kept by the same triggers: per
# (team, week, agent, model) and checkpoint window, the checkpoints and retentions' sum; per
# (team, week, agent, model) and whole seconds to the first test, the number of episodes.
def _curve_upsert(row: str, sign: int) -> str:
    key = f"{row}.team, coalesce({row}.week, ''), {row}.agent, {row}.model"
    return (
        "INSERT INTO window_cells (team, week, agent, model, label, checkpoints, "
        f"retained_millis) SELECT {key}, j.key, {sign} * json_extract(j.value, '$[0]'), "
        f"{sign} * json_extract(j.value, '$[1]') "
        f"FROM json_each(coalesce({row}.window_retention, '{{}}')) AS j WHERE true "
        "ON CONFLICT (team, week, agent, model, label) DO UPDATE SET "
        "checkpoints = checkpoints + excluded.checkpoints, "
        "retained_millis = retained_millis + excluded.retained_millis; "
        "INSERT INTO first_test_cells (team, week, agent, model, seconds, episodes) "
        f"SELECT {key}, {row}.first_test_s, {sign} WHERE {row}.first_test_s IS NOT NULL "
        "ON CONFLICT (team, week, agent, model, seconds) DO UPDATE SET "
        "episodes = episodes + excluded.episodes;"
    )


_CURVE_KEY = """team TEXT NOT NULL, week TEXT NOT NULL, agent TEXT NOT NULL,
                model TEXT NOT NULL"""

# Numbered, append only: never edit one that has shipped.
MIGRATIONS: list[tuple[str, list[str]]] = [
    (
        "m001_initial",
        [
            """CREATE TABLE tokens (
                id TEXT PRIMARY KEY,
                team TEXT NOT NULL,
                scope TEXT NOT NULL,
                name TEXT,
                digest TEXT NOT NULL UNIQUE,
                created_at REAL NOT NULL,
                revoked_at REAL
            )""",
            """CREATE TABLE revisions (
                team TEXT NOT NULL,
                episode_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                level TEXT NOT NULL,
                contributor TEXT,
                received_at REAL NOT NULL,
                body TEXT NOT NULL,
                PRIMARY KEY (team, episode_id, revision)
            )""",
            f"""CREATE TABLE episodes (
                team TEXT NOT NULL,
                episode_id TEXT NOT NULL,
                revision INTEGER NOT NULL,
                level TEXT NOT NULL,
                contributor TEXT,
                received_at REAL NOT NULL,
                agent TEXT NOT NULL,
                model TEXT NOT NULL,
                started_at REAL,
                week TEXT,
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
                team TEXT NOT NULL,
                week TEXT NOT NULL,
                agent TEXT NOT NULL,
                model TEXT NOT NULL,
                contributor TEXT NOT NULL,
                episodes INTEGER NOT NULL DEFAULT 0,
                {_METRIC_COLUMNS},
                PRIMARY KEY (team, week, agent, model, contributor)
            )""",
            f"""CREATE TRIGGER episodes_cells_insert AFTER INSERT ON episodes BEGIN
                {_cell_upsert("NEW", 1)}
            END""",
            f"""CREATE TRIGGER episodes_cells_update AFTER UPDATE ON episodes BEGIN
                {_cell_upsert("OLD", -1)}
                {_cell_upsert("NEW", 1)}
            END""",
            # Episodes stored before this migration.
            f"""INSERT INTO report_cells (team, week, agent, model, contributor, episodes,
                    {", ".join(METRIC_FIELDS_V1)})
                SELECT team, coalesce(week, ''), agent, model, coalesce(contributor, ''),
                       count(*), {", ".join(f"sum({m})" for m in METRIC_FIELDS_V1)}
                FROM episodes GROUP BY 1, 2, 3, 4, 5""",
        ],
    ),
    # A token may expire (`capture collector token create --expires 90d`); NULL: never.
    ("m003_token_expiry", ["ALTER TABLE tokens ADD COLUMN expires_at REAL"]),
    # The tier mix and repairs (summed like the others), and per episode what is not additive:
    # the time to its first test and its retention per window. Episodes stored before count in
    # no tier (their uploads carried none).
    (
        "m004_tier_figures",
        [
            *(
                f"ALTER TABLE {table} ADD COLUMN {name} INTEGER NOT NULL DEFAULT 0"
                for table in ("episodes", "report_cells")
                for name in _ADDED_FIELDS
            ),
            "ALTER TABLE episodes ADD COLUMN first_test_s REAL",
            "ALTER TABLE episodes ADD COLUMN window_retention TEXT",
            f"""CREATE TABLE window_cells ({_CURVE_KEY}, label TEXT NOT NULL,
                checkpoints INTEGER NOT NULL DEFAULT 0,
                retained_millis INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (team, week, agent, model, label))""",
            f"""CREATE TABLE first_test_cells ({_CURVE_KEY}, seconds REAL NOT NULL,
                episodes INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (team, week, agent, model, seconds))""",
            "DROP TRIGGER episodes_cells_insert",
            "DROP TRIGGER episodes_cells_update",
            f"""CREATE TRIGGER episodes_cells_insert AFTER INSERT ON episodes BEGIN
                {_cell_upsert("NEW", 1, METRIC_FIELDS)}
                {_curve_upsert("NEW", 1)}
            END""",
            f"""CREATE TRIGGER episodes_cells_update AFTER UPDATE ON episodes BEGIN
                {_cell_upsert("OLD", -1, METRIC_FIELDS)}
                {_cell_upsert("NEW", 1, METRIC_FIELDS)}
                {_curve_upsert("OLD", -1)}
                {_curve_upsert("NEW", 1)}
            END""",
        ],
    ),  # fmt: skip
    # The team's webhook secret and its forge deliveries (`storage_forge`).
    SQLITE_MIGRATION,
]

_TOKEN_COLUMNS = "id, team, scope, name, digest, created_at, revoked_at, expires_at"
_EPISODE_COLUMNS = (
    "team",
    "episode_id",
    "revision",
    "level",
    "contributor",
    "received_at",
    "agent",
    "model",
    "started_at",
    "week",
    *METRIC_FIELDS,
    "first_test_s",
    "window_retention",
)
_UPSERT = (
    f"INSERT INTO episodes ({', '.join(_EPISODE_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_EPISODE_COLUMNS))}) "
    "ON CONFLICT (team, episode_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _EPISODE_COLUMNS[2:])
    + " WHERE excluded.revision > episodes.revision"
)


def _episode_values(team: str, row: EpisodeRow) -> tuple[object, ...]:
    m = row.metrics
    return (
        team,
        row.episode_id,
        row.revision,
        row.level,
        row.contributor,
        row.received_at,
        row.agent,
        row.model,
        row.started_at,
        row.week,
        *(getattr(m, name) for name in METRIC_FIELDS),
        row.curve.first_test_s,
        row.curve.windows_json(),
    )


class SqliteStorage(SqliteForgeStorage):
    kind = "sqlite"

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    @property
    def conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def migrate(self) -> int:
        with self._write() as conn:
            conn.execute(
                """CREATE TABLE IF NOT EXISTS schema_migrations (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"""
            )
            done = {v for (v,) in conn.execute("SELECT version FROM schema_migrations")}
            applied = 0
            for version, (name, statements) in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                for sql in statements:
                    conn.execute(sql)
                conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, name, time.time())
                )
                applied += 1
        return applied

    def ping(self) -> None:
        self.conn.execute("SELECT 1").fetchone()

    def store(self, team: str, rows: Sequence[EpisodeRow]) -> set[tuple[str, int]]:
        unique, _ = dedupe_in_batch(rows)
        inserted: set[tuple[str, int]] = set()
        with self._write() as conn:
            for row in unique:
                cur = conn.execute(
                    """INSERT INTO revisions VALUES (?, ?, ?, ?, ?, ?, ?)
                       ON CONFLICT DO NOTHING""",
                    (
                        team,
                        row.episode_id,
                        row.revision,
                        row.level,
                        row.contributor,
                        row.received_at,
                        row.body,
                    ),
                )
                if cur.rowcount == 1:
                    inserted.add(row.key)
            fresh = latest_per_episode(r for r in unique if r.key in inserted)
            conn.executemany(_UPSERT, [_episode_values(team, r) for r in fresh])
        return inserted

    def report_rows(self, team: str, since: float | None, until: float | None) -> list[ReportRow]:
        where, params = week_filter(since, until, "?")
        cur = self.conn.execute(
            f"""SELECT agent, model, NULLIF(week, ''), NULLIF(contributor, ''), episodes,
                       {_METRIC_LIST}
                FROM report_cells WHERE team = ? AND episodes > 0{where}""",
            [team, *params],
        )
        return [ReportRow(r[0], r[1], r[2], r[3], r[4], tuple(r[5:])) for r in cur]

    def curve_rows(self, team: str, since: float | None, until: float | None) -> list[CurveRow]:
        where, params = week_filter(since, until, "?")
        conn = self.conn
        first_tests = conn.execute(
            f"""SELECT agent, model, NULLIF(week, ''), seconds, episodes FROM first_test_cells
                WHERE team = ? AND episodes > 0{where}""",
            [team, *params],
        )
        out = [CurveRow(a, m, w, first_test_s=s, episodes=n) for a, m, w, s, n in first_tests]
        windows = conn.execute(
            f"""SELECT agent, model, NULLIF(week, ''), label, checkpoints, retained_millis
                FROM window_cells WHERE team = ? AND checkpoints > 0{where}""",
            [team, *params],
        )
        out += [
            CurveRow(a, m, w, window=label, checkpoints=n, retained_millis=r)
            for a, m, w, label, n, r in windows
        ]
        return out

    def export_rows(
        self, team: str, since: float | None, until: float | None
    ) -> Iterator[ExportRow]:
        where, params = time_filter(since, until, "e.started_at", "?")
        # A connection of its own: the export streams while other requests use the thread's.
        conn = connect(self.path, timeout=30.0, check_same_thread=False)
        try:
            cur = conn.execute(
                f"""SELECT e.episode_id, e.revision, e.level, e.contributor, e.received_at,
                           e.agent, e.model, e.started_at, r.body
                    FROM episodes e JOIN revisions r ON r.team = e.team
                      AND r.episode_id = e.episode_id AND r.revision = e.revision
                    WHERE e.team = ?{where}
                    ORDER BY e.episode_id""",
                [team, *params],
            )
            for r in cur:
                yield ExportRow(*r)
        finally:
            conn.close()

    def add_token(self, record: TokenRecord) -> None:
        with self._write() as conn:
            conn.execute(
                f"INSERT INTO tokens ({_TOKEN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
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
        row = self.conn.execute(
            f"SELECT {_TOKEN_COLUMNS} FROM tokens WHERE digest = ?",
            (digest,),
        ).fetchone()
        return TokenRecord(*row) if row else None

    def list_tokens(self, team: str | None = None) -> list[TokenRecord]:
        sql = f"SELECT {_TOKEN_COLUMNS} FROM tokens"
        params: list[str] = []
        if team is not None:
            sql += " WHERE team = ?"
            params.append(team)
        return [TokenRecord(*r) for r in self.conn.execute(sql + " ORDER BY created_at", params)]

    def revoke_token(self, token_id: str, now: float) -> bool:
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (now, token_id),
            )
            return cur.rowcount == 1

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
