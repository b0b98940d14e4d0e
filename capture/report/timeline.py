"""The timeline of one episode, for `capture show`: every proposal with its diff, every
checkpoint, every linked test run and each outcome with its reason, in the order they happened.
A pure function over the episode JSON (`capture.store.episodes`)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

__all__ = ["Entry", "episode_timeline", "is_test_file", "run_result"]

Kind = Literal["prompt", "proposal", "decision", "checkpoint", "test_run", "outcome", "late"]

_TEST_FILE = re.compile(
    r"(^|/)(tests?|__tests__|spec)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|"
    r"\.(test|spec)\.[cm]?[jt]sx?$|Tests?\.(java|kt|cs|swift)$"
)


@dataclass(frozen=True, slots=True)
class Entry:
    at: datetime | None
    kind: Kind
    title: str
    proposal: int | None = None  # 1-based number of the proposal it is about
    detail: list[str] = field(default_factory=list)  # diff lines ('+', '-', ' ', '@')
    tone: Literal["good", "bad", "neutral"] = "neutral"


def _time(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text.replace("Z", "+00:00"))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _rules(version: int | None) -> str:
    # Rows stored before rules were versioned were decided by version 1.
    return f"rules v{version if version is not None else 1}"


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path.replace("\\", "/")))


def run_result(run: dict[str, Any]) -> bool | None:
    """True passed, False failed, None unknown: the same rule as the report's pass rate."""
    bad = (run.get("failed") or 0) + (run.get("errors") or 0)
    if run.get("exit_code") is not None:
        return run["exit_code"] == 0 and bad == 0
    if any(run.get(k) is not None for k in ("passed", "failed", "errors")):
        return bad == 0
    return None


def _diff(hunk: dict[str, Any]) -> list[str]:
    lines = list(
        difflib.unified_diff(
            hunk["old_text"].splitlines(), hunk["new_text"].splitlines(), lineterm="", n=2
        )
    )[2:]
    return lines or ["  (no change in text)"]


_TONE: dict[str | None, Literal["good", "bad", "neutral"]] = {
    "kept": "good",
    "edited": "neutral",
    "undone": "bad",
    "lost": "bad",
    "rejected": "bad",
    "failed": "neutral",
}


def episode_timeline(episode: dict[str, Any], *, diffs: bool = True) -> list[Entry]:
    """Entries in time order (stable: a proposal comes before what followed it at the same
    instant); entries with no time (checkpoints not yet observed) come last."""
    entries: list[Entry] = []
    start = _time(episode["started_at"])
    if episode.get("prompt"):
        entries.append(Entry(start, "prompt", episode["prompt"].strip()))
    tests_edited = any(is_test_file(p["file"]) for p in episode["proposals"])
    for n, p in enumerate(episode["proposals"], 1):
        size = f"+{p['chars_added']}/-{p['chars_removed']} chars, {p['lines_added']} line(s)"
        tool = f" via {p['tool']}" if p.get("tool") else ""
        verb = {"applied": "applied", "shown": "shown"}.get(p["state"], "proposed")
        entries.append(
            Entry(
                _time(p["created_at"]),
                "proposal",
                f"#{n} {p['file']}: {verb}{tool} ({size})",
                n,
                [line for h in p["hunks"] for line in _diff(h)] if diffs else [],
            )
        )
        if p["state"] == "rejected":
            by = f" by {p['decided_by']}" if p.get("decided_by") else ""
            entries.append(
                Entry(_time(p["settled_at"]), "decision", f"#{n} rejected{by}", n, tone="bad")
            )
        elif p["state"] == "failed":
            why = f": {p['reason']}" if p.get("reason") else ""
            entries.append(
                Entry(_time(p["settled_at"]), "decision", f"#{n} the tool call failed{why}", n)
            )
        elif p["applied_at"] and p["applied_at"] != p["created_at"]:
            by = f" by {p['decided_by']}" if p.get("decided_by") else ""
            entries.append(Entry(_time(p["applied_at"]), "decision", f"#{n} accepted{by}", n))
        for c in p["checkpoints"]:
            late = c["window"] == "late"
            if c["observed_at"] is None:
                entries.append(
                    Entry(
                        None,
                        "late" if late else "checkpoint",
                        f"#{n} {c['window']} check: not observed yet (due {c['due_at']})",
                        n,
                    )
                )
                continue
            why = f" — {c['reason']}" if c.get("reason") else ""
            lateness = ""
            if c.get("late_seconds") is not None:
                lateness = f", late by {c['late_seconds']:.0f} s"
            entries.append(
                Entry(
                    _time(c["observed_at"]),
                    "late" if late else "checkpoint",
                    f"#{n} {c['window']} check: {c['outcome']}{why} (similarity "
                    f"{_pct(c['similarity'])}, retention {_pct(c['retention'])}, "
                    f"seen on {c['via']}{lateness})",
                    n,
                    tone=_TONE.get(c["outcome"], "neutral"),
                )
            )
        if p["state"] == "applied" and p["settled_at"]:
            entries.append(
                Entry(
                    _time(p["settled_at"]),
                    "outcome",
                    f"#{n} outcome: {p['outcome']} — {p['reason'] or 'no reason recorded'} "
                    f"({_rules(p.get('rules_version'))})",
                    n,
                    tone=_TONE.get(p["outcome"], "neutral"),
                )
            )
    for r in episode["test_runs"]:
        result = run_result(r)
        counts = ", ".join(
            f"{r[k]} {k}" for k in ("passed", "failed", "errors", "skipped") if r.get(k)
        )
        verdict = {True: "passed", False: "failed", None: "no result"}[result]
        text = f"test run `{r['command']}`: {verdict}"
        text += f" ({counts})" if counts else ""
        text += f", exit {r['exit_code']}" if r.get("exit_code") is not None else ""
        if r.get("duration_s") is not None:
            text += f", {r['duration_s']:.1f}s"
        if tests_edited:
            text += " — weak evidence: the agent edited test files in this episode"
        detail = [f"  failing: {t}" for t in r.get("failing_ids") or []][:20]
        tone: Literal["good", "bad", "neutral"] = (
            "good" if result else "bad" if result is False else "neutral"
        )
        entries.append(Entry(_time(r["started_at"]), "test_run", text, None, detail, tone))
    order = {
        k: i
        for i, k in enumerate(
            ("prompt", "proposal", "decision", "checkpoint", "test_run", "outcome", "late")
        )
    }
    timed = [e for e in entries if e.at is not None]
    untimed = [e for e in entries if e.at is None]
    timed.sort(key=lambda e: (e.at, order[e.kind]))
    return timed + untimed
