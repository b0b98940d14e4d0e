"""`dotnet test` (VSTest): "Failed!  - Failed:     1, Passed:     3, Skipped:     1, Total:     5,
Duration: ..." per test assembly (or "Passed!  - ..."), the .NET 9+ closing "Test summary:
total: 5, failed: 1, succeeded: 3, skipped: 1", and "  Failed Namespace.Class.Method [3 ms]"."""

from __future__ import annotations

import re

from capture.testruns.runners.counts import RunCounts, unique

__all__ = ["parse_dotnet"]

_ASSEMBLY = re.compile(
    r"^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+)(?:, Skipped:\s+(\d+))?", re.M
)
_SUMMARY = re.compile(
    r"^\s*Test summary: total: (\d+), failed: (\d+), succeeded: (\d+), skipped: (\d+)", re.M
)
_FAILED = re.compile(r"^\s+Failed (\S+(?:\(.*\))?)(?: \[[^\]]*\])?\s*$", re.MULTILINE)


def parse_dotnet(text: str) -> RunCounts | None:
    summary = _SUMMARY.findall(text)
    assemblies = _ASSEMBLY.findall(text)
    if not summary and not assemblies:
        return None
    counts = RunCounts("dotnet")
    if summary:
        _total, failed, succeeded, skipped = (int(n) for n in summary[-1])
        counts.passed, counts.failed, counts.skipped = succeeded, failed, skipped
    else:
        failed = passed = skipped = 0
        for f, p, s in assemblies:
            failed, passed, skipped = failed + int(f), passed + int(p), skipped + int(s or 0)
        counts.passed, counts.failed, counts.skipped = passed, failed, skipped
    counts.failing_ids = unique(_FAILED.findall(text))
    return counts
