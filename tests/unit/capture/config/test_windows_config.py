from __future__ import annotations

from pathlib import Path

import pytest

from capture.cli.when import parse_since
from capture.config import load_config
from capture.edits.windows import format_duration, parse_duration, parse_windows
from capture.errors import ConfigError
from capture.paths import resolve_paths


def test_durations() -> None:
    assert parse_duration("30s") == 30
    assert parse_duration("2m") == 120
    assert parse_duration("250ms") == 0.25
    assert parse_duration("1.5h") == 5400
    assert format_duration(600) == "10m"
    for bad in ("", "soon", "-1s", "0s"):
        with pytest.raises(ConfigError):
            parse_duration(bad)


def test_windows_sorted_deduplicated() -> None:
    assert [w.label for w in parse_windows("10m,30s,2m,120s")] == ["30s", "2m", "10m"]


def test_config_file_and_environment(tmp_path: Path) -> None:
    env = {"CAPTURE_HOME": str(tmp_path)}
    assert [w.label for w in load_config(env).windows] == ["30s", "2m", "10m"]
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text(
        '[capture]\nwindows = ["1m", "5m"]\nlate_window = "1h"\n'
    )
    config = load_config(env)
    assert [w.label for w in config.windows] == ["1m", "5m"]
    assert config.late.seconds == 3600
    env["CAPTURE_WINDOWS"] = "1s,2s,3s"
    assert [w.seconds for w in load_config(env).windows] == [1, 2, 3]
    (tmp_path / "config" / "config.toml").write_text("windows = [")
    with pytest.raises(ConfigError):
        load_config(env)


def test_watching_junit_reports_on_by_default_off_by_file_or_environment(tmp_path: Path) -> None:
    env = {"CAPTURE_HOME": str(tmp_path)}
    assert load_config(env).watch_reports is True
    (tmp_path / "config").mkdir()
    config_file = tmp_path / "config" / "config.toml"
    config_file.write_text("[capture]\nwatch_junit_reports = false\n")
    assert load_config(env).watch_reports is False
    assert load_config({**env, "CAPTURE_WATCH_JUNIT_REPORTS": "1"}).watch_reports is True
    config_file.write_text('[capture]\nwatch_junit_reports = "sometimes"\n')
    with pytest.raises(ConfigError, match="watch_junit_reports"):
        load_config(env)
    assert load_config({**env, "CAPTURE_WATCH_JUNIT_REPORTS": "no"}).watch_reports is False


def test_paths_follow_xdg_or_capture_home(tmp_path: Path) -> None:
    xdg = resolve_paths({"HOME": "/home/u"})
    assert xdg.db == Path("/home/u/.local/share/capture/capture.db")
    assert xdg.config_file == Path("/home/u/.config/capture/config.toml")
    custom = resolve_paths({"HOME": "/home/u", "XDG_DATA_HOME": "/data"})
    assert custom.db == Path("/data/capture/capture.db")
    assert resolve_paths({"CAPTURE_HOME": str(tmp_path)}).db == tmp_path / "data" / "capture.db"


def test_since() -> None:
    assert parse_since("7d", 1_000_000.0) == 1_000_000.0 - 7 * 86400
    assert parse_since("2026-01-01", 0) == 1767225600.0
