"""`capture report` through the real command over a fixture database built through the store and
recorder API at fixed times (tests/support/report_fixtures.py tells the story). Every expected
number below was computed by hand from that story."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from capture.store.database import Store
from tests.conftest import capture_env
from tests.support.report_fixtures import FIXTURE_UNTIL, build_fixture

PERIOD = ["--since", "7d", "--until", FIXTURE_UNTIL]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("report")
    home = root / "home"
    store = Store.open(home / "data" / "capture.db")
    try:
        build_fixture(store, root)
    finally:
        store.close()
    yield home


def capture(
    home: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    # the fixture is read as it was built, its pending proposals left pending (a reading command
    # would otherwise measure their overdue checkpoints against this machine's disk)
    full = capture_env(home, TZ=env.pop("TZ", "UTC"), CAPTURE_SETTLE="off", **env)
    return subprocess.run(
        [sys.executable, "-m", "capture", *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd or home,
        timeout=120,
    )


def report_json(home: Path, *args: str) -> dict:
    result = capture(home, "report", "--all", *PERIOD, "--json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def rate(n: int, d: int) -> dict:
    return {"numerator": n, "denominator": d, "rate": n / d if d else None}


def test_totals_match_the_hand_computed_figures(home: Path) -> None:
    report = report_json(home)
    assert report["schema"] == "agent-capture/report@1"
    assert report["period"] == {
        "since": "2026-03-01T12:07:30.000Z",
        "until": "2026-03-08T12:07:30.000Z",
    }
    assert report["previous_period"] == {
        "since": "2026-02-22T12:07:30.000Z",
        "until": "2026-03-01T12:07:30.000Z",
    }
    assert report["workspace"] is None
    assert report["by"] == "agent"
    assert [w["window"] for w in report["windows"]] == ["30s", "2m", "10m", "late"]
    t = report["total"]
    # P1..P9; P10 and Q0..Q3 are outside the period.
    assert t["proposals"] == {"proposed": 9, "applied": 7, "rejected": 1, "undecided": 1}
    assert t["acceptance"] == rate(7, 8)
    assert t["outcomes"] == {
        "settled": 6,
        "pending": 1,
        "kept": rate(2, 6),
        "edited": rate(1, 6),
        "undone": rate(2, 6),
        "lost": rate(1, 6),
        # P6 is the lost one: five settled proposals were observed
        "of_observed": {"kept": rate(2, 5), "edited": rate(1, 5), "undone": rate(2, 5)},
    }
    assert t["added"] == {"chars": 308, "lines": 14}
    assert t["retention"] == [
        {"window": "30s", "seconds": 30.0, "observed": 7, "lost": 0, **rate(293, 308)},
        {"window": "2m", "seconds": 120.0, "observed": 6, "lost": 1, **rate(148, 218)},
        {"window": "10m", "seconds": 600.0, "observed": 6, "lost": 1, **rate(138, 218)},
        {"window": "late", "seconds": 86400.0, "observed": 2, "lost": 0, **rate(90, 140)},
    ]
    assert t["tests"] == {
        "runs": 7,  # R1-R6 and R8; R7 followed no open episode, R9 is after the period
        "with_result": 6,  # R6 told nothing
        "pass_rate": rate(4, 6),  # R2, R3, R5 (by its counts), R8
        "episodes_tested": 4,  # E1, E3, E4, E6
        "repairs": rate(1, 2),  # E1 failed then passed; E4 failed on one command only
        "first_test": {"episodes": 4, "median_s": 210.0, "p90_s": 600.0},  # 60 120 300 600
    }
    assert [(f["file"], f["numerator"], f["denominator"]) for f in t["most_undone_files"]] == [
        ("src/app.py", 2, 3)
    ]
    assert t["most_undone_files"][0]["workspace"].endswith("/a")


def test_change_against_the_previous_period(home: Path) -> None:
    change = report_json(home)["total"]["change"]
    # Previous period: Q1 kept (100 chars), Q2 rejected, Q3 undone (20 chars); RQ1 fail, RQ2 pass.
    assert change["proposed"] == {"value": 9, "previous": 3, "delta": 6}
    assert change["applied"] == {"value": 7, "previous": 2, "delta": 5}
    assert change["rejected"] == {"value": 1, "previous": 1, "delta": 0}
    assert change["acceptance"] == {
        "value": round(7 / 8, 6),
        "previous": round(2 / 3, 6),
        "delta": round(7 / 8 - 2 / 3, 6),
    }
    assert change["settled"]["delta"] == 4
    assert change["kept_rate"] == {
        "value": round(2 / 6, 6),
        "previous": 0.5,
        "delta": round(2 / 6 - 0.5, 6),
    }
    assert change["undone_rate"]["previous"] == 0.5
    assert change["lost_rate"]["previous"] == 0.0
    assert change["chars_added"] == {"value": 308, "previous": 120, "delta": 188}
    assert change["retention_30s"]["previous"] == round(100 / 120, 6)
    assert change["retention_late"]["previous"] == 1.0
    assert change["test_runs"] == {"value": 7, "previous": 2, "delta": 5}
    assert change["test_pass_rate"]["previous"] == 0.5
    assert change["repair_rate"]["previous"] == 1.0
    assert change["first_test_median_s"] == {"value": 210.0, "previous": 180.0, "delta": 30.0}


def test_groups_by_agent(home: Path) -> None:
    groups = {g["key"]: g for g in report_json(home, "--by", "agent")["groups"]}
    assert list(groups) == ["claude-code", "codex"]  # most proposals first
    cc, cx = groups["claude-code"], groups["codex"]
    assert cc["proposals"] == {"proposed": 6, "applied": 5, "rejected": 1, "undecided": 0}
    assert cc["acceptance"] == rate(5, 6)
    assert cc["outcomes"]["kept"] == rate(2, 5)
    assert cc["outcomes"]["undone"] == rate(2, 5)
    assert cc["outcomes"]["pending"] == 0
    assert cc["added"] == {"chars": 218, "lines": 10}
    assert [(w["numerator"], w["denominator"]) for w in cc["retention"]] == [
        (218, 218),
        (148, 218),
        (138, 218),
        (90, 140),
    ]
    assert cc["tests"]["runs"] == 4
    assert cc["tests"]["pass_rate"] == rate(3, 4)
    assert cc["tests"]["repairs"] == rate(1, 1)
    assert cc["tests"]["first_test"] == {"episodes": 3, "median_s": 120.0, "p90_s": 300.0}
    assert [(f["file"], f["numerator"], f["denominator"]) for f in cc["most_undone_files"]] == [
        ("src/app.py", 2, 3)
    ]
    assert cc["change"]["proposed"] == {"value": 6, "previous": 2, "delta": 4}
    assert cc["change"]["kept_rate"]["previous"] == 1.0

    assert cx["proposals"] == {"proposed": 3, "applied": 2, "rejected": 0, "undecided": 1}
    assert cx["outcomes"]["settled"] == 1
    assert cx["outcomes"]["pending"] == 1
    assert cx["outcomes"]["lost"] == rate(1, 1)
    assert [(w["observed"], w["numerator"], w["denominator"]) for w in cx["retention"]] == [
        (2, 75, 90),
        (1, 0, 0),
        (1, 0, 0),
        (0, 0, 0),
    ]
    assert cx["retention"][1]["rate"] is None
    assert cx["tests"]["runs"] == 3
    assert cx["tests"]["pass_rate"] == rate(1, 2)
    assert cx["tests"]["repairs"] == rate(0, 1)
    assert cx["tests"]["first_test"]["median_s"] == 600.0
    assert cx["most_undone_files"] == []
    assert cx["change"]["undone_rate"]["previous"] == 1.0


def test_groups_by_model_language_and_workspace(home: Path) -> None:
    by_model = {g["key"]: g for g in report_json(home, "--by", "model")["groups"]}
    assert {k: g["proposals"]["proposed"] for k, g in by_model.items()} == {
        "opus": 5,
        "gpt-5": 2,
        "(no model)": 1,
        "sonnet": 1,
    }
    assert by_model["sonnet"]["outcomes"]["kept"] == rate(1, 1)
    assert by_model["sonnet"]["tests"]["runs"] == 1
    assert by_model["opus"]["tests"]["runs"] == 3

    by_language = {g["key"]: g for g in report_json(home, "--by", "language")["groups"]}
    assert {k: g["proposals"]["proposed"] for k, g in by_language.items()} == {
        "Python": 4,
        "Docs": 2,
        "TypeScript": 2,
        "Make": 1,
    }
    assert by_language["Python"]["outcomes"]["undone"] == rate(2, 4)
    assert by_language["Python"]["added"]["chars"] == 210
    assert by_language["TypeScript"]["outcomes"]["lost"] == rate(1, 1)
    assert by_language["Docs"]["proposals"]["undecided"] == 1
    assert all(g["tests"] is None for g in by_language.values())  # a run covers many files
    assert report_json(home, "--by", "language")["total"]["tests"]["runs"] == 7

    by_ws = report_json(home, "--by", "workspace")["groups"]
    assert [(Path(g["key"]).name, g["proposals"]["proposed"]) for g in by_ws] == [
        ("a", 6),
        ("b", 3),
    ]
    assert by_ws[1]["tests"]["runs"] == 3


def test_groups_by_day_and_week(home: Path) -> None:
    days = report_json(home, "--by", "day")["groups"]
    assert [(g["key"], g["proposals"]["proposed"]) for g in days] == [
        ("2026-03-01", 2),
        ("2026-03-03", 3),
        ("2026-03-04", 2),
        ("2026-03-05", 1),
        ("2026-03-08", 1),
    ]
    assert days[0]["tests"]["runs"] == 2
    assert days[2]["tests"]["runs"] == 3
    # P3 and P4 undone on 03-03; P1, kept, was on 03-01: that day's file has 2 of 2 undone.
    assert [
        (f["file"], f["numerator"], f["denominator"]) for f in days[1]["most_undone_files"]
    ] == [("src/app.py", 2, 2)]
    assert days[0]["most_undone_files"] == []
    weeks = report_json(home, "--by", "week")["groups"]
    # 2026-03-01 is a Sunday: its week began on Monday 02-23.
    assert [(g["key"], g["proposals"]["proposed"]) for g in weeks] == [
        ("2026-02-23", 2),
        ("2026-03-02", 7),
    ]


def test_local_days_follow_the_time_zone(home: Path) -> None:
    result = capture(home, "report", "--all", *PERIOD, "--json", "--by", "day", TZ="Asia/Yangon")
    assert result.returncode == 0, result.stderr
    days = json.loads(result.stdout)["groups"]
    # +06:30: P2 (03-01 18:00 UTC) is 03-02 00:30 local; P1 (12:10) stays on 03-01.
    assert [(g["key"], g["proposals"]["proposed"]) for g in days] == [
        ("2026-03-01", 1),
        ("2026-03-02", 1),
        ("2026-03-03", 3),
        ("2026-03-04", 2),
        ("2026-03-05", 1),
        ("2026-03-08", 1),
    ]
    assert days[1]["outcomes"]["edited"] == rate(1, 1)
    # The period itself is absolute: the totals never depend on the zone.
    assert json.loads(result.stdout)["total"]["proposals"]["proposed"] == 9


def test_workspace_filter_and_default_workspace(home: Path) -> None:
    root = home.parent
    only_b = json.loads(
        capture(home, "report", *PERIOD, "--json", "--workspace", str(root / "b")).stdout
    )
    assert only_b["workspace"] == str(root / "b")
    assert only_b["total"]["proposals"]["proposed"] == 3
    assert only_b["total"]["tests"]["runs"] == 3
    assert only_b["total"]["change"]["proposed"]["previous"] == 1  # Q3
    # Run from inside workspace a: the report is about it.
    (root / "a").mkdir(exist_ok=True)
    here = json.loads(capture(home, "report", *PERIOD, "--json", cwd=root / "a").stdout)
    assert here["workspace"] == str(root / "a")
    assert here["total"]["proposals"]["proposed"] == 6
    assert [f["file"] for f in here["total"]["most_undone_files"]] == ["src/app.py"]
    # A workspace with nothing recorded reports zeros.
    nothing = json.loads(
        capture(home, "report", *PERIOD, "--json", "--workspace", str(root / "zzz")).stdout
    )
    assert nothing["total"]["proposals"]["proposed"] == 0


def test_terminal_report_wide_narrow_and_no_color(home: Path) -> None:
    wide = capture(home, "report", "--all", *PERIOD, COLUMNS="150")
    assert wide.returncode == 0, wide.stderr
    assert "claude-code" in wide.stdout and "codex" in wide.stdout
    assert "88% 7/8" in wide.stdout  # acceptance with its numerator and denominator
    assert "33% 2/6" in wide.stdout  # kept
    assert "src/app.py" in wide.stdout
    assert "+20.8 pp" in wide.stdout
    assert "\x1b[" not in wide.stdout  # not a terminal: no escapes

    narrow = capture(home, "report", "--all", *PERIOD, COLUMNS="48")
    assert narrow.returncode == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    assert max(len(line) for line in lines) <= 48
    assert "agent: claude-code" in narrow.stdout
    assert any(re.search(r"accepted\s+88% 7/8\s+\+20\.8 pp", line) for line in lines)

    coloured = capture(home, "report", "--all", *PERIOD, COLUMNS="150", FORCE_COLOR="1")
    assert "\x1b[" in coloured.stdout
    plain = capture(home, "report", "--all", *PERIOD, COLUMNS="150", FORCE_COLOR="1", NO_COLOR="1")
    assert "\x1b[" not in plain.stdout
    assert "88% 7/8" in plain.stdout


def test_today_oneline(home: Path) -> None:
    result = capture(home, "report", "--all", "--today", "--oneline", "--until", "2026-03-04T12:00")
    assert result.returncode == 0, result.stderr
    # 03-04 from midnight: P6 (lost) and P7 (pending); R4 fail, R5 pass, R6 no result.
    assert result.stdout.strip() == (
        "2 proposed · 2 applied · kept 0% (0/1) · 1 pending · tests 1/2 passed"
    )


def test_bad_input_is_one_line(home: Path) -> None:
    for args, message in (
        (["--since", "yesterday-ish"], "not a duration or date"),
        (["--since", "2026-03-09", "--until", "2026-03-01"], "--since must be before --until"),
        (["--today", "--since", "2d"], "--today or --since"),
    ):
        result = capture(home, "report", "--all", *args)
        assert result.returncode != 0
        assert result.stderr.startswith("capture: error: "), result.stderr
        assert message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    result = capture(
        home, "report", "--all", *PERIOD, "--html", str(home / "no" / "dir" / "r.html")
    )
    assert result.returncode != 0
    assert result.stderr.startswith("capture: error: cannot write")


def test_show_prints_the_episode_timeline(home: Path) -> None:
    episodes = json.loads(capture(home, "episodes", "--json").stdout)
    (e3,) = [e for e in episodes if len(e["proposals"]) == 3]
    result = capture(home, "show", e3["id"][:12], COLUMNS="120", FORCE_COLOR="1", NO_COLOR="1")
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stdout
    lines = [line.strip() for line in result.stdout.splitlines()]
    assert lines[0] == f"episode {e3['id']}  claude-code (opus)"
    assert "outcomes  1 rejected, 2 undone" in lines
    events = [line for line in lines if re.match(r"^(\+[\d.]+[smhd]|\+\d+m\d\ds|later)\s", line)]
    assert [re.sub(r"^\S+\s+", "", line) for line in events] == [
        "#1 src/app.py: applied (+40/-0 chars, 2 line(s))",
        "#1 30s check: kept (similarity 100%, retention 100%, seen on disk)",
        "#2 src/app.py: applied (+20/-0 chars, 1 line(s))",
        "#2 30s check: kept (similarity 100%, retention 100%, seen on disk)",
        "#3 README.md: proposed (+30/-0 chars, 1 line(s))",
        "#3 rejected by user",
        "test run `npm test`: passed (3 passed), exit 0, 1.0s",
        "#1 2m check: undone (similarity 0%, retention 0%, seen on disk)",
        "#2 2m check: undone (similarity 0%, retention 0%, seen on disk)",
        "#1 10m check: undone (similarity 0%, retention 0%, seen on disk)",
        "#2 10m check: undone (similarity 0%, retention 0%, seen on disk)",
        "#1 outcome: undone — fixture undone (rules v3)",
        "#2 outcome: undone — fixture undone (rules v3)",
        "#1 late check: undone (similarity 0%, retention 0%, seen on disk)",
        "#2 late check: not observed yet (due 2026-03-04T10:01:00.000Z)",
    ]
    assert events[5].startswith("+3m00s") and events[-2].startswith("+1.0d")
    assert "+yyyyyyyyyyyyyyyyyyy" in lines  # the diff of #2
    assert json.loads(capture(home, "show", e3["id"], "--json").stdout) == e3
    bare = capture(home, "show", e3["id"], "--no-diff", COLUMNS="120").stdout
    assert "+yyyyyyyyyyyyyyyyyyy" not in bare and "#3 rejected by user" in bare
    missing = capture(home, "show", "ffffffffffff")
    assert missing.returncode != 0 and missing.stderr.startswith("capture: error: ")
