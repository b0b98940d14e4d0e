"""The connection factory every writing process uses, and the SQLite version check."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

from capture.connection import connect, library_name, sqlite3, sqlite_version, wal_reset_safe
from capture.store.schema import migrate
from tests.conftest import capture_env


def test_the_wal_reset_range() -> None:
    assert not wal_reset_safe("3.40.1")  # Debian 12's
    assert not wal_reset_safe("3.7.0")
    assert not wal_reset_safe("3.51.2")
    assert wal_reset_safe("3.51.3")
    assert wal_reset_safe("3.54.1")
    assert wal_reset_safe("4.0")
    assert wal_reset_safe("3.6.23")  # before WAL existed
    assert not wal_reset_safe("3.51.2a")


def test_connect_waits_and_reports_the_library(tmp_path: Path) -> None:
    conn = connect(tmp_path / "x.db", timeout=2.5, isolation_level=None)
    try:
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 2500
        assert not conn.in_transaction
        conn.execute("CREATE TABLE t (a)")  # autocommit: no transaction left open
        assert not conn.in_transaction
        assert conn.execute("SELECT sqlite_version()").fetchone()[0] == sqlite_version()
    finally:
        conn.close()


def test_doctor_prints_the_version_and_warns_in_the_affected_range(tmp_path: Path) -> None:
    env = capture_env(tmp_path / "home")
    out = subprocess.run(
        [sys.executable, "-m", "capture", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    ).stdout
    version = sqlite3.sqlite_version
    assert f"sqlite {version}" in out.splitlines()[0]
    warned = any(line.startswith("warning   SQLite") for line in out.splitlines())
    assert warned == (not wal_reset_safe(version)), out


#: Where pysqlite3 0.6.1 publishes wheels (pyproject's marker): there the bundled library is used.
WHEELS = {("Linux", "x86_64"), ("Darwin", "arm64"), ("Windows", "AMD64")}


def test_where_a_wheel_exists_the_library_is_bundled_and_safe() -> None:
    if (platform.system(), platform.machine()) not in WHEELS:
        assert library_name() == "sqlite3"  # the stdlib's fallback; doctor warns if unsafe
        return
    assert library_name() == "pysqlite3"
    assert wal_reset_safe(sqlite_version()), sqlite_version()


def test_migrations_run_on_the_factorys_library(tmp_path: Path) -> None:
    """sqlite-utils opens no connection of its own choosing: the migrated database is read by
    a connection of the same library, and its schema is the one our migrations wrote."""
    applied = migrate(tmp_path / "capture.db")
    conn = connect(tmp_path / "capture.db", timeout=1.0)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == applied > 0
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert isinstance(conn, sqlite3.Connection)
    finally:
        conn.close()


def test_without_the_bundled_library_the_stdlibs_is_used_and_doctor_says_so(
    tmp_path: Path,
) -> None:
    """Where pysqlite3 has no wheel it is not installed: the stdlib's module serves the whole
    process, and doctor names it (and warns, with the install line, if it is affected)."""
    env = capture_env(tmp_path / "home")
    script = (
        "import sys\n"
        "sys.modules['pysqlite3'] = None  # as if not installed\n"
        "from capture.cli import main\n"
        "sys.argv = ['capture', 'doctor']\n"
        "main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    ).stdout
    import sqlite3 as stdlib_sqlite3

    first = out.splitlines()[0]
    assert f"sqlite {stdlib_sqlite3.sqlite_version} (sqlite3)" in first, out
    warned = [line for line in out.splitlines() if line.startswith("warning   SQLite")]
    assert bool(warned) == (not wal_reset_safe(stdlib_sqlite3.sqlite_version)), out
    if warned:
        assert "pip install 'pysqlite3>=0.6.1'" in warned[0]
