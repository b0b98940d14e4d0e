"""Hook overhead per tool call inside a real Claude Code session (the CLI at the version
.ci/agents-setup pins, driven by the scripted model of tests/support/agents).

The same scripted session (a file written, then edited, then `--calls` shell commands) runs in
turn with the hooks `capture install claude-code` wrote and with the same hook entries running
a no-op (`true`), interleaved in one invocation. The overhead per tool call is the difference of
the median session wall times divided by the session's tool calls; the ratio is with/no-op.

    python tests/benchmarks/bench_agent_hooks.py [--runs N] [--calls N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.support.agents.sessions import Session, cli, cli_version  # noqa: E402
from tests.support.hook_support import wait_for_queue  # noqa: E402


def steps(calls: int) -> list[dict[str, str]]:
    out: list[dict[str, str]] = [
        {"write": "calc.py", "content": "def add(a, b):\n    return a + b\n"},
        {"edit": "calc.py", "old": "    return a + b\n", "new": "    return b + a\n"},
    ]
    out += [{"shell": f"python3 -c 'print({i})'"} for i in range(calls)]
    return [*out, {"text": "done"}]


def no_op(session: Session) -> None:
    """The same hook entries, each running `true` instead of capture."""
    settings = session.repo / ".claude" / "settings.json"
    data = json.loads(settings.read_text())
    for groups in data["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = "true"
    settings.write_text(json.dumps(data))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=8)
    args = parser.parse_args()
    if not cli("claude-code").exists():
        print("Claude Code is not installed: run .ci/agents-setup", file=sys.stderr)
        return 1
    script = steps(args.calls)
    tool_calls = len(script) - 1 + 1  # the Read Claude Code makes before its edit
    times: dict[str, list[float]] = {"capture": [], "no-op": []}
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(args.runs):
            for kind in ("capture", "no-op"):
                where = Path(tmp) / f"{kind}-{run}"
                session = Session("claude-code", where, where / "capture-home")
                if kind == "no-op":
                    no_op(session)
                started = time.perf_counter()
                done = session.run(script)
                times[kind].append(time.perf_counter() - started)
                assert done.returncode == 0, done.stderr[-2000:]
                if kind == "capture":
                    wait_for_queue(where / "capture-home")
    ours, peer = statistics.median(times["capture"]), statistics.median(times["no-op"])
    print(
        f"Claude Code {cli_version('claude-code')}, {tool_calls} tool calls a session, "
        f"{args.runs} sessions each, interleaved"
    )
    for kind, values in times.items():
        print(
            f"  {kind:8} median {statistics.median(values):6.2f} s  "
            f"(min {min(values):.2f}, max {max(values):.2f})"
        )
    print(
        f"  overhead per tool call: {(ours - peer) / tool_calls * 1000:.0f} ms; "
        f"session wall time with capture / with no-op hooks: {ours / peer:.2f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
