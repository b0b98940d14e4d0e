"""How fast `capture import claude-code` reads the real transcripts of the corpus
(tests/fixtures/real, see its PROVENANCE.md): each transcript written back one record a line,
as Claude Code keeps it, in COPIES copies (each copy its own file, as many sessions of one
project would be), imported into an empty database by the real CLI process.

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
#: the corpus's transcripts: (file, the project root they name)
TRANSCRIPTS = (
    ("claude-code/transcript-1x/chat.json", "/home/connerohnesorge/Documents/001Repos/templar"),
)


def write_copies(base: Path, ws: Path, copies: int) -> list[Path]:
    files = []
    for name, root in TRANSCRIPTS:
        records = json.loads((REAL / name).read_text().replace(root, str(ws)))
        text = "".join(json.dumps(r) + "\n" for r in records)
        for i in range(copies):
            path = base / f"copy-{i:04d}" / (Path(name).parent.name + ".jsonl")
            path.parent.mkdir(parents=True)
            path.write_text(text)
            files.append(path)
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
    parser.add_argument("--copies", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws = base / "project"
        (ws / ".git").mkdir(parents=True)
        files = write_copies(base / "history", ws, args.copies)
        size = sum(p.stat().st_size for p in files)
        env = {**os.environ, "CAPTURE_HOME": str(base / "home")}
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "capture", "import", "claude-code", str(base / "history")],
            env=env,
            cwd=ws,
            capture_output=True,
            text=True,
            check=True,
        )
        cli = time.perf_counter() - started
        parse = min(peer(files) for _ in range(3))
    mb = size / 1e6
    print(f"{len(files)} real transcript file(s), {mb:.2f} MB; {done.stdout.strip()}")
    print("| what | files/s | MB/s |")
    print("|---|---:|---:|")
    print(
        f"| capture import claude-code (whole process) | {len(files) / cli:,.0f} | {mb / cli:.2f} |"
    )
    print(f"| peer: read + json.loads every line | {len(files) / parse:,.0f} | {mb / parse:.2f} |")
    print(f"| import time / peer time | {cli / parse:.1f}x | |")


if __name__ == "__main__":
    main()
