"""The real-data audit: the public fixtures of tests/fixtures/real (see its PROVENANCE.md)
imported as they are, by the real CLI, with this tree's code and with an earlier commit's (the
peer, run in the same invocation on the same files), counting the labels by outcome, reason and
evidence kind. Labels resting on missing evidence that come out negative (`rejected`, `undone`)
are the figure to watch: goal 0.

The files are imported as they are: their projects are not on this machine. One more log is
derived from the real Claude Code 2.x hook log, cut as real logs are: its Edit's PostToolUse
replaced by the PreToolUse for the same call (same input), then the turn's Stop.

    python tests/benchmarks/bench_evidence_audit.py [--before REV]   (default: HEAD~3)
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real"


def _export(rev: str, into: Path) -> Path:
    """The packages of commit `rev`, written under `into`."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "capture", "sync"],
        check=True,
        capture_output=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into


def _inputs(work: Path) -> list[tuple[str, str, Path]]:
    """(importer, agent, path) of what is imported: the fixtures as they are, a cut log."""
    out: list[tuple[str, str, Path]] = []
    for folder in ("hooks-2x", "hooks-1x-multiedit", "hooks-1x"):
        out.append(("hooks", "claude-code", REAL / "claude-code" / folder))
    for name in ("transcript-1x/chat.json", "transcript-1.0.70/chat.json"):
        records = json.loads((REAL / "claude-code" / name).read_text())
        path = work / "transcripts" / name.replace("/", "-").replace(".json", ".jsonl")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        out.append(("claude-code", "", path))
    out.append(("claude-code", "", REAL / "claude-code/transcript-2x/session-01.jsonl"))
    out.append(("codex", "", REAL / "codex" / "rollout-0.40"))
    out.append(("codex", "", REAL / "codex" / "rollout-0.135"))
    payloads = json.loads((REAL / "claude-code/hooks-2x/post_tool_use.json").read_text())
    (edit,) = [p for p in payloads if p["tool_name"] == "Edit"]
    pre = {k: v for k, v in edit.items() if k != "tool_response"}
    pre["hook_event_name"] = "PreToolUse"
    stop = {
        "session_id": edit["session_id"],
        "transcript_path": edit["transcript_path"],
        "cwd": edit["cwd"],
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    cut = work / "cut-log"
    cut.mkdir()
    (cut / "hooks.json").write_text(json.dumps([pre, stop]))
    out.append(("hooks", "claude-code", cut))
    return out


def _labels(code: Path, inputs: list[tuple[str, str, Path]], home: Path) -> Counter[tuple]:
    env = {**os.environ, "CAPTURE_HOME": str(home), "PYTHONPATH": str(code)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    for importer, agent, path in inputs:
        args = ["import", importer, *([agent] if agent else []), str(path), "--quiet"]
        if importer == "hooks":
            args = ["import", "hooks", str(path), "--agent", agent, "--quiet"]
        subprocess.run(
            [sys.executable, "-m", "capture", *args],
            env=env,
            cwd=home,
            capture_output=True,
            check=False,
        )
    episodes = subprocess.run(
        [sys.executable, "-m", "capture", "episodes", "--json"],
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        check=False,
    )
    counts: Counter[tuple] = Counter()
    try:
        found = json.loads(episodes.stdout or "[]")
    except ValueError:
        found = []
    for e in found:
        for p in e["proposals"]:
            refused = p["outcome"] == "rejected" and p["decided_by"] != "denied"
            reason = p["reason"] or ("(a refusal the agent reported)" if refused else "")
            counts[(p["outcome"], reason, p.get("evidence") or "-")] += 1
    return counts


def _missing_negative(counts: Counter[tuple]) -> int:
    """Negative labels resting on missing evidence: every `rejected` the agent reported no
    refusal for and every `undone` of these imports (their files are not on this machine)."""
    return sum(
        n
        for (outcome, reason, _), n in counts.items()
        if (outcome == "rejected" and not reason) or outcome == "undone"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="HEAD~3", help="the peer's commit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        before = _export(args.before, work / "before")
        inputs = _inputs(work)
        results = {}
        for name, code in (("before", before), ("after", ROOT)):
            home = work / f"home-{name}"
            home.mkdir()
            results[name] = _labels(code, inputs, home)
    keys = sorted(set(results["before"]) | set(results["after"]))
    print(f"{'outcome':<10} {'reason':<34} {'evidence':<13} {'before':>6} {'after':>6}")
    for key in keys:
        outcome, reason, kind = key
        print(
            f"{outcome:<10} {reason[:34]:<34} {kind:<13} "
            f"{results['before'][key]:>6} {results['after'][key]:>6}"
        )
    print(
        "negative labels resting on missing evidence: "
        f"before {_missing_negative(results['before'])}, "
        f"after {_missing_negative(results['after'])}"
    )


if __name__ == "__main__":
    main()
