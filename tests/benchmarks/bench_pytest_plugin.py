"""What the pytest plugin adds to the wall time of a 2,000-test suite: the same session with
the plugin on (per-test outcomes collected, one transaction at the end writing the run, its
2,000 results and its links) and off, interleaved, medians. Neither session loads plugins from
entry points; the "on" one loads ours with `-p capture.testruns.sources.pytest_plugin`.

The suite: 20 files of 100 small tests (plain, parametrized, a class, a fixture), 1% of them
failing; the workspace has an open agent episode for the run to be linked to.

    python tests/benchmarks/bench_pytest_plugin.py [--runs N] [--tests N]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

BUDGET = 0.05

TEST_FILE = """\
import pytest


@pytest.fixture
def numbers():
    return list(range(10))


@pytest.mark.parametrize("n", range({param}))
def test_param(n):
    assert n * 2 == n + n


class TestThings:
{methods}


{functions}
"""


def write_suite(ws: Path, tests: int) -> None:
    per_file = 100
    files = max(1, tests // per_file)
    for f in range(files):
        methods = "\n".join(
            f"    def test_method_{i}(self):\n        assert {i} + 1 == {i + 1}\n"
            for i in range(20)
        )
        functions = "\n\n".join(
            f"def test_fn_{i}(numbers):\n    assert sum(numbers) == 45"
            + (" and False" if f % 2 == 0 and i == 0 else "")
            for i in range(per_file - 20 - 50)
        )
        (ws / "tests" / f"test_mod{f:02d}.py").write_text(
            TEST_FILE.format(param=50, methods=methods, functions=functions)
        )


def seed_episode(home: Path, ws: Path) -> None:
    os.environ["CAPTURE_HOME"] = str(home)
    os.environ["CAPTURE_WINDOWS"] = "10m"
    from capture.config import load_config
    from capture.model import HunkInput, ProposalInput
    from capture.recording.recorder import record_proposal
    from capture.store.database import Store

    config = load_config()
    (ws / "src.py").write_text("def f():\n    return 1\n")
    with Store.open(config.paths.db) as store:
        proposal = ProposalInput(
            path=str(ws / "src.py"),
            workspace=str(ws),
            agent="claude-code",
            hunks=[HunkInput("", "    return 1\n")],
            session_id="s",
            turn_id="t",
        )
        record_proposal(store, config, proposal, now=time.time() - 5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--tests", type=int, default=2000)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    try:
        ws = tmp / "project"
        (ws / "tests").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
        (ws / "pytest.ini").write_text("[pytest]\n")
        write_suite(ws, args.tests)
        home = tmp / "home"
        seed_episode(home, ws)
        compileall.compile_dir(ROOT / "capture", quiet=1)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # No plugin from entry points in either session (hypothesis or pytest-lsp, when
        # installed, would add seconds to both and shrink the ratio): ours is loaded with -p.
        env.update(
            CAPTURE_HOME=str(home),
            CAPTURE_WINDOWS="10m",
            PYTHONPATH=str(ROOT),
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        )
        base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
        on = [*base[:3], "-p", "capture.testruns.sources.pytest_plugin", *base[3:]]
        off = base
        sessions = {"plugin off": off, "plugin on": on}

        def timed(cmd: list[str]) -> tuple[float, float]:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 1 or "capture:" in proc.stdout + proc.stderr:
                raise SystemExit(f"unexpected session: {proc.returncode}\n{proc.stdout[-2000:]}")
            return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime

        for cmd in sessions.values():  # warm caches and bytecode
            timed(cmd)
        walls: dict[str, list[float]] = {name: [] for name in sessions}
        cpus: dict[str, list[float]] = {name: [] for name in sessions}
        for _ in range(args.runs):
            for name, cmd in sessions.items():
                wall, cpu = timed(cmd)
                walls[name].append(wall)
                cpus[name].append(cpu)
        from capture.connection import sqlite3

        conn = sqlite3.connect(home / "data" / "capture.db")
        recorded = conn.execute(
            "SELECT count(*), max(passed + failed + errors + skipped) FROM test_runs"
        ).fetchone()
        linked = conn.execute("SELECT count(*) FROM episode_test_runs").fetchone()[0]
        conn.close()
        med = {name: statistics.median(v) for name, v in walls.items()}
        cpu_med = {name: statistics.median(v) for name, v in cpus.items()}
        added = med["plugin on"] / med["plugin off"] - 1
        added_cpu = cpu_med["plugin on"] / cpu_med["plugin off"] - 1
        # Each "on" session against the "off" one run just before it: slow drifts of the
        # machine's load cancel out.
        paired = statistics.median(
            on_wall / off_wall - 1
            for on_wall, off_wall in zip(walls["plugin on"], walls["plugin off"], strict=True)
        )
        added_min = min(walls["plugin on"]) / min(walls["plugin off"]) - 1
        print(
            f"\n{args.runs} interleaved sessions each of a {recorded[1]}-test suite "
            f"(no other plugins); {recorded[0]} runs "
            f"recorded, {linked} links; Python {sys.version.split()[0]}, {os.cpu_count()} "
            f"CPUs, load {os.getloadavg()[0]:.1f}\n"
        )
        print("| session | median wall (s) | min wall (s) | median CPU (s) |")
        print("|---|---:|---:|---:|")
        for name in sessions:
            print(f"| {name} | {med[name]:.3f} | {min(walls[name]):.3f} | {cpu_med[name]:.3f} |")
        verdict = "within" if added <= BUDGET else "OVER"
        print(
            f"\nThe plugin adds {added:+.1%} to the session's median wall time "
            f"(budget {BUDGET:.0%}: {verdict}); paired sessions: {paired:+.1%}; "
            f"fastest sessions: {added_min:+.1%}; CPU time: {added_cpu:+.1%}."
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
