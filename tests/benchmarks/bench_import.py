"""How fast `capture import claude-code` backfills: 1,000 generated transcripts of realistic
size into an empty database, then the same import again (everything already imported).

Each transcript is one session of a project of 40 files (about 4 kB each): 4 prompts, each
followed by Read, Edit and Bash tool calls with their results as Claude Code writes them
(`toolUseResult` with `originalFile` and `structuredPatch` for edits, stdout for commands),
assistant text and thinking, token usage: about 70 lines and 100-150 kB a file. Half of the
edited lines are still in the files, half were reverted, so outcomes are really judged.

Peer, measured in the same run: reading every file and json-parsing every line in one process
(what any importer must do at the least).

    python tests/benchmarks/bench_import.py [--files N]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FILES_PER_PROJECT = 40


def source_file(i: int) -> list[str]:
    lines = [f'"""Module {i} of the generated project."""', "", "import math", ""]
    for f in range(24):
        lines += [
            f"def function_{i}_{f}(value, scale=2):",
            f"    # step {f}: scale the value and round it for module {i}",
            f"    result = round(value * scale + {f}, 2)",
            "    return result",
            "",
        ]
    return lines


def transcript(rng: random.Random, ws: Path, session: str, texts: dict[int, list[str]]) -> str:
    out: list[dict] = []
    clock = 1_780_000_000.0 + rng.random() * 86400 * 30
    parent = None

    def line(kind: str, message: dict, **extra: object) -> None:
        nonlocal clock, parent
        clock += rng.random() * 5
        uid = str(uuid.UUID(int=rng.getrandbits(128)))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(clock)) + ".000Z"
        out.append(
            {
                "parentUuid": parent,
                "isSidechain": False,
                "userType": "external",
                "cwd": str(ws),
                "sessionId": session,
                "version": "2.1.240",
                "gitBranch": "main",
                "type": kind,
                "message": message,
                "uuid": uid,
                "timestamp": stamp,
                **extra,
            }
        )
        parent = uid

    def assistant(content: list[dict]) -> None:
        line(
            "assistant",
            {
                "id": f"msg_{rng.getrandbits(64):x}",
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-5",
                "content": content,
                "stop_reason": "tool_use",
                "usage": {
                    "input_tokens": 812,
                    "cache_read_input_tokens": 20411,
                    "output_tokens": 96,
                },
            },
            requestId=f"req_{rng.getrandbits(64):x}",
        )

    for p in range(4):
        line(
            "user", {"role": "user", "content": f"Task {p}: make the scaling in the module clearer"}
        )
        for e in range(3):
            i = rng.randrange(FILES_PER_PROJECT)
            path = ws / "src" / f"module_{i}.py"
            lines = texts[i]
            original = "\n".join(lines) + "\n"
            tool_id = f"toolu_{rng.getrandbits(96):024x}"
            assistant(
                [
                    {"type": "thinking", "thinking": "Let me read the module first. " * 20},
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Read",
                        "input": {"file_path": str(path)},
                    },
                ]
            )
            line(
                "user",
                {
                    "role": "user",
                    "content": [
                        {"tool_use_id": tool_id, "type": "tool_result", "content": original}
                    ],
                },
                toolUseResult={
                    "type": "text",
                    "file": {"filePath": str(path), "content": original},
                },
            )
            f = rng.randrange(24)
            index = 4 + f * 5 + 2
            old = lines[index]
            new = f"    result = math.floor(value * scale * 100 + {f} * 100) / 100  # p{p}e{e}"
            tool_id = f"toolu_{rng.getrandbits(96):024x}"
            assistant(
                [
                    {"type": "text", "text": "I'll make the rounding explicit. " * 5},
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Edit",
                        "input": {
                            "file_path": str(path),
                            "old_string": old,
                            "new_string": new,
                            "replace_all": False,
                        },
                    },
                ]
            )
            result = {
                "filePath": str(path),
                "oldString": old,
                "newString": new,
                "originalFile": original,
                "structuredPatch": [
                    {
                        "oldStart": index,
                        "oldLines": 2,
                        "newStart": index,
                        "newLines": 2,
                        "lines": [" " + lines[index - 1], "-" + old, "+" + new],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            }
            line(
                "user",
                {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": tool_id,
                            "type": "tool_result",
                            "content": f"The file {path} has been updated.",
                        }
                    ],
                },
                toolUseResult=result,
            )
            if rng.random() < 0.5:  # kept: the file holds the edit now
                lines[index] = new
        tool_id = f"toolu_{rng.getrandbits(96):024x}"
        assistant(
            [
                {
                    "type": "tool_use",
                    "id": tool_id,
                    "name": "Bash",
                    "input": {"command": "python -m pytest -q", "description": "Run tests"},
                }
            ]
        )
        passed = rng.randrange(20, 200)
        stdout = "." * passed + "\n" + f"{passed} passed in 1.{p}2s"
        line(
            "user",
            {
                "role": "user",
                "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": stdout}],
            },
            toolUseResult={"stdout": stdout, "stderr": "", "interrupted": False},
        )
        assistant([{"type": "text", "text": "Done: the scaling is explicit now. " * 10}])
    return "\n".join(json.dumps(o) for o in out) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    args = parser.parse_args()
    rng = random.Random(7)
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        ws = tmp / "project"
        (ws / "src").mkdir(parents=True)
        (ws / ".git").mkdir()  # a work tree root, with no history to read
        texts = {i: source_file(i) for i in range(FILES_PER_PROJECT)}
        history = tmp / "claude" / "projects" / "-project"
        history.mkdir(parents=True)
        for _ in range(args.files):
            name = f"{uuid.UUID(int=rng.getrandbits(128))}.jsonl"
            (history / name).write_text(transcript(rng, ws, name[:-6], texts))
        for i, lines in texts.items():
            (ws / "src" / f"module_{i}.py").write_text("\n".join(lines) + "\n")
        size = sum(p.stat().st_size for p in history.iterdir())

        start, cpu_start = time.perf_counter(), time.process_time()
        lines = 0
        for path in sorted(history.iterdir()):
            with path.open(encoding="utf-8") as fh:
                for raw in fh:
                    json.loads(raw)
                    lines += 1
        parse_s = time.perf_counter() - start
        parse_cpu = time.process_time() - cpu_start

        compileall.compile_dir(ROOT / "capture", quiet=1)
        env = dict(os.environ, CAPTURE_HOME=str(tmp / "home"), PYTHONPATH=str(ROOT))
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cmd = [sys.executable, "-m", "capture", "import", "claude-code", str(history)]
        timings = []
        for _ in range(2):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
            timings.append((wall, cpu, proc.stdout.strip()))
        (first, first_cpu, first_out), (second, second_cpu, second_out) = timings

        print(
            f"{args.files} transcripts, {lines} lines, {size / 1e6:.0f} MB "
            f"({size / args.files / 1e3:.0f} kB each); {os.cpu_count()} CPUs, "
            f"load average {os.getloadavg()[0]:.1f}"
        )
        print("| run | wall s | files/s (wall) | CPU s | files/s (CPU) | CPU vs parsing only |")
        print("|---|---:|---:|---:|---:|---:|")
        rows = [
            ("json-parse every line (peer)", parse_s, parse_cpu),
            ("`capture import claude-code` (empty db)", first, first_cpu),
            ("again (all imported already)", second, second_cpu),
        ]
        for label, wall, cpu in rows:
            print(
                f"| {label} | {wall:.2f} | {args.files / wall:.0f} | {cpu:.2f} | "
                f"{args.files / cpu:.0f} | {cpu / parse_cpu:.2f}x |"
            )
        print(f"first: {first_out}")
        print(f"again: {second_out}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
