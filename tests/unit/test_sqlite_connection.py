"""The connection factory every writing process uses, and the SQLite version check."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from capture.connection import connect, sqlite_version, wal_reset_safe
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
