"""One real agent CLI session, as a user would run it: a fresh git repository and home, the hooks
written there by `capture install <agent>`, the CLI from the pinned npm install in .cache/agents
pointed at a scripted model on loopback. Nothing of ours sits between the agent and `capture`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, capture_env, missing_tool
from tests.support.agents.model_api import ScriptedModel
from tests.support.agents.scenario import Step

__all__ = ["AGENTS", "CACHE", "Session", "cli", "cli_version", "need_cli"]

CACHE = Path(os.environ.get("CAPTURE_AGENTS_CACHE", ROOT / ".cache" / "agents"))
#: agent name in capture -> the CLI's npm package and its command
AGENTS = {
    "claude-code": ("@anthropic-ai/claude-code", "claude"),
    "codex": ("@openai/codex", "codex"),
    "gemini": ("@google/gemini-cli", "gemini"),
}
#: a model the Codex binary knows: with an unknown one it offers no apply_patch tool
CODEX_MODEL = "gpt-5.5"
SESSION_TIMEOUT = 150


def cli(agent: str) -> Path:
    return CACHE / "node_modules" / ".bin" / AGENTS[agent][1]


def cli_version(agent: str) -> str | None:
    package = CACHE / "node_modules" / AGENTS[agent][0] / "package.json"
    try:
        version: str = json.loads(package.read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None
    return version


def need_cli(agent: str) -> None:
    """Skip (fail under CI) when the CLI is not installed: `.ci/agents-setup` installs it."""
    if not cli(agent).exists():
        missing_tool(f"{AGENTS[agent][0]} is not installed: run .ci/agents-setup")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout


class Session:
    """A repository and home for sessions of one agent. `files`: what the repository holds
    in its first commit besides the README; `windows`: the outcome windows (CAPTURE_WINDOWS)."""

    def __init__(
        self,
        agent: str,
        tmp_path: Path,
        capture_home: Path,
        files: dict[str, str] | None = None,
        windows: str | None = None,
    ) -> None:
        need_cli(agent)
        self.agent = agent
        self.capture_home = capture_home
        self.repo = (tmp_path / "repo").resolve()
        self.home = (tmp_path / "home").resolve()
        self.home.mkdir(parents=True)
        self.repo.mkdir(parents=True)
        _git(self.repo, "init", "-q", "-b", "main")
        _git(self.repo, "config", "user.email", "dev@example.com")
        _git(self.repo, "config", "user.name", "Dev")
        (self.repo / "README.md").write_text("# demo\n")
        for name, text in (files or {}).items():
            (self.repo / name).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / name).write_text(text)
        _git(self.repo, "add", "-A")
        _git(self.repo, "commit", "-qm", "init")
        self.env = capture_env(capture_home, HOME=str(self.home))
        # the hooks name `capture`: the launcher `capture install` writes answers it, on PATH as
        # ~/.local/bin is for a user
        self.env["PATH"] = self.env["CAPTURE_BIN_DIR"] + os.pathsep + self.env.get("PATH", "")
        if windows:
            self.env["CAPTURE_WINDOWS"] = windows
        for name in ("CLAUDE_PROJECT_DIR", "CODEX_HOME", "GEMINI_PROJECT_DIR", "CI"):
            self.env.pop(name, None)
        self.install()
        self.last: subprocess.CompletedProcess[str] | None = None

    def capture(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "capture", *args],
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def install(self) -> None:
        """`capture install <agent>` in the repository, then the settings a user of this agent
        has anyway (which model API, trust), in the fresh home."""
        done = self.capture("install", self.agent)
        assert done.returncode == 0, done.stderr
        if self.agent == "codex":
            codex_home = self.home / ".codex"
            codex_home.mkdir()
            # the notify program, as Codex's documentation has users set it
            notify = json.dumps([sys.executable, "-m", "capture", "hook", "codex"])
            (codex_home / "config.toml").write_text(
                f'model = "{CODEX_MODEL}"\nmodel_provider = "scripted"\n'
                'approval_policy = "never"\nsandbox_mode = "danger-full-access"\n'
                f"notify = {notify}\n\n"
                '[model_providers.scripted]\nname = "Scripted"\nbase_url = "{BASE_URL}/v1"\n'
                'env_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
                "request_max_retries = 0\nstream_max_retries = 0\n\n"
                "[features]\nhooks = true\napply_patch_freeform = true\n\n"
                f'[projects."{self.repo}"]\ntrust_level = "trusted"\n'
            )
        if self.agent == "gemini":
            settings = {
                "security": {
                    "auth": {"selectedType": "gemini-api-key"},
                    "folderTrust": {"enabled": False},
                },
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "hooksConfig": {"enabled": True},
            }
            (self.home / ".gemini").mkdir()
            (self.home / ".gemini" / "settings.json").write_text(json.dumps(settings))

    def run(
        self, steps: list[Step], prompt: str = "do the task", *, deny_edits: bool = False
    ) -> subprocess.CompletedProcess[str]:
        """One session of the CLI through the scripted `steps`; returns when the CLI exits.
        deny_edits: the user gave no permission to edit files (the agent asks, nobody answers)."""
        with ScriptedModel(self.agent, steps, str(self.repo)) as model:
            argv, env = self._command(model.url, prompt, deny_edits)
            done = subprocess.run(
                argv,
                cwd=self.repo,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=SESSION_TIMEOUT,
            )
            self.requests = model.requests
        self.last = done
        return done

    def _command(self, url: str, prompt: str, deny_edits: bool) -> tuple[list[str], dict[str, str]]:
        env = dict(self.env)
        binary = str(cli(self.agent))
        if self.agent == "claude-code":
            env.update(
                ANTHROPIC_BASE_URL=url,
                ANTHROPIC_API_KEY="sk-scripted",
                DISABLE_AUTOUPDATER="1",
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
            )
            mode = "default" if deny_edits else "acceptEdits"
            allowed = "Bash(python3:*),Bash(git:*)"
            return [binary, "-p", prompt, "--permission-mode", mode, "--allowedTools", allowed], env
        if self.agent == "codex":
            config = self.home / ".codex" / "config.toml"
            text = re.sub(r'base_url = "[^"]*"', f'base_url = "{url}/v1"', config.read_text())
            config.write_text(text)
            env.update(CODEX_HOME=str(self.home / ".codex"), SCRIPTED_API_KEY="sk-scripted")
            argv = [binary, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust"]
            if deny_edits:
                argv += ["--sandbox", "read-only"]
            return [*argv, prompt], env
        env.update(GEMINI_API_KEY="sk-scripted", GOOGLE_GEMINI_BASE_URL=url)
        if deny_edits:
            # headless, the CLI asks nobody: without yolo it offers no edit tool at all. A
            # user's own policy hook is how an edit is denied there
            self._gemini_policy_hook()
        return [binary, "-p", prompt, "--approval-mode", "yolo"], env

    def _gemini_policy_hook(self) -> None:
        settings = self.repo / ".gemini" / "settings.json"
        data = json.loads(settings.read_text())
        deny = json.dumps({"decision": "deny", "reason": "policy: calc.py is frozen"})
        data["hooks"]["BeforeTool"].insert(
            0,
            {
                "matcher": "replace|write_file",
                "hooks": [{"name": "policy", "type": "command", "command": f"echo '{deny}'"}],
            },
        )
        settings.write_text(json.dumps(data, indent=2))

    def git(self, *args: str) -> str:
        return _git(self.repo, *args)

    def episodes(self) -> list[dict[str, Any]]:
        done = self.capture("episodes", "--json")
        assert done.returncode == 0, done.stderr
        value: list[dict[str, Any]] = json.loads(done.stdout)
        return value

    def clean(self) -> None:
        shutil.rmtree(self.home, ignore_errors=True)
