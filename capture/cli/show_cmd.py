from __future__ import annotations

import argparse
import difflib
import json
import sys
from typing import TextIO

from capture.cli.context import Context
from capture.episodes import load_episodes


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("id", help="episode id (or a unique prefix), or a proposal id")
    parser.add_argument("--json", action="store_true", help="print the episode JSON")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def run(args: argparse.Namespace) -> int:
    ctx = Context()
    episode_id = ctx.store.resolve_episode_id(args.id)
    (episode,) = load_episodes(ctx.store, ids=[episode_id])
    if args.json:
        json.dump(episode, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return 0
    out = sys.stdout
    out.write(f"episode {episode['id']}  {episode['agent']}")
    out.write(f" ({episode['model']})\n" if episode["model"] else "\n")
    out.write(f"  workspace {episode['workspace']}\n  started   {episode['started_at']}\n")
    if episode["settled_at"]:
        out.write(f"  settled   {episode['settled_at']}\n")
    if episode["prompt"]:
        out.write(f"  prompt    {episode['prompt'].strip()[:500]}\n")
    for p in episode["proposals"]:
        out.write(
            f"\nproposal {p['id']}  {p['file']}  {p['state']} -> {p['outcome']}"
            f"  (similarity {_pct(p['similarity'])}, retention {_pct(p['retention'])})\n"
        )
        if p["reason"]:
            out.write(f"  why: {p['reason']}\n")
        for hunk in p["hunks"]:
            diff = difflib.unified_diff(
                hunk["old_text"].splitlines(keepends=True),
                hunk["new_text"].splitlines(keepends=True),
                lineterm="",
            )
            for line in list(diff)[2:]:
                out.write(f"  {line.rstrip(chr(10))}\n")
        for c in p["checkpoints"]:
            seen = c["observed_at"] or f"due {c['due_at']}"
            out.write(
                f"  checkpoint {c['window']:>5}: {c['outcome'] or 'pending':8} "
                f"similarity {_pct(c['similarity'])} retention {_pct(c['retention'])}  {seen}\n"
            )
    for r in episode["test_runs"]:
        counts = ", ".join(f"{r[k]} {k}" for k in ("passed", "failed", "errors", "skipped") if r[k])
        label = f" [{r['name']}]" if r["name"] else ""
        out.write(f"\ntest run {r['started_at']}{label}  {r['command']}  exit {r['exit_code']}")
        out.write(f"  {r['status']}" + (f" ({counts})" if counts else ""))
        out.write("  after settling\n" if r["link"] == "late" else "\n")
        for test_id in r["failing_ids"][:20]:
            out.write(f"  failed: {test_id}\n")
        if len(r["failing_ids"]) > 20:
            out.write(f"  ... and {len(r['failing_ids']) - 20} more\n")
    _tests_summary(episode["tests"], out)
    return 0


def _tests_summary(tests: dict, out: TextIO) -> None:
    if not tests["runs"]:
        return
    first, last = tests["first_run_after"], tests["last_run_before_settling"]
    out.write("\ntests: ")
    if first and last and first["id"] != last["id"]:
        out.write(f"{first['status']} -> {last['status']}")
    elif first:
        out.write(first["status"])
    else:
        out.write("no run with a verdict")
    out.write(f"  ({tests['runs']} run(s))\n")
    for test_id in tests["failing_tests_in_edited_files"]:
        out.write(f"  failing in a file this episode edited: {test_id}\n")
    if tests["tests_edited_by_agent"]:
        out.write("  the agent edited test files itself: weak evidence\n")
