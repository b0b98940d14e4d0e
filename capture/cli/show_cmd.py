from __future__ import annotations

import argparse
import difflib
import json
import sys

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
        out.write(f"\ntest run {r['started_at']}  {r['command']}  exit {r['exit_code']}")
        out.write(f"  ({counts})\n" if counts else "\n")
    return 0
