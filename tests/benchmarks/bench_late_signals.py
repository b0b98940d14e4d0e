"""How long the late pass takes over a repository of 10,000 commits.

The repository is generated with `git fast-import`: 200 Python files, one commit a minute (about
a week of history), each commit adding a line to one file; every 500th commit reverts the latest
agent's commit (`Revert "..."`), every 250th is a "Fix ..." that rewrites a line an earlier commit
added. Every 50th commit carries an agent's edit: 200 proposals, recorded kept in a fresh
store, applied a minute before their commit. The late pass then measures them all, 40 days on
(every window closed), and recomputes their tiers.

Peer, measured in the same run: `git log --numstat` over the same range (what reading the
history's changes costs at the least).

    python tests/benchmarks/bench_late_signals.py [--commits N] [--every N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from capture.recording.late_git import late_pass  # noqa: E402
from capture.recording.late_tiers import recompute_tiers  # noqa: E402
from capture.store.database import Store  # noqa: E402
from capture.store.tier_rows import current_tiers  # noqa: E402

FILES = 200
T0 = 1_780_000_000.0


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n" % len(raw) + raw + b"\n"


def generate(repo: Path, commits: int, every: int) -> list[tuple[str, float, str]]:
    """Write the repository; (path, applied_at, added line) of each agent edit."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    files: dict[str, list[str]] = {f"src/mod_{i}.py": [f"# module {i}"] for i in range(FILES)}
    agent: list[tuple[str, float, str]] = []
    chunks: list[bytes] = []
    last_added: tuple[str, str, str] | None = None  # (path, line, subject)
    for i in range(1, commits + 1):
        at = T0 + i * 60
        if i % 500 == 0 and last_added is not None:
            path, line, subject = last_added
            if line in files[path]:
                files[path].remove(line)
            message = f'Revert "{subject}"\n'
        elif i % 250 == 0:
            path = f"src/mod_{(i // 250) % FILES}.py"
            body = files[path]
            j = len(body) - 1
            body[j] = body[j].replace(" = ", " = 1 + ")
            message = f"Fix the value in {path}\n"
        else:
            path = f"src/mod_{i % FILES}.py"
            line = f"value_{i} = {i}"
            files[path].append(line)
            message = f"add value {i}\n"
            if i % every == 0:
                agent.append((path, at - 60, line))
                last_added = (path, line, message.strip())
        text = "\n".join(files[path]) + "\n"
        head = (
            f"commit refs/heads/main\nmark :{i}\ncommitter dev <dev@example.com> {int(at)} +0000\n"
        )
        chunks.append(head.encode() + _data(message))
        if i > 1:
            chunks.append(f"from :{i - 1}\n".encode())
        chunks.append(f"M 100644 inline {path}\n".encode() + _data(text))
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(chunks), check=True
    )
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
    return agent


def record(store: Store, root: str, edits: list[tuple[str, float, str]]) -> None:
    conn = store.conn
    with store.transaction():
        conn.execute("INSERT INTO workspaces (root, created_at) VALUES (?, ?)", (root, T0))
        ws = conn.execute("SELECT id FROM workspaces").fetchone()[0]
        for n, (path, at, line) in enumerate(edits):
            eid, pid = f"e{n:06d}", f"p{n:06d}"
            conn.execute(
                "INSERT INTO episodes (id, workspace_id, agent, model, started_at, last_at, "
                "settled_at) VALUES (?, ?, 'claude-code', 'bench', ?, ?, ?)",
                (eid, ws, at, at, at + 600),
            )
            conn.execute(
                "INSERT INTO proposals (id, episode_id, workspace_id, path, agent, model, state, "
                "outcome, lines_added, created_at, applied_at, settled_at) "
                "VALUES (?, ?, ?, ?, 'claude-code', 'bench', 'applied', 'kept', 1, ?, ?, ?)",
                (pid, eid, ws, path, at, at, at + 600),
            )
            conn.execute(
                "INSERT INTO hunks (proposal_id, idx, old_text, new_text) VALUES (?, 0, '', ?)",
                (pid, line + "\n"),
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--commits", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=50, help="an agent edit every N commits")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        started = time.perf_counter()
        edits = generate(repo, args.commits, args.every)
        made = time.perf_counter() - started
        store = Store.open(Path(tmp) / "capture.db")
        record(store, str(repo), edits)
        now = T0 + args.commits * 60 + 40 * 86400

        started = time.perf_counter()
        subprocess.run(
            ["git", "-C", str(repo), "log", "--numstat", f"--since=@{int(T0)}", "HEAD"],
            stdout=subprocess.DEVNULL,
            check=True,
        )
        numstat = time.perf_counter() - started

        started = time.perf_counter()
        report = late_pass(store, now=now)
        passed = time.perf_counter() - started
        started = time.perf_counter()
        recompute_tiers(store, None, now=now)
        tiers = time.perf_counter() - started

        mix: dict[str, int] = {}
        for decision in current_tiers(store.conn, "proposal").values():
            mix[decision.tier.value] = mix.get(decision.tier.value, 0) + 1
        again_started = time.perf_counter()
        second = late_pass(store, now=now + 86400)
        again = time.perf_counter() - again_started

    print(f"repository: {args.commits} commits, {FILES} files (fast-import: {made:.2f} s)")
    print(f"proposals: {report.proposals}, committed {report.committed}; tiers {mix}")
    print()
    print("| pass | seconds | vs git log --numstat |")
    print("|---|---|---|")
    print(f"| git log --numstat over the range (peer) | {numstat:.2f} | 1.0x |")
    print(f"| late pass, {report.proposals} proposals | {passed:.2f} | {passed / numstat:.1f}x |")
    print(f"| tiers recomputed | {tiers:.2f} | {tiers / numstat:.1f}x |")
    print(
        f"| late pass again, windows closed ({second.proposals} to measure) | {again:.2f} | "
        f"{again / numstat:.1f}x |"
    )
    print(f"\nload average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
