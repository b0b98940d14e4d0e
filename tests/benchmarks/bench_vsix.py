"""The VS Code packages that carry their server:

1. the size of each built .vsix (per platform), against the package without a server;
2. extension activation to `capture serve` ready with the bundled server (Debian's python3 on
   bundled/libs, nothing on PATH) against the server-less package finding `capture` in the
   workspace's virtual environment, alternating in one run (code-server, needs .ci/vscode-setup).

    python tests/benchmarks/bench_vsix.py [--rounds 3] [VSIX ...]

Prints a Markdown table with the ratios (on the docs' benchmarks page).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conftest import NETGUARD
from tests.vscode.codeserver import (
    CACHE,
    VSIX,
    CodeServer,
    link_project_venv,
    needs_vscode,
    read_trace,
    run_driver,
)

BUNDLED = CACHE / "agent-capture-linux-x64.vsix"


def _ready_ms(base: Path, home: Path, bundled: bool) -> float:
    ws = base / "project"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "app.py").write_text("print('hello')\n")
    env = {"VSCODE_CLI": "1"}
    if bundled:
        env.update(PATH="/usr/bin:/bin", PYTHONPATH=str(NETGUARD))
    else:
        link_project_venv(ws)
    vs = base / "vscode"
    vs.mkdir()
    with CodeServer(vs, home, env=env, vsix=BUNDLED if bundled else VSIX) as server:
        run_driver(str(Path(__file__).with_suffix(".js")), server, {"folder": str(ws)})
        trace = read_trace(server)
    (ready,) = [e for e in trace if e["event"] == "ready"][:1]
    return float(ready["sinceActivationMs"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("vsix", nargs="*", type=Path, help="built packages to weigh")
    args = parser.parse_args()
    print("| package | size |")
    print("|---|---|")
    plain = VSIX.stat().st_size if VSIX.exists() else None
    if plain:
        print(f"| without a server (`vsce package`) | {plain / 1e6:.1f} MB |")
    for vsix in args.vsix or [BUNDLED]:
        size = vsix.stat().st_size
        ratio = f" ({size / plain:.0f}x)" if plain else ""
        print(f"| {vsix.name} | {size / 1e6:.1f} MB{ratio} |")
    needs_vscode()
    timings: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.rounds):
        for bundled in (True, False):
            with tempfile.TemporaryDirectory(prefix="bench-vsix-") as tmp:
                timings[bundled].append(_ready_ms(Path(tmp), Path(tmp) / "home", bundled))
    b, p = statistics.median(timings[True]), statistics.median(timings[False])
    print()
    print("| activation to server ready (median) | ms |")
    print("|---|---|")
    print(f"| bundled server (python3 on bundled/libs) | {b:.0f} |")
    print(f"| `capture` in the workspace's venv | {p:.0f} |")
    print(f"| ratio bundled / venv | {b / p:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
