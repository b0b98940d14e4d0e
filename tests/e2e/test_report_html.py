"""`capture report --html` renders in headless Chromium: no console error, no network, the
charts drawn, light and dark mode; a screenshot is kept in the test's temporary directory."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from capture.store.database import Store
from tests.conftest import capture_env, missing_tool
from tests.support.chromium import Browser, find_chromium
from tests.support.report_fixtures import FIXTURE_UNTIL, build_fixture


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("html")
    home = root / "home"
    store = Store.open(home / "data" / "capture.db")
    try:
        build_fixture(store, root)
    finally:
        store.close()
    out = root / "report.html"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "capture",
            "report",
            "--all",
            "--since",
            "7d",
            "--until",
            FIXTURE_UNTIL,
            "--html",
            str(out),
        ],
        capture_output=True,
        text=True,
        # the fixture's pending proposals stay pending: its checkpoints are not read here
        env=capture_env(home, TZ="UTC", CAPTURE_SETTLE="off"),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"wrote {out}"
    return out


def test_page_is_self_contained(page: Path) -> None:
    html = page.read_text()
    assert "<script" not in html
    for needle in ("http://", "https://", "//cdn", "@import", "url("):
        # The only URL is the SVG namespace, which is a name, not a fetch.
        assert html.replace('xmlns="http://www.w3.org/2000/svg"', "").count(needle) == 0, needle
    assert "Content-Security-Policy" in html
    assert "prefers-color-scheme: dark" in html


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_page_renders_in_chromium(page: Path, tmp_path: Path) -> None:
    if not find_chromium():
        missing_tool("chromium is needed (Debian: apt-get install chromium; .ci/apt-packages)")
    with Browser(tmp_path / "profile") as browser:
        browser.open(page.as_uri())
        assert browser.errors() == []
        assert browser.evaluate("document.querySelectorAll('svg.chart').length") == 2
        # Outcome mix: a segment per (day, outcome) with proposals: 03-01 kept, edited; 03-03
        # undone, rejected; 03-04 lost, pending; 03-05 pending; 03-08 kept. 8 days on the axis.
        assert browser.evaluate("document.querySelectorAll('svg.bars rect.bar').length") == 8
        assert (
            browser.evaluate(
                "[...document.querySelectorAll('svg.bars text.tick')].filter(t => "
                "/^\\d\\d-\\d\\d$/.test(t.textContent)).length"
            )
            == 8
        )
        # Retention: a line per agent (codex has a single point, so no path), 5 dots.
        assert browser.evaluate("document.querySelectorAll('svg.lines path.line').length") == 1
        assert browser.evaluate("document.querySelectorAll('svg.lines circle.dot').length") == 5
        # The charts have a size on the page, and the tables are there.
        assert (
            browser.evaluate(
                "Math.round(document.querySelector('svg.bars').getBoundingClientRect().height)"
            )
            > 150
        )
        assert browser.evaluate("document.querySelectorAll('table').length") == 5
        assert "88% 7/8" in browser.evaluate("document.body.innerText")
        light = browser.evaluate("getComputedStyle(document.body).backgroundColor")
        browser.screenshot(tmp_path / "report-light.png")
        browser.call(
            "Emulation.setEmulatedMedia",
            features=[{"name": "prefers-color-scheme", "value": "dark"}],
        )
        dark = browser.evaluate("getComputedStyle(document.body).backgroundColor")
        kept_dark = browser.evaluate("getComputedStyle(document.querySelector('rect.o-kept')).fill")
        browser.screenshot(tmp_path / "report-dark.png")
        assert browser.errors() == []
    assert light == "rgb(255, 255, 255)"
    assert dark == "rgb(13, 17, 23)"
    assert kept_dark == "rgb(63, 185, 80)"
    for name in ("report-light.png", "report-dark.png"):
        width, height = _png_size(tmp_path / name)
        assert width >= 1000 and height >= 1500  # the whole page, beyond the viewport


def test_error_detection_is_real(tmp_path: Path) -> None:
    """The check above can fail: a page with a script error and a fetch is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text('<script>throw new Error("boom")</script><img src="http://127.0.0.1:9/x.png">')
    with Browser(tmp_path / "profile") as browser:
        browser.open(bad.as_uri())
        errors = browser.errors()
    assert any("boom" in e or "Uncaught" in e for e in errors)
    assert len(errors) >= 2
