"""One execution is one test run whichever sources saw it: the agent's shell tool (the real
`capture hook claude-code`, fed the documented payloads) and the pytest plugin, a JUnit report
or `capture run`, in either order, and with the hook's payload applied late."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

from capture.config import load_config
from capture.hooks.inbox import enqueue
from capture.hooks.queue import drain
from capture.store.database import Store
from tests.conftest import RunCapture, capture_env
from tests.support.hook_support import example, hook, rows
from tests.support.projects import LONG_WINDOWS, make_project, pytest_cmd

SESSION = "8f1c2a40-5d7e-4b1a-9c33-2e6f0b7d9a11"


def start_turn(run_capture: RunCapture, ws: Path) -> str:
    hook(run_capture, "claude-code", example("claude_code_userpromptsubmit.json", ws), cwd=ws)
    found = rows(run_capture.home, "SELECT id FROM episodes")  # type: ignore[attr-defined]
    assert len(found) == 1
    return str(found[0]["id"])


def break_calc(ws: Path) -> None:
    path = ws / "src" / "calc.py"
    path.write_text(path.read_text().replace("a + b", "a + b + 1"))


def run_tests(home: Path, ws: Path, cmd: list[str]) -> tuple[float, float, int]:
    began = time.time()
    proc = subprocess.run(
        cmd, cwd=ws, env=capture_env(home, **LONG_WINDOWS), capture_output=True, timeout=120
    )
    return began, time.time(), proc.returncode


def shell_payload(ws: Path, command: str, began: float, ended: float, code: int) -> dict[str, Any]:
    """What Claude Code sends after its Bash tool ran `command` from `began` to `ended`."""
    if code == 0:
        payload = example("claude_code_posttooluse_bash.json", ws)
        payload["tool_response"]["stdout"] = "..  [100%]\n2 passed in 0.02s"
    else:
        payload = example("claude_code_posttoolusefailure_bash.json", ws)
        payload["error"] = (
            f"Exit code {code}\nFAILED tests/test_calc.py::test_add\n1 failed, 1 passed in 0.02s"
        )
    payload["cwd"] = str(ws)
    payload["tool_input"]["command"] = command
    payload["tool_use_id"] = f"toolu_{os.urandom(6).hex()}"
    payload["duration_ms"] = int((time.time() - began) * 1000) + 20
    return payload


def runs(home: Path) -> list[Any]:
    return rows(
        home,
        """SELECT id, source, seen_by, exit_code, shell_exit_code, passed, failed, command,
           (SELECT count(*) FROM test_results r WHERE r.test_run_id = t.id) AS results,
           (SELECT group_concat(episode_id) FROM episode_test_runs l
            WHERE l.test_run_id = t.id) AS episodes
           FROM test_runs t ORDER BY started_at""",
    )


def report_runs(home: Path) -> int:
    found = rows(home, "SELECT sum(runs) FROM report_tests WHERE dim = 'all' AND span = 86400")
    return int(found[0][0] or 0)


def test_plugin_then_hook_is_one_run(tmp_path: Path, run_capture: RunCapture) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    episode = start_turn(run_capture, ws)
    break_calc(ws)
    began, ended, code = run_tests(home, ws, pytest_cmd(plugin=True))
    assert code == 1
    hook(
        run_capture, "claude-code", shell_payload(ws, "python -m pytest -q tests", began, ended, 1)
    )

    [run] = runs(home)
    assert (run["source"], run["seen_by"]) == ("pytest-plugin", "pytest-plugin,hook")
    assert (run["exit_code"], run["shell_exit_code"], run["passed"], run["failed"]) == (1, 1, 1, 1)
    assert run["results"] == 2 and run["episodes"] == episode
    assert run["command"] == "python -m pytest -q tests"
    kinds = [r[0] for r in rows(home, "SELECT kind FROM events ORDER BY id")]
    assert kinds.count("test_run") == 1 and kinds.count("hook") == 2
    assert report_runs(home) == 1


def test_hook_applied_two_seconds_late_gives_the_same_run(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    episode = start_turn(run_capture, ws)
    break_calc(ws)
    began, ended, _ = run_tests(home, ws, pytest_cmd(plugin=True))
    payload = shell_payload(ws, "python -m pytest -q tests", began, ended, 1)
    at = time.time()
    config = load_config()
    raw = json.dumps(payload).encode()
    assert enqueue(str(config.paths.db), "claude-code", None, raw, str(ws), "", at=at)
    with Store.open(config.paths.db) as store:
        assert drain(store, config, clock=lambda: at + 2.0) == 1

    [run] = runs(home)
    assert (run["seen_by"], run["exit_code"], run["shell_exit_code"]) == (
        "pytest-plugin,hook",
        1,
        1,
    )
    assert run["results"] == 2 and run["episodes"] == episode
    assert report_runs(home) == 1
    # the same report again records nothing more
    hook(run_capture, "claude-code", payload)
    assert len(runs(home)) == 1 and report_runs(home) == 1


def test_junit_report_and_hook_in_either_order(tmp_path: Path, run_capture: RunCapture) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    episode = start_turn(run_capture, ws)
    cmd = pytest_cmd(plugin=False)
    for order, report in (("junit-first", "junit-a.xml"), ("hook-first", "junit-b.xml")):
        began, ended, code = run_tests(home, ws, [*cmd[:-1], f"--junitxml={report}", cmd[-1]])
        assert code == 0
        shell = shell_payload(ws, f"python -m pytest -q --junitxml={report} tests", began, ended, 0)
        if order == "hook-first":
            hook(run_capture, "claude-code", shell)
        run_capture("junit", report, cwd=ws, env=LONG_WINDOWS, check=True)
        if order == "junit-first":
            hook(run_capture, "claude-code", shell)
    first, second = runs(home)
    assert first["seen_by"] == "junit-file,hook" and second["seen_by"] == "hook,junit-file"
    for run in (first, second):
        assert (run["source"], run["passed"], run["results"]) == ("junit-file", 2, 2)
        assert (run["exit_code"], run["shell_exit_code"], run["episodes"]) == (0, 0, episode)
    assert report_runs(home) == 2


def test_capture_run_and_hook_are_one_run(tmp_path: Path, run_capture: RunCapture) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    episode = start_turn(run_capture, ws)
    began = time.time()
    result = run_capture("run", "--", *pytest_cmd(plugin=True), cwd=ws, env=LONG_WINDOWS)
    assert result.returncode == 0, result.stderr
    command = "capture run -- python -m pytest -q tests"
    hook(run_capture, "claude-code", shell_payload(ws, command, began, time.time(), 0))
    [run] = runs(home)
    assert (run["source"], run["seen_by"], run["shell_exit_code"]) == ("wrapper", "wrapper,hook", 0)
    assert run["results"] == 2 and run["episodes"] == episode


def test_two_executions_in_quick_succession_stay_two_runs(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    start_turn(run_capture, ws)
    for code in (0, 1):
        if code:
            break_calc(ws)
        began, ended, got = run_tests(home, ws, pytest_cmd(plugin=True))
        assert got == code
        hook(run_capture, "claude-code", shell_payload(ws, "pytest -q tests", began, ended, code))
    first, second = runs(home)
    assert [r["seen_by"] for r in (first, second)] == ["pytest-plugin,hook"] * 2
    assert (first["exit_code"], first["shell_exit_code"]) == (0, 0)
    assert (second["exit_code"], second["shell_exit_code"], second["failed"]) == (1, 1, 1)
    assert report_runs(home) == 2


def enqueue_late(payloads: list[tuple[str, dict[str, Any], float]], ws: Path) -> None:
    """The hook fired at each `at`; its payloads are applied together, 2 s after the last."""
    config = load_config()
    for agent, payload, at in payloads:
        raw = json.dumps(payload).encode()
        assert enqueue(str(config.paths.db), agent, None, raw, str(ws), "", at=at)
    last = max(at for _, _, at in payloads)
    with Store.open(config.paths.db) as store:
        assert drain(store, config, clock=lambda: last + 2.0) == len(payloads)


def test_two_quick_executions_reported_late_stay_two_runs(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    start_turn(run_capture, ws)
    reports = []
    for code in (0, 1):
        if code:
            break_calc(ws)
        began, ended, got = run_tests(home, ws, pytest_cmd(plugin=True))
        assert got == code
        payload = shell_payload(ws, "pytest -q tests", began, ended, code)
        reports.append(("claude-code", payload, time.time()))
    enqueue_late(reports, ws)  # both plugin runs are on record before either report
    first, second = runs(home)
    assert [r["seen_by"] for r in (first, second)] == ["pytest-plugin,hook"] * 2
    assert [(r["exit_code"], r["shell_exit_code"]) for r in (first, second)] == [(0, 0), (1, 1)]
    assert report_runs(home) == 2


def announced(payload: dict[str, Any]) -> dict[str, Any]:
    """The PreToolUse report of the same Bash call (same tool_use_id), before it runs."""
    pre = {k: v for k, v in payload.items() if k not in ("tool_response", "duration_ms")}
    pre.pop("error", None)
    pre.pop("is_interrupt", None)
    pre["hook_event_name"] = "PreToolUse"
    return pre


def test_without_a_duration_the_pre_tool_use_report_opens_the_window(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    episode = start_turn(run_capture, ws)
    cmd = pytest_cmd(plugin=False)
    command = "python -m pytest -q --junitxml=junit.xml tests"
    post = shell_payload(ws, command, time.time(), time.time(), 0)
    del post["duration_ms"]  # optional in Claude Code's PostToolUse
    hook(run_capture, "claude-code", announced(post))
    _, _, code = run_tests(home, ws, [*cmd[:-1], "--junitxml=junit.xml", cmd[-1]])
    assert code == 0
    hook(run_capture, "claude-code", post)

    pre_at, post_at = (r["at"] for r in rows(home, "SELECT at FROM events ORDER BY id")[-2:])
    [alone] = rows(home, "SELECT started_at, duration_s FROM test_runs")
    assert alone["started_at"] == pre_at
    assert abs(alone["duration_s"] - (post_at - pre_at)) < 1e-3
    assert rows(home, "SELECT key FROM hook_pending WHERE key LIKE 'shell-start:%'") == []

    run_capture("junit", "junit.xml", cwd=ws, env=LONG_WINDOWS, check=True)
    [run] = runs(home)
    assert (run["seen_by"], run["source"], run["results"]) == ("hook,junit-file", "junit-file", 2)
    assert (run["exit_code"], run["shell_exit_code"], run["episodes"]) == (0, 0, episode)


def test_codex_long_after_its_run_ended_is_the_same_run_by_its_pre_tool_use_report(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    """Codex reports no duration: the window is PreToolUse to PostToolUse, so a shell line that
    went on well after the tests ended (`pytest && sleep 20`) still finds its run."""
    home = run_capture.home  # type: ignore[attr-defined]
    ws = make_project(tmp_path)
    hook(run_capture, "codex", example("codex_hook_userpromptsubmit.json", ws), cwd=ws)
    [episode] = [r["id"] for r in rows(home, "SELECT id FROM episodes")]
    post = example("codex_hook_posttooluse_bash.json", ws)
    post["cwd"] = str(ws)
    post["tool_input"]["command"] = "python -m pytest -q tests && sleep 20"
    post["tool_response"] = "..                                   [100%]\n2 passed in 0.02s\n"
    pre = {k: v for k, v in post.items() if k != "tool_response"}
    pre["hook_event_name"] = "PreToolUse"
    hook(run_capture, "codex", pre, cwd=ws)
    _, ended, code = run_tests(home, ws, pytest_cmd(plugin=True))
    assert code == 0
    enqueue_late([("codex", post, ended + 20.0)], ws)

    [run] = runs(home)
    assert (run["seen_by"], run["passed"], run["results"]) == ("pytest-plugin,hook", 2, 2)
    assert run["episodes"] == episode
