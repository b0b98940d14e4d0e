"""Where a test run's JUnit XML reports are: the workspace's usual report paths
(configurable), the report files a command names, and which of them a run wrote. Kept apart
from reading them (`capture.testruns.junit_files`) and free of dataclasses: `capture run` looks here
after every command, before it knows whether it has anything to read."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from capture.globs import glob_regex

__all__ = [
    "DEFAULT_REPORT_GLOBS",
    "FRESH_SLACK_S",
    "find_reports",
    "glob_matches",
    "report_dirs",
    "reports_named_in",
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
