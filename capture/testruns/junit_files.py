"""Reading the JUnit XML reports a test run wrote, and grouping the ones a watcher sees into
runs. Finding them is `capture.testruns.junit_paths` (its names are re-exported here)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capture.testruns.junit_paths import (
    DEFAULT_REPORT_GLOBS,
    FRESH_SLACK_S,
    find_reports,
    glob_matches,
    report_dirs,
    reports_named_in,
)

if TYPE_CHECKING:
    from capture.testruns.junit_xml import JunitReport

__all__ = [
    "DEFAULT_REPORT_GLOBS",
    "FRESH_SLACK_S",
    "Batches",
    "ReadReports",
    "covered_by_run",
    "report_dedupe_key",
    "report_started_at",
    "find_reports",
    "glob_matches",
    "report_dirs",
    "reports_named_in",
    "read_reports",
]


@dataclass(slots=True)
class ReadReports:
    report: JunitReport | None = None
    paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_reports(paths: Sequence[Path], *, strict: Sequence[Path] = ()) -> ReadReports:
    """Parse report files into one report. A file that is not JUnit at all (another tool's XML
    picked up by a glob) is passed over quietly unless it is in `strict`; a malformed, refused
    or oversized one adds a warning."""
    result = ReadReports()
    if not paths:
        return result
    from capture.testruns.junit_xml import MAX_REPORT_BYTES, ReportError, merge_reports, parse_junit

    reports: list[JunitReport] = []
    strict_set = {p.resolve() for p in strict}
    for path in paths:
        try:
            size = path.stat().st_size
            if size > MAX_REPORT_BYTES:
                raise ReportError(f"larger than {MAX_REPORT_BYTES // (1024 * 1024)} MB")
            reports.append(parse_junit(path.read_bytes()))
            result.paths.append(path)
        except ReportError as exc:
            if str(exc).startswith("not a JUnit report") and path.resolve() not in strict_set:
                continue
            result.warnings.append(f"{path}: {exc}")
        except OSError as exc:
            result.warnings.append(f"{path}: {exc.strerror or exc}")
    if reports:
        result.report = merge_reports(reports)
    return result


class Batches:
    """Report files grouped by directory until that directory has been quiet for `quiet`
    seconds: one test run writes its reports in a burst (Surefire: one file per class), and a
    file is often written in several steps. The caller supplies the clock."""

    def __init__(self, quiet: float) -> None:
        self.quiet = quiet
        self._files: dict[str, dict[str, None]] = {}
        self._last: dict[str, float] = {}

    def add(self, path: str, now: float) -> None:
        directory = path.rsplit("/", 1)[0] if "/" in path else ""
        self._files.setdefault(directory, {})[path] = None
        self._last[directory] = now

    def due(self, now: float) -> list[list[str]]:
        """The batches whose directory has been quiet long enough; they are handed out once."""
        ready = [d for d, last in self._last.items() if now - last >= self.quiet]
        batches = []
        for directory in ready:
            batches.append(list(self._files.pop(directory)))
            del self._last[directory]
        return batches

    def __bool__(self) -> bool:
        return bool(self._files)


def report_started_at(files: Sequence[tuple[float, float | None]]) -> float:
    """When the run that wrote these reports started, from each file's (modification time,
    duration it reports): the earliest end minus its duration."""
    return min(mtime - (duration or 0.0) for mtime, duration in files)


def report_dedupe_key(files: Sequence[tuple[str, int, int]]) -> str:
    """One key per set of report files as written: (path, mtime in ns, size) each."""
    import hashlib

    digest = hashlib.sha256()
    for path, mtime_ns, size in sorted(files):
        digest.update(f"{path}\0{mtime_ns}\0{size}\n".encode())
    return "junit:" + digest.hexdigest()[:32]


def covered_by_run(
    written: Sequence[float], runs: Sequence[tuple[float, float | None]], slack: float = 2.0
) -> bool:
    """Whether reports written at these times belong to a run already recorded by another
    source (`capture run`, the pytest plugin): some run, given as (started_at, duration),
    was going on when each of them was written."""
    return any(
        all(start - slack <= t <= start + (duration or 0.0) + slack for t in written)
        for start, duration in runs
    )
