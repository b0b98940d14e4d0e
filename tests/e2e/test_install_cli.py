"""`capture install` / `capture uninstall` as real processes, on real settings files: the user's
own hooks kept byte for byte, a backup, idempotence, --dry-run, --user, and an installed command
that really records."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from capture.install.targets import TARGETS, handler_command, is_ours
from tests.conftest import RunCapture
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

    dry = run_capture("install", agent, "--dry-run", cwd=subdir)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.startswith(f"--- {settings}\n+++ {settings}\n")
    assert "+" in dry.stdout and settings.read_bytes() == original

    result = run_capture("install", agent, cwd=subdir)
    assert result.returncode == 0, result.stderr
    assert f"hooks installed in {settings}" in result.stdout
    assert len(installed_handlers(settings, agent)) == len(TARGETS[agent].events)
    backup = settings.with_name(settings.name + ".capture-backup")
    assert backup.read_bytes() == original
    installed = settings.read_bytes()

    again = run_capture("install", agent, cwd=subdir)
    assert "already installed" in again.stdout
    assert settings.read_bytes() == installed

    result = run_capture("uninstall", agent, cwd=subdir)
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
    claude = ws / ".claude" / "settings.json"
    assert run_capture("install", "claude-code", cwd=ws).returncode == 0
    assert claude.exists()
    assert run_capture("uninstall", "claude-code", cwd=ws).returncode == 0
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


def test_the_installed_command_records(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    """The command written into the settings, run as the agent runs it (by a shell, from the
    project directory, with the agent's own environment), records the edit."""
    ws = make_workspace(tmp_path)
    assert run_capture("install", "claude-code", cwd=ws).returncode == 0
    (handler, *_) = installed_handlers(ws / ".claude" / "settings.json", "claude-code")
    command = handler["command"]
    assert Path(shlex.split(command)[0]).is_absolute()
    from tests.conftest import capture_env

    proc = subprocess.run(
        ["sh", "-c", command],
        input=json.dumps(example("claude_code_posttooluse_edit.json", ws)).encode(),
        capture_output=True,
        cwd=ws,
        env=capture_env(capture_home, CLAUDE_PROJECT_DIR=str(ws)),
        timeout=60,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert count(capture_home, "proposals") == 1
