"""`capture install` / `capture uninstall` as real processes, on real settings files: the user's
own hooks kept byte for byte, a backup outside the repository, idempotence, --dry-run, the
personal/shared/user scopes, settings a team can commit (no path of this machine in them), and an
installed command that really records, here through the per-user launcher and in a clone on
another path through the teammate's own `capture`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from capture.install.targets import TARGETS, handler_command, is_ours
from tests.conftest import ROOT, RunCapture, capture_env
from tests.support.hook_support import (  # noqa: F401 - no_agent_env is an autouse fixture
    EXAMPLES,
    count,
    example,
    make_workspace,
    no_agent_env,
)

PROJECT_FILES = {
    "claude-code": (".claude/settings.json", "claude_code_settings_hooks.json"),
    "cursor": (".cursor/hooks.json", "cursor_hooks_config.json"),
    "codex": (".codex/hooks.json", "codex_hooks_config.json"),
    "gemini": (".gemini/settings.json", "gemini_settings_hooks.json"),
}


def installed_handlers(path: Path, agent: str) -> list[dict]:
    document = json.loads(path.read_text())
    found = []
    for entries in document["hooks"].values():
        for entry in entries:
            for handler in entry.get("hooks", [entry]):
                if is_ours(handler, agent):
                    found.append(handler)
    return found


@pytest.mark.parametrize("agent", sorted(PROJECT_FILES))
def test_install_keeps_the_users_hooks_and_uninstall_restores_the_file(
    agent: str, tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    relative, example_name = PROJECT_FILES[agent]
    settings = ws / relative
    settings.parent.mkdir(parents=True)
    original = (EXAMPLES / example_name).read_bytes()
    settings.write_bytes(original)
    subdir = ws / "invoicer"  # run from inside the project: the work tree root is found

    dry = run_capture("install", agent, "--shared", "--dry-run", cwd=subdir)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"--- {settings}\n+++ {settings}\n")
    assert "+" in dry.stdout and settings.read_bytes() == original

    result = run_capture("install", agent, "--shared", cwd=subdir)
    assert result.returncode == 0, result.stderr
    assert f"hooks installed in {settings}" in result.stdout
    assert len(installed_handlers(settings, agent)) == len(TARGETS[agent].events)
    (backup,) = (run_capture.home / "state" / "install-backups").iterdir()  # type: ignore[attr-defined]
    assert backup.read_bytes() == original
    assert sorted(p.name for p in settings.parent.iterdir()) == [settings.name]
    installed = settings.read_bytes()

    again = run_capture("install", agent, "--shared", cwd=subdir)
    assert "already installed" in again.stdout
    assert settings.read_bytes() == installed

    result = run_capture("uninstall", agent, "--shared", cwd=subdir)
    assert result.returncode == 0, result.stderr
    assert settings.read_bytes() == original


def test_install_creates_and_uninstall_removes_a_file_of_its_own(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_workspace(tmp_path)
    theirs = ws / ".github" / "hooks" / "recorder.json"
    theirs.parent.mkdir(parents=True)
    theirs.write_bytes((EXAMPLES / "copilot_hooks_config.json").read_bytes())
    assert run_capture("install", "copilot", cwd=ws).returncode == 0
    ours = ws / ".github" / "hooks" / "agent-capture.json"
    document = json.loads(ours.read_text())
    assert document["version"] == 1
    commands = [handler_command(h) for entries in document["hooks"].values() for h in entries]
    assert all(
        c and c.endswith(f"hook copilot --event {e}")
        for c, e in zip(commands, document["hooks"], strict=True)
    )
    assert run_capture("uninstall", "copilot", cwd=ws).returncode == 0
    assert not ours.exists()
    assert theirs.read_bytes() == (EXAMPLES / "copilot_hooks_config.json").read_bytes()

    # a settings file that did not exist is made, and goes again
    for scope, name in (("--local", "settings.local.json"), ("--shared", "settings.json")):
        claude = ws / ".claude" / name
        assert run_capture("install", "claude-code", scope, cwd=ws).returncode == 0
        assert claude.exists()
        assert run_capture("uninstall", "claude-code", scope, cwd=ws).returncode == 0
        assert not claude.exists()


def test_user_scope_and_codex_notify(tmp_path: Path, run_capture: RunCapture) -> None:
    home = tmp_path / "home"
    codex = home / ".codex"
    codex.mkdir(parents=True)
    config = 'model = "gpt-5.5"\n\n[features]\ncodex_hooks = true\n'
    (codex / "config.toml").write_text(config)
    env = {"HOME": str(home), "CODEX_HOME": str(codex)}
    result = run_capture("install", "codex", "--user", cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert len(installed_handlers(codex / "hooks.json", "codex")) == 5
    notify = (codex / "config.toml").read_text().splitlines()[2]
    argv = json.loads(notify.split("=", 1)[1])
    assert argv[-2:] == ["hook", "codex"]
    assert run_capture("uninstall", "codex", "--user", cwd=tmp_path, env=env).returncode == 0
    assert (codex / "config.toml").read_text() == config
    assert not (codex / "hooks.json").exists()


def test_an_unreadable_settings_file_is_left_alone(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = make_workspace(tmp_path)
    settings = ws / ".cursor" / "hooks.json"
    settings.parent.mkdir()
    settings.write_text('{"version": 1, "hooks": {')
    result = run_capture("install", "cursor", cwd=ws)
    assert result.returncode != 0
    (line,) = result.stderr.splitlines()
    assert line.startswith("capture: error: ") and "cannot read it" in line
    assert settings.read_text() == '{"version": 1, "hooks": {'


def _git(ws: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ws), *args], capture_output=True, text=True, check=True
    ).stdout


def _committed_workspace(tmp_path: Path) -> Path:
    ws = make_workspace(tmp_path)
    _git(ws, "add", "-A")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start")
    return ws


def _texts_under(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_bytes().decode("utf-8", "replace")
        for p in root.rglob("*")
        if p.is_file()
    }


def _run_hook(command: str, ws: Path, home: Path, path: str) -> subprocess.CompletedProcess[bytes]:
    """The command as the agent runs it: by a shell, from the project, with the agent's PATH."""
    return subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(example("claude_code_posttooluse_edit.json", ws)).encode(),
        capture_output=True,
        cwd=ws,
        env=capture_env(home, CLAUDE_PROJECT_DIR=str(ws), PATH=path),
        timeout=60,
    )


SYSTEM_PATH = os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin") if Path(p).is_dir())


@pytest.mark.parametrize("scope", ["--local", "--shared"])
def test_project_settings_hold_no_path_of_this_machine_and_git_sees_only_them(
    scope: str, tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = _committed_workspace(tmp_path)
    result = run_capture("install", "claude-code", scope, cwd=ws)
    assert result.returncode == 0, result.stderr
    for name, text in _texts_under(ws).items():
        for machine_path in (str(tmp_path), sys.executable, str(ROOT)):
            assert machine_path not in text, f"{name} holds {machine_path}"
    status = _git(ws, "status", "--porcelain", "--untracked-files=all").splitlines()
    # the personal file is kept out of git's sight (the repository's own exclude list)
    assert status == ([] if scope == "--local" else ["?? .claude/settings.json"])
    name = "settings.local.json" if scope == "--local" else "settings.json"
    (handler, *_) = installed_handlers(ws / ".claude" / name, "claude-code")
    assert handler["command"] == "capture hook claude-code"


def test_the_installed_command_records_through_the_launcher(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    """With no `capture` on the agent's PATH but the per-user launcher's folder, the installed
    command records the edit: the launcher runs the interpreter capture was installed with."""
    ws = make_workspace(tmp_path)
    result = run_capture("install", "claude-code", cwd=ws)
    assert result.returncode == 0, result.stderr
    launcher = capture_home / "bin" / "capture"
    assert f"launcher {launcher}" in result.stdout
    assert "is not on PATH" in result.stdout
    (handler, *_) = installed_handlers(ws / ".claude" / "settings.local.json", "claude-code")
    proc = _run_hook(
        handler["command"], ws, capture_home, f"{launcher.parent}{os.pathsep}{SYSTEM_PATH}"
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert count(capture_home, "proposals") == 1


def test_a_clone_on_another_path_runs_the_committed_hooks(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    """The team's settings, committed and cloned elsewhere: a teammate's own `capture` (no
    launcher of theirs, another home) runs the hooks."""
    ws = _committed_workspace(tmp_path)
    run_capture("install", "claude-code", "--shared", cwd=ws, check=True)
    _git(ws, "add", ".claude/settings.json")
    _git(ws, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "hooks")
    clone = tmp_path / "elsewhere" / "invoicer"
    subprocess.run(["git", "clone", "-q", str(ws), str(clone)], check=True)
    teammate = tmp_path / "teammate-bin"
    teammate.mkdir()
    script = teammate / "capture"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m capture "$@"\n')
    script.chmod(0o755)
    their_home = tmp_path / "teammate-home"
    (handler, *_) = installed_handlers(clone / ".claude" / "settings.json", "claude-code")
    proc = _run_hook(handler["command"], clone, their_home, f"{teammate}{os.pathsep}{SYSTEM_PATH}")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert count(their_home, "proposals") == 1
    assert count(capture_home, "proposals") == 0


def test_doctor_shows_what_install_wired_up(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = make_workspace(tmp_path)
    env = {"NO_COLOR": "1", "HOME": str(tmp_path / "home")}  # no user settings of the machine
    before = run_capture("doctor", cwd=ws, env=env).stdout
    assert "hooks     none" in before
    run_capture("install", "claude-code", cwd=ws, env=env, check=True)
    run_capture("install", "cursor", cwd=ws, env=env, check=True)
    text = run_capture("doctor", cwd=ws, env=env).stdout
    local = ws / ".claude" / "settings.local.json"
    assert f"claude-code (local): {len(TARGETS['claude-code'].events)} event(s) in {local}" in text
    assert f"cursor (shared): {len(TARGETS['cursor'].events)} event(s) in" in text
    assert "capture's launcher" in text and "sync      off" in text
    wired = json.loads(run_capture("doctor", "--json", cwd=ws, env=env).stdout)["wired"]
    assert {(h["agent"], h["scope"]) for h in wired["hooks"]} == {
        ("claude-code", "local"),
        ("cursor", "shared"),
    }
    assert wired["pytest_plugin"] == "capture.testruns.sources.pytest_plugin"
