"""The VS Code extension in a real VS Code (code-server 4.100.3, needs .ci/vscode-setup):

1. extension activation to `capture serve` ready, beside the workbench's own start (page load to
   the explorer listing the folder), over several reloads of one window;
2. keystroke latency (key sent to the character on screen) in a window with the extension
   active and in a window of the same code-server run with extensions disabled.

    python tests/benchmarks/bench_vscode.py [--reloads 5] [--blocks 4] [--keys 50]

Prints a Markdown table with the ratios (the VS Code figures on the docs' benchmarks page).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.vscode.codeserver import CodeServer, link_project_venv, needs_vscode, run_driver


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reloads", type=int, default=5)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--keys", type=int, default=50)
    args = parser.parse_args()
    needs_vscode()
    with tempfile.TemporaryDirectory(prefix="bench-vscode-") as tmp:
        base = Path(tmp)
        ws = base / "project"
        ws.mkdir()
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / "active.py").write_text("# typed with the extension active\n")
        (ws / "disabled.py").write_text("# typed with extensions disabled\n")
        link_project_venv(ws)
        home = base / "capture-home"
        vs = base / "vscode"
        vs.mkdir()
        with CodeServer(vs, home, settings={"agentCapture.statusBar.refreshSeconds": 5}) as server:
            result = run_driver(
                str(Path(__file__).with_suffix(".js")),
                server,
                {
                    "folder": str(ws),
                    "reloads": args.reloads,
                    "blocks": args.blocks,
                    "keys": args.keys,
                    "activeFile": "active.py",
                    "disabledFile": "disabled.py",
                },
                timeout=1200,
            )
    starts = result["starts"]
    workbench = statistics.median(s["workbenchMs"] for s in starts)
    ready = statistics.median(s["activationToReadyMs"] for s in starts)
    active, disabled = result["typing"]["active"], result["typing"]["disabled"]
    a50, d50 = statistics.median(active), statistics.median(disabled)
    a90, d90 = _pct(active, 0.9), _pct(disabled, 0.9)
    print(f"code-server 4.100.3, {len(starts)} window loads, {len(active)} keystrokes per side")
    print()
    print("| measure | extension | peer in the same run | ratio |")
    print("|---|---|---|---|")
    print(
        f"| start (median of {len(starts)} loads) | activation to server ready {ready:.0f} ms"
        f" | workbench start (page load to explorer) {workbench:.0f} ms"
        f" | {ready / workbench:.2f}x |"
    )
    print(
        f"| keystroke to screen, median | active {a50:.1f} ms | extensions disabled {d50:.1f} ms"
        f" | {a50 / d50:.2f}x |"
    )
    print(
        f"| keystroke to screen, p90 | active {a90:.1f} ms | extensions disabled {d90:.1f} ms"
        f" | {a90 / d90:.2f}x |"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
