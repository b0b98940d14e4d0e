"""JUnit XML reports read into counts and per-test results: pytest --junitxml, jest-junit,
vitest, go-junit-report, Maven Surefire/Failsafe, Gradle. Pure functions over bytes.

Parsing goes through defusedxml (no entity expansion, no external entities or DTD fetches), and
input above MAX_REPORT_BYTES is refused before parsing: a report is untrusted input written by
whatever ran in the workspace.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from capture.model import CaseResult

__all__ = ["MAX_REPORT_BYTES", "JunitReport", "ReportError", "merge_reports", "parse_junit"]

MAX_REPORT_BYTES = 32 * 1024 * 1024

_PATHLIKE = re.compile(r"^[^\s:]+\.[A-Za-z0-9]{1,6}$")


class ReportError(ValueError):
    """A file that cannot be read as a JUnit report; the message is one line."""


@dataclass(slots=True)
class JunitReport:
    runner: str = "junit"
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration_s: float | None = None
    cases: list[CaseResult] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errors + self.skipped

    @property
    def failing_ids(self) -> list[str]:
        return [c.test_id for c in self.cases if c.outcome in ("failed", "error")]


def _local(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _float(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value.replace(",", ""))
    except ValueError:
        return None


def _int(value: str | None) -> int:
    number = _float(value)
    return int(number) if number is not None and number > 0 else 0


def _outcome(case: Any) -> str:
    children = {_local(child.tag) for child in case}
    if "failure" in children:
        return "failed"
    if "error" in children:
        return "error"
    if "skipped" in children:
        return "skipped"
    # Surefire's flakyFailure/flakyError alone: failed once, passed on a rerun.
    return "passed"


def _runner(root: Any, suites: Sequence[Any]) -> str:
    name = root.get("name") or ""
    if _local(root.tag) == "testsuites" and name == "jest tests":
        return "jest"
    if name.startswith("vitest"):
        return "vitest"
    for suite in suites:
        schema = "".join(v for k, v in suite.attrib.items() if k.endswith("SchemaLocation"))
        if "surefire" in schema or "failsafe" in schema:
            return "surefire"
        if suite.get("name") == "pytest":
            return "pytest"
        for prop in suite.iter():
            if _local(prop.tag) == "property" and prop.get("name") == "go.version":
                return "go"
    return "junit"


def _case(case: Any, suite_file: str | None) -> CaseResult:
    name = (case.get("name") or "").strip()
    classname = (case.get("classname") or "").strip()
    file = case.get("file") or suite_file
    if not file and _PATHLIKE.match(classname):  # vitest: the classname is the file
        file = classname
    if not classname or classname == name or name.startswith(classname + " "):
        test_id = name or classname or "?"
    else:
        test_id = f"{classname}.{name}"
    return CaseResult(
        test_id=test_id,
        outcome=_outcome(case),
        file=file or None,
        classname=classname or None,
        duration_s=_float(case.get("time")),
    )


def parse_junit(data: bytes) -> JunitReport:
    """Counts and per-test results of one JUnit XML document. Raises ReportError (one line)
    for anything that is not one: malformed, entity declarations, too large, wrong root."""
    if len(data) > MAX_REPORT_BYTES:
        raise ReportError(f"larger than {MAX_REPORT_BYTES // (1024 * 1024)} MB")
    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import ParseError, fromstring

    try:
        root = fromstring(data, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except DefusedXmlException as exc:
        raise ReportError(f"refused: {type(exc).__name__}") from None
    except ParseError as exc:
        raise ReportError(f"malformed XML: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise ReportError(f"unreadable XML: {exc}") from None
    top = _local(root.tag)
    if top not in ("testsuites", "testsuite"):
        raise ReportError(f"not a JUnit report (root element <{top}>)")
    suites = (
        [root] if top == "testsuite" else [s for s in root.iter() if _local(s.tag) == "testsuite"]
    )
    report = JunitReport(runner=_runner(root, suites))
    seen_cases = False
    for suite in suites:
        suite_file = suite.get("file")
        for element in suite:
            if _local(element.tag) != "testcase":
                continue
            seen_cases = True
            case = _case(element, suite_file)
            report.cases.append(case)
            if case.outcome == "passed":
                report.passed += 1
            elif case.outcome == "failed":
                report.failed += 1
            elif case.outcome == "error":
                report.errors += 1
            else:
                report.skipped += 1
    if not seen_cases:  # a summary-only report: trust the suites' attributes
        for suite in suites:
            failures, errors = _int(suite.get("failures")), _int(suite.get("errors"))
            skipped = _int(suite.get("skipped") or suite.get("disabled"))
            report.failed += failures
            report.errors += errors
            report.skipped += skipped
            report.passed += max(0, _int(suite.get("tests")) - failures - errors - skipped)
    report.duration_s = _float(root.get("time")) if top == "testsuites" else None
    if report.duration_s is None:
        times = [_float(s.get("time")) for s in suites]
        report.duration_s = sum(t for t in times if t is not None) if any(times) else None
    return report


def merge_reports(reports: Iterable[JunitReport]) -> JunitReport:
    """One report for several files of one run (Surefire writes one file per test class)."""
    merged = JunitReport(runner="")
    durations: list[float] = []
    runners: set[str] = set()
    for report in reports:
        runners.add(report.runner)
        merged.passed += report.passed
        merged.failed += report.failed
        merged.errors += report.errors
        merged.skipped += report.skipped
        merged.cases.extend(report.cases)
        if report.duration_s is not None:
            durations.append(report.duration_s)
    merged.runner = runners.pop() if len(runners) == 1 else "junit"
    merged.duration_s = sum(durations) if durations else None
    return merged
