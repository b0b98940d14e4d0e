"""What the trajectory costs and what it buys.

1. Grounding, on the real transcripts of the corpus (tests/fixtures/real): each edit's new
   identifiers (4+ characters) that appear in the recorded trajectory before the edit or in the
   file before it; the median share and the share of edits fully grounded, against the same
   measure over the task statement alone.
2. Store growth per 1,000 tool calls: the texts stored for the corpus's tool calls, scaled,
   against the transcripts' own size compressed with zstd.
3. The hook on read-only tool payloads (PostToolUse Read and Grep, which `capture install` now
   sends to the hook): a fresh `python -m capture hook claude-code` process per call, against
   the same interpreter's `-c pass`, interleaved.

    PYTHONPATH=. python tests/benchmarks/bench_trajectory.py [--runs N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import zstandard

from capture.config import load_config
from capture.connection import sqlite3
from capture.importers.claude_transcript import read_transcript
from capture.importers.codex_rollout import read_rollout
from capture.importers.write import ImportStats, record_history
from capture.store.database import Store

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real"
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
ATTIO = "/Users/kesslerio/GDrive/Projects/attio-mcp-server"
CODEX = "/Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2"
ROLLOUT = (
    "codex/rollout-0.40-whole/"
    "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"
)
#: (file, a JSON array of records or one a line, the project root its records name)
FILES = (
    ("claude-code/transcript-1.0.70-sidechain/chat.jsonl", False, ATTIO),
    ("claude-code/transcript-1.0.70/chat.json", True, ATTIO),
    (
        "claude-code/transcript-1x/chat.json",
        True,
        "/home/connerohnesorge/Documents/001Repos/templar",
    ),
    (
        "claude-code/transcript-2x/session-01.jsonl",
        False,
        "/tmp/agent-history-real-agent/claude/workspace",
    ),
    (ROLLOUT, False, CODEX),
)


def _edits(record: dict) -> list[tuple[str, str]]:
    """(call id, new text) of the edits a raw record makes."""
    if record.get("type") == "assistant":
        return [
            (b["id"], _new_text(b["input"]))
            for b in record["message"]["content"]
            if b.get("type") == "tool_use" and b["name"] in ("Edit", "Write", "MultiEdit")
        ]
    payload = record.get("payload") or {}
    arguments = str(payload.get("arguments"))
    if payload.get("type") == "function_call" and "*** Begin Patch" in arguments:
        command = json.loads(payload["arguments"])["command"]
        patch = command[-1] if isinstance(command, list) else command
        added = [line[1:] for line in patch.splitlines() if line.startswith("+")]
        return [(payload["call_id"], "\n".join(added))]
    return []


def _lines(name: str, array: bool, root: str, ws: Path) -> list[str]:
    """The transcript's lines with its project moved into a workspace here."""
    text = (REAL / name).read_text().replace(root, str(ws))
    if array:
        return [json.dumps(r) for r in json.loads(text)]
    return text.splitlines()


def _new_text(given: dict) -> str:
    if "content" in given:
        return str(given["content"])
    if "edits" in given:
        return "\n".join(e.get("new_string", "") for e in given["edits"])
    return str(given.get("new_string", ""))


def grounding(tmp: Path) -> None:
    os.environ["CAPTURE_HOME"] = str(tmp / "home")
    config = load_config()
    store = Store.open(config.paths.db)
    calls = 0
    compressed = 0
    for name, array, root in FILES:
        ws = tmp / "projects" / Path(root).name
        if not ws.exists():
            ws.mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(ws)], check=True)
        lines = _lines(name, array, root, ws)
        compressed += len(zstandard.ZstdCompressor().compress((REAL / name).read_bytes()))
        history = read_rollout(lines) if name.startswith("codex") else read_transcript(lines)
        calls += sum(1 for s, _ in history.steps if s.kind == "tool")
        record_history(store, config, history, now=time.time(), stats=ImportStats())
    texts = {h: store.text_of(h) or "" for (h,) in store.conn.execute("SELECT hash FROM texts")}
    steps = store.conn.execute(
        "SELECT session_id, at, id, call_id, text_hash, input_hash FROM steps "
        "ORDER BY session_id, at, id"
    ).fetchall()
    befores = dict(
        store.conn.execute(
            "SELECT p.tool_use_id, b.text_hash FROM proposal_before b "
            "JOIN proposals p ON p.id = b.proposal_id"
        ).fetchall()
    )
    prompts = dict(
        store.conn.execute(
            "SELECT p.tool_use_id, coalesce(e.task, e.prompt) FROM proposals p "
            "JOIN episodes e ON e.id = p.episode_id"
        ).fetchall()
    )
    shares, prompt_shares = [], []
    done: set[str] = set()
    for name, array, root in FILES:
        for line in _lines(name, array, root, tmp / "projects" / Path(root).name):
            record = json.loads(line)
            for call_id, new_text in _edits(record):
                wanted = set(IDENT.findall(new_text))
                own = [s for s in steps if s[3] == call_id]
                if not wanted or not own or call_id in done:
                    continue
                done.add(call_id)
                session, at, sid = own[0][0], own[0][1], own[0][2]
                seen = "\n".join(
                    texts.get(s[k] or "", "")
                    for s in steps
                    if s[0] == session and (s[1], s[2]) < (at, sid)
                    for k in (4, 5)
                )
                seen += texts.get(befores.get(call_id) or "", "")
                known = set(IDENT.findall(seen))
                shares.append(len(wanted & known) / len(wanted))
                alone = set(IDENT.findall(prompts.get(call_id) or ""))
                prompt_shares.append(len(wanted & alone) / len(wanted))
    (stored,) = store.conn.execute("SELECT sum(length(body)) FROM texts").fetchone()
    store.close()
    full = sum(s == 1.0 for s in shares) / len(shares)
    print(f"grounding over {len(shares)} edit(s) of the corpus's transcripts and rollout")
    print("| what the edit could see | median share of its new identifiers | fully grounded |")
    print("|---|---:|---:|")
    print(
        f"| trajectory before it + file before it | {statistics.median(shares):.2f} | {full:.0%} |"
    )
    pfull = sum(s == 1.0 for s in prompt_shares) / len(prompt_shares)
    print(f"| the task statement alone | {statistics.median(prompt_shares):.2f} | {pfull:.0%} |")
    print()
    print(
        f"store: {stored / 1e3:.1f} kB of texts for {calls} tool calls: "
        f"{stored / calls * 1000 / 1e6:.1f} MB per 1,000 tool calls; the transcripts "
        f"compressed whole with zstd: {compressed / 1e3:.1f} kB ({stored / compressed:.2f}x)"
    )


def timed(cmd: list[str], data: bytes | None, env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=data, env=env, cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start


def hook_speed(tmp: Path, runs: int) -> None:
    ws = tmp / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    target = ws / "totals.py"
    target.write_text("def tax(subtotal, rate):\n    return round(subtotal * rate, 2)\n" * 40)
    compileall.compile_dir(ROOT / "capture", quiet=1)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update(CAPTURE_HOME=str(tmp / "hook-home"), PYTHONPATH=str(ROOT))
    hook = [sys.executable, "-m", "capture", "hook", "claude-code"]

    def payload(i: int) -> bytes:
        base = {"session_id": "bench", "cwd": str(ws), "permission_mode": "default"}
        if i % 2:
            return json.dumps(
                {
                    **base,
                    "hook_event_name": "PostToolUse",
                    "tool_name": "Grep",
                    "tool_input": {"pattern": "round", "output_mode": "content"},
                    "tool_response": {"mode": "content", "content": "totals.py:2: round"},
                    "tool_use_id": f"toolu_grep_{i}",
                }
            ).encode()
        return json.dumps(
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Read",
                "tool_input": {"file_path": str(target)},
                "tool_response": {
                    "type": "text",
                    "file": {"filePath": str(target), "content": target.read_text()},
                },
                "tool_use_id": f"toolu_read_{i}",
            }
        ).encode()

    timed(hook, payload(0), env, ws)  # the first call creates the database
    times: dict[str, list[float]] = {"hook": [], "pass": []}
    for i in range(1, runs + 1):
        times["pass"].append(timed([sys.executable, "-c", "pass"], None, env, ws))
        times["hook"].append(timed(hook, payload(i), env, ws))
    db = tmp / "hook-home" / "data" / "capture.db"
    deadline = time.monotonic() + 120
    steps = 0
    while time.monotonic() < deadline:
        conn = sqlite3.connect(db, timeout=30)
        left = conn.execute("SELECT count(*) FROM hook_inbox").fetchone()[0]
        steps = conn.execute("SELECT count(*) FROM steps").fetchone()[0]
        conn.close()
        if not left:
            break
        time.sleep(0.1)
    hook_ms = statistics.median(times["hook"]) * 1000
    pass_ms = statistics.median(times["pass"]) * 1000
    print()
    print(
        f"hook on read-only payloads ({runs} runs each, interleaved, Read and Grep; "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f})"
    )
    print("| command | median wall ms | hook / this |")
    print("|---|---:|---:|")
    print(f"| `capture hook claude-code` (PostToolUse Read, Grep) | {hook_ms:.1f} | 1.00x |")
    print(f"| `python -c pass` (same interpreter) | {pass_ms:.1f} | {hook_ms / pass_ms:.2f}x |")
    print(f"applied in the background: {steps} steps for {runs + 1} payloads")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-trajectory-"))
    try:
        grounding(tmp)
        hook_speed(tmp, args.runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
