"""Finding and reading the JUnit XML reports a test run wrote: the workspace's usual report
paths (configurable), the report files a command names, and `capture run --junit`."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from capture.globs import glob_regex

if TYPE_CHECKING:
    from capture.junit import JunitReport

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

#: Where test runners write JUnit XML unless told otherwise, relative to the workspace (and to
#: the directory a run started in). Config: `junit_reports = [...]` in config.toml's [capture]
#: table, or CAPTURE_JUNIT_REPORTS=glob,glob.
DEFAULT_REPORT_GLOBS: tuple[str, ...] = (
    "junit*.xml",  # pytest --junitxml=junit.xml, jest-junit's default junit.xml
    "*.junit.xml",
    "TEST-*.xml",
    "test-results/**/*.xml",  # Playwright, CircleCI conventions, many CI setups
    "test-reports/**/*.xml",
    "reports/junit*.xml",
    "reports/TEST-*.xml",
    "target/surefire-reports/TEST-*.xml",  # Maven
    "target/failsafe-reports/TEST-*.xml",
    "build/test-results/**/*.xml",  # Gradle
)

#: A report counts as written by a run when modified no earlier than this before it started
#: (file times are kept at a coarse clock tick).
FRESH_SLACK_S = 0.05

_XML_TOKEN = re.compile(r"[^\s=>|;&'\"]+\.xml")


def reports_named_in(argv: Sequence[str], env: dict[str, str]) -> list[str]:
    """Report paths a command line names: any `*.xml` word in its arguments (`--junitxml=r.xml`,
    `... | go-junit-report > report.xml` inside `sh -c`), and jest-junit's output variables.
    Files the run did not write are dropped later by their modification time."""
    found: dict[str, None] = {}
    for arg in argv[1:]:
        for token in _XML_TOKEN.findall(arg):
            found[token] = None
    out_file = env.get("JEST_JUNIT_OUTPUT_FILE")
    out_dir, out_name = env.get("JEST_JUNIT_OUTPUT_DIR"), env.get("JEST_JUNIT_OUTPUT_NAME")
    if out_file:
        found[out_file] = None
    elif out_dir or out_name:
        found[os.path.join(out_dir or ".", out_name or "junit.xml")] = None
    return list(found)


def _fixed_prefix(pattern: str) -> str:
    """The directory part of a glob before its first wildcard: 'target/surefire-reports'."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for part in parts[:-1]:
        if any(ch in part for ch in "*?["):
            break
        fixed.append(part)
    return "/".join(fixed)


def report_dirs(globs: Iterable[str]) -> dict[str, bool]:
    """Directories (relative, '' for the root) to look in or watch for these globs, each with
    whether matches may lie below it (the glob has a wildcard directory part)."""
    dirs: dict[str, bool] = {}
    for pattern in globs:
        prefix = _fixed_prefix(pattern)
        deep = pattern.count("/") > prefix.count("/") + (1 if prefix else 0)
        dirs[prefix] = dirs.get(prefix, False) or deep
    return dirs


def glob_matches(relative: str, globs: Iterable[str]) -> bool:
    """Whether a workspace-relative POSIX path matches one of the globs (`**` spans
    directories, `*` stays within one)."""
    return any(_glob_regex(pattern).fullmatch(relative) for pattern in globs)


_GLOB_CACHE: dict[str, re.Pattern[str]] = {}


def _glob_regex(pattern: str) -> re.Pattern[str]:
    cached = _GLOB_CACHE.get(pattern)
    if cached is not None:
        return cached
    compiled = re.compile(glob_regex(pattern))
    _GLOB_CACHE[pattern] = compiled
    return compiled


def find_reports(
    roots: Sequence[Path], globs: Sequence[str], named: Sequence[str], since: float
) -> list[Path]:
    """Report files modified at or after `since`: the named ones (relative to the first root)
    and those matching the globs under each root. Only the globs' own directories are read,
    each once."""
    fresh: dict[Path, None] = {}
    cutoff = since - FRESH_SLACK_S
    base = roots[0] if roots else Path.cwd()
    for name in named:
        path = Path(name) if os.path.isabs(name) else base / name
        try:
            if path.stat().st_mtime >= cutoff and path.is_file():
                fresh[path.resolve()] = None
        except OSError:
            continue
    dirs = report_dirs(globs)
    for root in roots:
        for prefix, deep in dirs.items():
            top = os.path.join(root, prefix) if prefix else str(root)
            for directory, files in _listing(top, deep):
                for entry in files:
                    relative = os.path.relpath(os.path.join(directory, entry.name), root)
                    if not glob_matches(relative.replace(os.sep, "/"), globs):
                        continue
                    try:
                        if entry.stat().st_mtime >= cutoff:
                            fresh[Path(entry.path).resolve()] = None
                    except OSError:
                        continue
    return sorted(fresh)


def _listing(top: str, deep: bool) -> Iterable[tuple[str, list[os.DirEntry[str]]]]:
    """(directory, its files) for `top`, and below it when `deep`; nothing if it is absent."""
    pending = [top]
    while pending:
        directory = pending.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError:
            continue
        files = []
        for entry in entries:
            try:
                if entry.is_file():
                    files.append(entry)
                elif deep and entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
            except OSError:
                continue
        yield directory, files


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
    from capture.junit import MAX_REPORT_BYTES, ReportError, merge_reports, parse_junit

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
