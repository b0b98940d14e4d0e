"""JUnit XML from real runners parses to the counts the runners printed; hostile or broken XML
is refused with one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from capture.testruns.junit_files import (
    find_reports,
    glob_matches,
    read_reports,
    report_dirs,
    reports_named_in,
)
from capture.testruns.junit_xml import MAX_REPORT_BYTES, ReportError, merge_reports, parse_junit
from capture.testruns.summaries import parse_summary

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "junit"

SUITE = """\
import pytest

class TestMath:
    def test_add(self):
        assert 1 + 1 == 2

    def test_sub(self):
        assert 1 - 1 == 1

def test_ok():
    pass

@pytest.mark.skip(reason="later")
def test_skipped():
    pass

@pytest.mark.xfail
def test_expected_failure():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError("no database")

def test_error(broken):
    pass

@pytest.mark.parametrize("n", [1, 2, 3])
def test_param(n):
    assert n != 2, "<&> in a message"
"""


@pytest.fixture(scope="module")
def pytest_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, str]:
    """A report written by a real pytest run, with what that pytest printed."""
    root = tmp_path_factory.mktemp("suite")
    (root / "tests").mkdir()
    (root / "tests" / "test_suite.py").write_text(SUITE)
    report = root / "report.xml"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            f"--junitxml={report}",
            "-o",
            "junit_family=xunit1",
            "tests",
        ],
        cwd=root,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # no plugin of any kind
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return report.read_bytes(), proc.stdout


def test_pytest_report_matches_what_pytest_printed(pytest_report: tuple[bytes, str]) -> None:
    data, printed = pytest_report
    report = parse_junit(data)
    summary = parse_summary(printed)
    assert summary is not None
    assert report.runner == "pytest"
    # pytest counts an xfail as skipped in the XML; the summary parser does the same.
    assert (
        (report.passed, report.failed, report.errors, report.skipped)
        == (
            summary.passed,
            summary.failed,
            summary.errors,
            summary.skipped,
        )
        == (4, 2, 1, 2)
    )
    assert sorted(report.failing_ids) == [
        "tests.test_suite.TestMath.test_sub",
        "tests.test_suite.test_error",
        "tests.test_suite.test_param[2]",
    ]
    sub = next(c for c in report.cases if c.test_id.endswith("test_sub"))
    assert sub.file == "tests/test_suite.py" and sub.classname == "tests.test_suite.TestMath"
    assert report.duration_s is not None and report.duration_s >= 0


def test_jest_junit() -> None:
    report = parse_junit((FIXTURES / "jest-junit.xml").read_bytes())
    assert report.runner == "jest"
    assert (report.passed, report.failed, report.errors, report.skipped) == (2, 2, 0, 1)
    assert report.failing_ids == ["sum adds negatives", "throws"]
    assert report.duration_s == pytest.approx(0.92)
    with_files = parse_junit((FIXTURES / "jest-junit-file-attribute.xml").read_bytes())
    assert {c.file for c in with_files.cases} == {"src/sum.test.js", "src/other.test.js"}


def test_go_junit_report() -> None:
    report = parse_junit((FIXTURES / "go-junit-report.xml").read_bytes())
    assert report.runner == "go"
    assert (report.passed, report.failed, report.errors, report.skipped) == (4, 1, 0, 1)
    assert report.failing_ids == ["example.com/goproj/calc.TestAddWrong"]
    # The same run's `go test -v` output, read by the summary parser, agrees.
    summary = parse_summary((FIXTURES / "go-test-v.txt").read_text())
    assert summary is not None
    assert (summary.passed, summary.failed, summary.skipped) == (4, 1, 1)


def test_surefire_one_file_per_class_merged() -> None:
    files = sorted((FIXTURES / "surefire").glob("TEST-*.xml"))
    assert len(files) == 2
    report = merge_reports(parse_junit(f.read_bytes()) for f in files)
    assert report.runner == "surefire"
    assert (report.passed, report.failed, report.errors, report.skipped) == (2, 1, 1, 1)
    assert sorted(report.failing_ids) == [
        "com.example.CalcTest.addsWrong",
        "com.example.CalcTest.errors",
    ]
    assert {c.classname for c in report.cases} == {"com.example.CalcTest", "com.example.OtherTest"}


def test_vitest_style_classname_is_a_file() -> None:
    xml = b"""<testsuites name="vitest tests" tests="2" failures="1" time="0.1">
      <testsuite name="src/a.test.ts" tests="2" failures="1">
        <testcase classname="src/a.test.ts" name="sum &gt; adds" time="0.001"/>
        <testcase classname="src/a.test.ts" name="sum &gt; subtracts" time="0.001">
          <failure message="expected 1 to be 2"/>
        </testcase>
      </testsuite></testsuites>"""
    report = parse_junit(xml)
    assert report.runner == "vitest"
    assert report.failing_ids == ["src/a.test.ts.sum > subtracts"]
    assert report.cases[1].file == "src/a.test.ts"


def test_summary_only_report_and_namespaces() -> None:
    report = parse_junit(b'<testsuite name="x" tests="5" failures="1" errors="1" skipped="1"/>')
    assert (report.passed, report.failed, report.errors, report.skipped) == (2, 1, 1, 1)
    namespaced = parse_junit(
        b'<t:testsuites xmlns:t="urn:x"><t:testsuite name="s">'
        b'<t:testcase name="a"/><t:testcase name="b"><t:error/></t:testcase>'
        b"</t:testsuite></t:testsuites>"
    )
    assert (namespaced.passed, namespaced.errors) == (1, 1)


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<testsuite name="&lol3;"><testcase name="a"/></testsuite>"""

EXTERNAL = b"""<?xml version="1.0"?>
<!DOCTYPE t [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<testsuite name="x"><testcase name="&secret;"/></testsuite>"""


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (BILLION_LAUGHS, "refused: EntitiesForbidden"),
        (EXTERNAL, "refused: EntitiesForbidden"),
        (b"<testsuite><testcase name='a'>", "malformed XML"),
        (b"", "malformed XML"),
        (b"\xff\xfe garbage", "malformed XML"),
        (b"<coverage/>", "not a JUnit report (root element <coverage>)"),
        (b" " * (MAX_REPORT_BYTES + 1), "larger than 32 MB"),
    ],
)
def test_bad_reports_are_refused_with_one_line(data: bytes, message: str) -> None:
    with pytest.raises(ReportError) as info:
        parse_junit(data)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_deep_nesting_is_refused_without_a_crash() -> None:
    started = time.monotonic()
    with pytest.raises(ReportError):
        parse_junit(b"<testsuites>" + b"<a>" * 50_000)
    assert time.monotonic() - started < 30


def test_reports_named_in_a_command() -> None:
    argv = ["sh", "-c", "go test -v ./... 2>&1 | go-junit-report > out/report.xml"]
    assert reports_named_in(argv, {}) == ["out/report.xml"]
    assert reports_named_in(["pytest", "--junitxml=junit.xml", "-q"], {}) == ["junit.xml"]
    assert reports_named_in(["jest"], {"JEST_JUNIT_OUTPUT_DIR": "reports"}) == ["reports/junit.xml"]
    assert reports_named_in(["pytest", "-q"], {}) == []


def test_report_globs() -> None:
    globs = ["junit*.xml", "test-results/**/*.xml", "target/surefire-reports/TEST-*.xml"]
    assert glob_matches("junit.xml", globs)
    assert glob_matches("test-results/a/b/c.xml", globs)
    assert glob_matches("test-results/c.xml", globs)
    assert glob_matches("target/surefire-reports/TEST-com.x.FooTest.xml", globs)
    assert not glob_matches("sub/junit.xml", globs)
    assert not glob_matches("target/surefire-reports/com.x.FooTest.txt", globs)
    assert report_dirs(globs) == {"": False, "test-results": True, "target/surefire-reports": False}


def test_find_and_read_reports_only_takes_fresh_junit_files(tmp_path: Path) -> None:
    old = tmp_path / "junit-old.xml"
    old.write_bytes((FIXTURES / "jest-junit.xml").read_bytes())
    since = time.time() + 0.2
    time.sleep(0.3)
    reports = tmp_path / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    for f in (FIXTURES / "surefire").glob("TEST-*.xml"):
        (reports / f.name).write_bytes(f.read_bytes())
    (tmp_path / "junit-coverage.xml").write_text("<coverage/>")  # another tool's XML
    (tmp_path / "junit-broken.xml").write_text("<testsuite><testcase>")
    nested = tmp_path / "test-results" / "unit" / "py"
    nested.mkdir(parents=True)
    (nested / "results.xml").write_bytes(b'<testsuite name="x"><testcase name="a"/></testsuite>')
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "junit.xml").write_bytes((FIXTURES / "jest-junit.xml").read_bytes())
    globs = ["junit*.xml", "target/surefire-reports/TEST-*.xml", "test-results/**/*.xml"]
    found = find_reports([tmp_path], globs, ["sub/junit.xml", "missing.xml"], since)
    assert old.resolve() not in found and len(found) == 6
    read = read_reports(found)
    assert read.report is not None and read.report.runner == "junit"  # several runners
    assert read.report.total == 5 + 1 + 5
    assert len(read.warnings) == 1 and "junit-broken.xml: malformed XML" in read.warnings[0]
