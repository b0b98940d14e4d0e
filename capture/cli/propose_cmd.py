from __future__ import annotations

import argparse
import sys
from pathlib import Path

from capture.cli.context import Context
from capture.recording.propose_input import MAX_INPUT_BYTES, PROPOSAL_FIELDS, parse_proposal
from capture.recording.recorder import Recorder


def configure(parser: argparse.ArgumentParser) -> None:
    parser.epilog = "fields: " + "; ".join(f"{k}: {v}" for k, v in PROPOSAL_FIELDS.items())
    parser.add_argument("--json", action="store_true", help="print the ids as JSON")


def run(args: argparse.Namespace) -> int:
    raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    proposal = parse_proposal(raw, Path.cwd())
    ctx = Context()
    proposal_id = Recorder(ctx.store, ctx.config).proposal(
        proposal, now=ctx.now(), raw=raw.decode("utf-8", "replace")
    )
    episode_id = ctx.store.proposal_row(proposal_id)["episode_id"]
    if args.json:
        import json

        print(json.dumps({"proposal": proposal_id, "episode": episode_id}))
    else:
        print(f"proposal {proposal_id} recorded in episode {episode_id}")
    return 0
