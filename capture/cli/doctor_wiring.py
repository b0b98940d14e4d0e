"""The "what is wired up" part of `capture doctor`: agent hooks per agent and where, the
`capture` command and its launcher, the git hook, the editors the server saw, the pytest plugin,
sync. Reads the files; `capture.install.wiring` decides what they say."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from capture.cli.context import Context

__all__ = ["print_wiring", "wiring"]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _hooks(workspace: Path) -> list[dict[str, Any]]:
    from capture.install.targets import TARGETS
    from capture.install.wiring import hook_entries

    found = []
    for agent, target in sorted(TARGETS.items()):
        places = [("user", Path(os.path.expanduser(target.user_path)))]
        if target.local_path:
            places.append(("local", workspace / target.local_path))
        places.append(("shared", workspace / target.project_path))
        for scope, path in places:
            entries = hook_entries(_read(path), target)
            if entries is not None:
                found.append(
                    {
                        "agent": agent,
                        "scope": scope,
                        "file": str(path),
                        "events": entries.events,
                        "by_path": entries.by_path,
                    }
                )
    return found


def _command() -> dict[str, Any]:
    from capture.install.launcher import is_launcher, launcher_dir

    launcher = Path(launcher_dir(os.environ)) / "capture"
    text = _read(launcher)
    on_path = shutil.which("capture")
    return {
        "on_path": on_path,
        "launcher": str(launcher) if text is not None else None,
        "launcher_is_ours": text is not None and is_launcher(text),
    }


def _git_hook(workspace: Path) -> bool:
    from capture.install.git_hook import BEGIN

    text = _read(workspace / ".git" / "hooks" / "post-commit")
    return text is not None and BEGIN in text


def _editors(log_dir: Path) -> dict[str, str]:
    from capture.install.wiring import editors_seen

    lines: list[str] = []
    for name in ("server.log.3", "server.log.2", "server.log.1", "server.log"):
        text = _read(log_dir / name)
        if text:
            lines.extend(text.splitlines())
    return editors_seen(lines)


def _pytest_plugin() -> str | None:
    from importlib.metadata import entry_points

    for point in entry_points(group="pytest11"):
        if point.name == "agent_capture":
            return point.value
    return None


def _sync(ctx: Context) -> dict[str, Any]:
    from sync.outbox import Outbox
    from sync.settings import load_settings

    settings = load_settings(ctx.store.conn)
    counts = Outbox(ctx.store.conn).counts()
    return {"enabled": settings.enabled, "url": settings.url, "queued": counts.get("queued", 0)}


def wiring(ctx: Context, with_store: bool) -> dict[str, Any]:
    from capture.files import find_workspace

    workspace = find_workspace(Path.cwd())
    report: dict[str, Any] = {
        "workspace": str(workspace),
        "hooks": _hooks(workspace),
        "command": _command(),
        "git_hook": _git_hook(workspace),
        "editors": _editors(ctx.config.paths.log_dir),
        "pytest_plugin": _pytest_plugin(),
    }
    if with_store:
        try:
            report["sync"] = _sync(ctx)
        except Exception as exc:  # noqa: BLE001 - doctor reports, it does not fail
            report["sync"] = {"error": str(exc)}
    return report


def print_wiring(report: dict[str, Any]) -> None:
    print(f"wired     (for {report['workspace']})")
    hooks = report["hooks"]
    if not hooks:
        print("  hooks     none: `capture install <agent>` (claude-code, cursor, codex, ...)")
    for h in hooks:
        stale = (
            "; names a path of this machine: run `capture install` again" if h["by_path"] else ""
        )
        print(
            f"  hooks     {h['agent']} ({h['scope']}): {h['events']} event(s) in {h['file']}{stale}"
        )
    command = report["command"]
    if command["on_path"]:
        print(f"  capture   on PATH: {command['on_path']}")
    else:
        print("  capture   not on PATH: agents cannot run `capture hook`; see `capture install`")
    if command["launcher"]:
        whose = "capture's launcher" if command["launcher_is_ours"] else "your own install"
        print(f"  launcher  {command['launcher']} ({whose})")
    git = "post-commit installed" if report["git_hook"] else "none (capture install git)"
    print(f"  git hook  {git}")
    editors = report["editors"]
    if editors:
        seen = ", ".join(f"{name} (last {at})" for name, at in sorted(editors.items()))
        print(f"  editors   {seen}")
    else:
        print("  editors   none seen: no editor has started `capture serve` here")
    plugin = report["pytest_plugin"]
    print(
        f"  pytest    plugin registered ({plugin})"
        if plugin
        else "  pytest    plugin not registered: install agent-capture into the test environment"
    )
    sync = report.get("sync")
    if sync is None:
        return
    if "error" in sync:
        print(f"  sync      unknown: {sync['error']}")
    elif sync["enabled"]:
        print(f"  sync      on, to {sync['url']}; {sync['queued']} episode(s) queued")
    else:
        print("  sync      off (nothing leaves this machine)")
