"""Fixtures for the collector: a real PostgreSQL server (started here, stopped at the end) and
real collector processes. Without PostgreSQL binaries the PostgreSQL tests skip locally and
fail in CI (CI=true), so that a missing package is never a silent green."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import missing_tool
from tests.support.collector_support import Collector, PgCluster, PostgresMissing

_names = itertools.count()


def _missing(reason: str) -> None:
    missing_tool(reason)


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[PgCluster]:
    try:
        import psycopg  # noqa: F401
    except ImportError:
        _missing("psycopg is not installed: pip install -e '.[test]'")
    try:
        cluster = PgCluster().start()
    except PostgresMissing as exc:
        _missing(str(exc))
        raise
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: PgCluster) -> str:
    return pg_cluster.create_database(f"t{os.getpid()}_{next(_names)}")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'collector.db'}"


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'collector.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


StartCollector = Callable[..., Collector]


@pytest.fixture
def start_collector(tmp_path: Path) -> Iterator[StartCollector]:
    started: list[Collector] = []

    def start(db: str, *args: str) -> Collector:
        collector = Collector(db, tmp_path / "home", args).start()
        started.append(collector)
        return collector

    yield start
    for collector in started:
        collector.stop()


class Served:
    """One collector process over one database, shared by a module's tests (each test uses
    teams of its own, which is also what keeps the tests apart)."""

    def __init__(self, db: str, collector: Collector) -> None:
        self.db = db
        self.collector = collector
        self.url = collector.url

    def token(self, team: str, scope: str, expires_in: float | None = None) -> str:
        from tests.support.collector_support import make_token

        return make_token(self.db, team, scope, expires_in)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("served")
    if request.param == "sqlite":
        db = f"sqlite:///{base / 'collector.db'}"
    else:
        cluster: PgCluster = request.getfixturevalue("pg_cluster")
        db = cluster.create_database(f"m{os.getpid()}_{next(_names)}")
    collector = Collector(db, base / "home", ("--rate", "1000", "--burst", "1000")).start()
    try:
        yield Served(db, collector)
    finally:
        collector.stop()
