"""How fast `capture import claude-code` and `capture import codex` read the real transcripts
and rollouts of the corpus (tests/fixtures/real, see its PROVENANCE.md): each written one
record a line, as the agent keeps it, in COPIES copies (each copy its own file, as many
sessions of one project would be), imported into an empty database by the real CLI process.

Peer, measured in the same run over the same files: reading every file and json-parsing every
line in one process (what any importer must do at the least). Printed: files/s and MB/s of
both and their ratio.

    python tests/benchmarks/bench_import_real.py [--copies N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REAL = ROOT / "tests" / "fixtures" / "real"
#: the corpus's transcripts and rollouts: (importer, file, the project root they name)
TRANSCRIPTS = (
    (
        "claude-code",
        "claude-code/transcript-1x/chat.json",
        "/home/connerohnesorge/Documents/001Repos/templar",
    ),
    (
        "claude-code",
        "claude-code/transcript-1.0.70/chat.json",
        "/Users/kesslerio/GDrive/Projects/attio-mcp-server",
    ),
    (
        "claude-code",
        "claude-code/transcript-2x/session-01.jsonl",
        "/tmp/agent-history-real-agent/claude/workspace",
    ),
    (
        "codex",
        "codex/rollout-0.40/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl",
        "/Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2",
    ),
    (
        "codex",
        "codex/rollout-0.135/session-01.jsonl",
        "/tmp/agent-history-real-agent/codex/workspace",
    ),
)


def lines_of(name: str, text: str) -> str:
    """The file one record a line (the hook logs keep a transcript as a JSON array)."""
    if name.endswith(".json"):
        return "".join(json.dumps(r) + "\n" for r in json.loads(text))
    return text


def write_copies(base: Path, ws: Path, copies: int) -> dict[str, list[Path]]:
    files: dict[str, list[Path]] = {}
    for importer, name, root in TRANSCRIPTS:
        text = lines_of(name, (REAL / name).read_text(encoding="utf-8").replace(root, str(ws)))
        for i in range(copies):
            path = base / importer / f"copy-{i:04d}" / (Path(name).parent.name + ".jsonl")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            files.setdefault(importer, []).append(path)
    return files


def peer(files: list[Path]) -> float:
    start = time.perf_counter()
    for path in files:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    json.loads(line)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--copies", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws = base / "project"
        (ws / ".git").mkdir(parents=True)
        by_importer = write_copies(base / "history", ws, args.copies)
        files = [p for paths in by_importer.values() for p in paths]
        size = sum(p.stat().st_size for p in files)
        env = {**os.environ, "CAPTURE_HOME": str(base / "home")}
        summaries = []
        started = time.perf_counter()
        for importer in by_importer:
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "capture",
                    "import",
                    importer,
                    str(base / "history" / importer),
                ],
                env=env,
                cwd=ws,
                capture_output=True,
                text=True,
                check=True,
            )
            summaries.append(f"{importer}: {done.stdout.strip()}")
        cli = time.perf_counter() - started
        parse = min(peer(files) for _ in range(3))
    mb = size / 1e6
    print(f"{len(files)} real transcript file(s), {mb:.2f} MB")
    for line in summaries:
        print(line)
    print("| what | files/s | MB/s |")
    print("|---|---:|---:|")
    print(
        f"| capture import, both agents (whole processes) | {len(files) / cli:,.0f} "
        f"| {mb / cli:.2f} |"
    )
    print(f"| peer: read + json.loads every line | {len(files) / parse:,.0f} | {mb / parse:.2f} |")
    print(f"| import time / peer time | {cli / parse:.1f}x | |")


if __name__ == "__main__":
    main()
