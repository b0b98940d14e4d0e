"""The watcher as a user service, for those who want it always on: a systemd user unit on
Linux, a launchd agent on macOS. The files' text and where they go; `capture install watcher`
writes them, `capture uninstall watcher` removes them."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path
from xml.sax.saxutils import escape

__all__ = ["SERVICE_NAME", "LAUNCHD_LABEL", "service_file", "service_text", "start_hint"]

SERVICE_NAME = "capture-watch.service"
LAUNCHD_LABEL = "dev.agent-capture.watch"


def service_file(platform: str, env: Mapping[str, str]) -> Path:
    """Where the service file goes for this user."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    if platform == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    config = env.get("XDG_CONFIG_HOME")
    base = Path(config) if config and os.path.isabs(config) else home / ".config"
    return base / "systemd" / "user" / SERVICE_NAME


def _environment(env: Mapping[str, str]) -> dict[str, str]:
    # the installation the service watches: the one this command was run for
    return {k: env[k] for k in ("CAPTURE_HOME",) if env.get(k)}


def service_text(platform: str, capture: Sequence[str], env: Mapping[str, str]) -> str:
    """The unit (or plist) running `capture watch --foreground --stay`, restarted if it dies."""
    argv = [*capture, "watch", "--foreground", "--stay"]
    extra = _environment(env)
    if platform == "darwin":
        args = "".join(f"\n        <string>{escape(a)}</string>" for a in argv)
        variables = "".join(
            f"\n        <key>{escape(k)}</key>\n        <string>{escape(v)}</string>"
            for k, v in extra.items()
        )
        environment = (
            f"\n    <key>EnvironmentVariables</key>\n    <dict>{variables}\n    </dict>"
            if extra
            else ""
        )
        return f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
    <key>Label</key>
    <string>{LAUNCHD_LABEL}</string>
    <key>ProgramArguments</key>
    <array>{args}
    </array>{environment}
    <key>RunAtLoad</key>
    <true/>
    <key>KeepAlive</key>
    <true/>
</dict>
</plist>
"""
    lines = [
        "[Unit]",
        "Description=agent-capture watcher: checkpoints on time for terminal agents",
        "",
        "[Service]",
        f"ExecStart={shlex.join(argv)}",
        *(f"Environment={shlex.quote(f'{k}={v}')}" for k, v in extra.items()),
        "Restart=on-failure",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ]
    return "\n".join(lines)


def start_hint(platform: str, path: Path, installing: bool) -> str:
    """The command that starts (or stops) the service now: left to the user, who may not want
    it running in this very session."""
    if platform == "darwin":
        verb = "load" if installing else "unload"
        return f"launchctl {verb} {shlex.quote(str(path))}"
    if installing:
        return f"systemctl --user daemon-reload && systemctl --user enable --now {SERVICE_NAME}"
    return f"systemctl --user disable --now {SERVICE_NAME}"
