"""`capture install <agent> --otel` points the agent's telemetry at `capture otlp` in the
settings it reads (user scope), merged into the user's own, and `uninstall --otel` restores
them; a setting of the user's own with another value is never overwritten."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import RunCapture

USER_SETTINGS = """{
  "model": "opus",
  "env": {
    "DISABLE_AUTOUPDATER": "1"
  },
  "hooks": {}
}
"""


def test_claude_code_user_settings_get_the_logs_exporter_and_lose_it_again(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(USER_SETTINGS)
    env = {"HOME": str(home)}

    done = run_capture("install", "claude-code", "--otel", env=env, check=True)
    assert "telemetry sent to capture otlp" in done.stdout
    data = json.loads(settings.read_text())
    assert data["model"] == "opus" and data["hooks"] == {}
    assert data["env"] == {
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
        "OTEL_LOGS_EXPORTER": "otlp",
        "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://127.0.0.1:4318/v1/logs",
    }
    again = run_capture("install", "claude-code", "--otel", env=env, check=True)
    assert "nothing to change" in again.stdout

    run_capture("uninstall", "claude-code", "--otel", env=env, check=True)
    assert settings.read_text() == USER_SETTINGS


def test_a_users_own_exporter_setting_is_not_overwritten(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    home = tmp_path / "home"
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True)
    mine = '{"env": {"OTEL_LOGS_EXPORTER": "console"}}\n'
    settings.write_text(mine)
    result = run_capture("install", "claude-code", "--otel", env={"HOME": str(home)})
    assert result.returncode != 0
    assert '"env.OTEL_LOGS_EXPORTER" is already set' in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert settings.read_text() == mine


def test_gemini_and_codex(tmp_path: Path, run_capture: RunCapture) -> None:
    home = tmp_path / "home"
    codex = tmp_path / "codex-home"
    codex.mkdir()
    toml = 'model = "gpt-5.1-codex"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
    (codex / "config.toml").write_text(toml)
    env = {"HOME": str(home), "CODEX_HOME": str(codex)}

    run_capture("install", "gemini", "--otel", env=env, check=True)
    gemini = json.loads((home / ".gemini" / "settings.json").read_text())
    assert gemini["telemetry"]["otlpEndpoint"] == "http://127.0.0.1:4318"
    assert gemini["telemetry"]["otlpProtocol"] == "http"
    run_capture("install", "codex", "--otel", env=env, check=True)
    import tomllib

    parsed = tomllib.loads((codex / "config.toml").read_text())
    assert parsed["model"] == "gpt-5.1-codex" and parsed["mcp_servers"]["docs"]
    assert parsed["otel"]["exporter"]["otlp-http"]["endpoint"] == "http://127.0.0.1:4318/v1/logs"

    run_capture("uninstall", "codex", "--otel", env=env, check=True)
    assert (codex / "config.toml").read_text() == toml
    run_capture("uninstall", "gemini", "--otel", env=env, check=True)
    assert "telemetry" not in json.loads((home / ".gemini" / "settings.json").read_text())
    refused = run_capture("install", "cursor", "--otel", env=env)
    assert refused.returncode != 0 and "no telemetry settings" in refused.stderr
