"""Databases that report cleanly: empty, only pending proposals, left by an older release. And
today's figures for status bars, from the library and the command line."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capture import report as report_package
from capture.config import Config
from capture.connection import sqlite3
from capture.model import HunkInput, ProposalInput, State
from capture.paths import resolve_paths
from capture.recording.recorder import record_proposal
from capture.store.database import Store
from capture.store.schema import SCHEMA_VERSION
from tests.conftest import capture_env
from tests.support.chromium import Browser
from tests.support.report_fixtures import at, build_fixture, copy_into_schema_v1


def capture(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "capture", *args],
        capture_output=True,
        text=True,
        # each database is read as it is, what it holds pending left pending
        env=capture_env(home, TZ="UTC", CAPTURE_SETTLE="off", **env),
        cwd=home.parent,
        timeout=120,
    )


def every_output(home: Path, tmp_path: Path) -> dict:
    """Run every form of the report; all must succeed. Returns the JSON."""
    for args in (
        ["report", "--all"],
        ["report", "--all", "--by", "day"],
        ["report", "--all", "--by", "language"],
        ["report", "--all", "--today", "--oneline"],
        ["report"],
    ):
        result = capture(home, *args, COLUMNS="120")
        assert result.returncode == 0, (args, result.stderr)
        assert result.stderr == ""
        narrow = capture(home, *args, COLUMNS="40")
        assert narrow.returncode == 0, (args, narrow.stderr)
    html = tmp_path / "r.html"
    result = capture(home, "report", "--all", "--html", str(html))
    assert result.returncode == 0, result.stderr
    with Browser(tmp_path / "profile") as browser:
        browser.open(html.as_uri())
        assert browser.errors() == []
        assert browser.evaluate("document.querySelectorAll('svg.chart').length") == 2
    result = capture(home, "report", "--all", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_empty_database(tmp_path: Path) -> None:
    home = tmp_path / "home"
    data = every_output(home, tmp_path)
    t = data["total"]
    assert t["proposals"] == {"proposed": 0, "applied": 0, "rejected": 0, "undecided": 0}
    assert t["acceptance"] == {"numerator": 0, "denominator": 0, "rate": None}
    assert t["outcomes"]["kept"]["rate"] is None
    assert t["retention"] == [] and data["windows"] == []
    assert t["tests"]["runs"] == 0 and t["tests"]["first_test"]["median_s"] is None
    assert data["groups"] == []
    assert t["change"]["proposed"] == {"value": 0, "previous": 0, "delta": 0}
    assert t["change"]["kept_rate"] == {"value": None, "previous": None, "delta": None}
    text = capture(home, "report", "--all", COLUMNS="120").stdout
    assert "No proposals recorded in this period." in text
    assert "capture install claude-code" in text and " - " not in text  # no table of dashes
    page = (tmp_path / "r.html").read_text()
    ticks = re.findall(
        r'<text class="tick" x="\d+" y="[\d.]+" text-anchor="end">([^<]*)</text>', page
    )
    assert ticks[:5] == ["0", "1", "2", "3", "4"], ticks  # whole counts up the empty bar chart
    oneline = capture(home, "report", "--all", "--today", "--oneline").stdout
    assert oneline.strip() == "0 proposed · 0 applied"


def test_only_pending_proposals(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    ws.mkdir()
    store = Store.open(home / "data" / "capture.db")
    config = Config(paths=resolve_paths({"CAPTURE_HOME": str(home)}))
    import time

    now = time.time() - 3600
    for i, state in enumerate((State.APPLIED, State.APPLIED, State.SHOWN)):
        record_proposal(
            store,
            config,
            ProposalInput(
                path=str(ws / f"f{i}.py"),
                workspace=str(ws),
                agent="claude-code",
                hunks=[HunkInput("", "print('hello')\n")],
                state=state,
                file_text="print('hello')\n",
            ),
            now=now + i,
        )
    store.close()
    data = every_output(home, tmp_path)
    t = data["total"]
    assert t["proposals"] == {"proposed": 3, "applied": 2, "rejected": 0, "undecided": 1}
    assert t["outcomes"]["settled"] == 0 and t["outcomes"]["pending"] == 2
    assert all(t["outcomes"][o]["rate"] is None for o in ("kept", "edited", "undone", "lost"))
    assert t["added"] == {"chars": 30, "lines": 2}
    assert t["retention"] == []  # nothing observed yet
    assert t["most_undone_files"] == []
    assert [g["key"] for g in data["groups"]] == ["claude-code"]


def test_database_left_by_release_1(tmp_path: Path) -> None:
    home = tmp_path / "home"
    db = home / "data" / "capture.db"
    db.parent.mkdir(parents=True)
    modern = Store.open(tmp_path / "modern.db")
    build_fixture(modern, tmp_path)
    modern.close()
    copy_into_schema_v1(tmp_path / "modern.db", db)
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == 1
    result = capture(
        home, "report", "--all", "--since", "7d", "--until", "2026-03-08T12:07:30Z", "--json"
    )
    assert result.returncode == 0, result.stderr
    t = json.loads(result.stdout)["total"]
    # The same figures as a database that always had the rollups (test_report_cli).
    assert t["proposals"] == {"proposed": 9, "applied": 7, "rejected": 1, "undecided": 1}
    assert t["outcomes"]["kept"] == {"numerator": 2, "denominator": 6, "rate": 2 / 6}
    assert [w["numerator"] for w in t["retention"]] == [293, 148, 138, 90]
    assert t["tests"]["runs"] == 7
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    every_output(home, tmp_path)


def test_today_stats_for_the_lsp_server(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "capture.db")
    build_fixture(store, tmp_path)
    stats = report_package.today_stats(store, at("2026-03-04 12:00"), utc_offset=0)
    assert stats["since"] == "2026-03-04T00:00:00.000Z"
    assert stats["until"] == "2026-03-04T12:00:00.000Z"
    assert stats["proposals"] == {"proposed": 2, "applied": 2, "rejected": 0, "undecided": 0}
    assert stats["outcomes"]["lost"] == {"numerator": 1, "denominator": 1, "rate": 1.0}
    assert stats["outcomes"]["pending"] == 1
    assert stats["tests"]["runs"] == 3
    assert stats["line"] == "2 proposed · 2 applied · kept 0% (0/1) · 1 pending · tests 1/2 passed"
    json.dumps(stats)  # JSON-ready for workspace/executeCommand
    # One workspace only; a workspace with nothing recorded is all zeros.
    only_a = report_package.today_stats(
        store, at("2026-03-03 23:00"), utc_offset=0, workspace=str(tmp_path / "a")
    )
    assert only_a["proposals"]["proposed"] == 3
    nothing = report_package.today_stats(
        store, at("2026-03-03 23:00"), utc_offset=0, workspace=str(tmp_path / "none")
    )
    assert nothing["proposals"]["proposed"] == 0
    # Local midnight: at +02:00, 03-04 01:00 local is 03-03 23:00 UTC: only the last hour.
    east = report_package.today_stats(store, at("2026-03-03 23:00"), utc_offset=7200)
    assert east["since"] == "2026-03-03T22:00:00.000Z"
    assert east["proposals"]["proposed"] == 0
    store.close()


@pytest.mark.parametrize("bad", ["--since", "--until"])
def test_missing_values_are_usage_errors(tmp_path: Path, bad: str) -> None:
    result = capture(tmp_path / "home", "report", bad)
    assert result.returncode == 2
    assert "expected one argument" in result.stderr
