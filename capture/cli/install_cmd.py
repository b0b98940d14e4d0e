"""`capture install <agent>` and `capture uninstall <agent>`: capture's hook entries merged into
(or taken out of) the agent's settings, the user's own entries and formatting kept, a backup
written before any change, `--dry-run` printing the diff instead."""

from __future__ import annotations

import argparse
import difflib
import os
import shlex
import shutil
import sys
from pathlib import Path

from capture.errors import InputError
from capture.files import find_workspace
from capture.install.settings import add_notify, install_text, remove_notify, uninstall_text
from capture.install.targets import TARGETS, Target

__all__ = ["BACKUP_SUFFIX", "backup_path", "configure", "ensure_launcher", "hook_argv", "run"]

BACKUP_SUFFIX = ".capture-backup"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "agent",
        choices=[*sorted(TARGETS), "git", "watcher"],
        help="the agent to wire up (git: this repository's post-commit hook, for late signals; "
        "watcher: `capture watch` as a user service, always on)",
    )
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument(
        "--local",
        dest="scope",
        action="store_const",
        const="local",
        help="this project's personal settings, not committed (claude-code: "
        ".claude/settings.local.json; the default where the agent has such a file)",
    )
    scope.add_argument(
        "--shared",
        "--project",
        dest="scope",
        action="store_const",
        const="shared",
        help="this project's settings the team commits (claude-code: .claude/settings.json; "
        "the default for agents with no personal project file)",
    )
    scope.add_argument(
        "--user",
        dest="scope",
        action="store_const",
        const="user",
        help="your user settings (every project)",
    )
    parser.add_argument("--dry-run", action="store_true", help="print the diff; change nothing")
    parser.add_argument(
        "--otel",
        action="store_true",
        help="the agent's OpenTelemetry settings instead of its hooks: send its telemetry to "
        "capture otlp (claude-code, codex, gemini; always their user settings)",
    )
    parser.set_defaults(scope=None)


def hook_argv(agent: str) -> list[str]:
    """The command the agent runs: `capture hook <agent>`, by name. The per-user launcher (or the
    user's own installed `capture`) answers the name on each machine, so the settings a team
    commits hold no path of this one."""
    return ["capture", "hook", agent]


def _capture_argv() -> list[str]:
    """This very `capture`, absolute: for the git hook, which lives in .git (never committed)."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name == "capture" and script.is_file():
        return [str(script.resolve())]
    beside = Path(sys.executable).parent / "capture"
    found = shutil.which("capture")
    if found and Path(found).resolve() == beside.resolve() and beside.is_file():
        return [str(beside)]
    return [sys.executable, "-m", "capture"]


def _import_root() -> str | None:
    """The folder to put on PYTHONPATH for this interpreter to import capture, None when its
    own site-packages hold it."""
    import site

    import capture

    root = Path(capture.__file__).resolve().parent.parent
    installed = {Path(p).resolve() for p in (*site.getsitepackages(), site.getusersitepackages())}
    return None if root in installed else str(root)


def ensure_launcher() -> tuple[Path, bool]:
    """Write (or refresh) the per-user launcher; leave a `capture` the user installed there
    alone. Returns its path and whether it is capture's launcher."""
    from capture.install.launcher import is_launcher, launcher_dir, launcher_text

    path = Path(launcher_dir(os.environ)) / "capture"
    try:
        current = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        current = None
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc})") from None
    if current is not None and not is_launcher(current):
        return path, False
    text = launcher_text(sys.executable, _import_root())
    if current != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(path.name + ".capture-tmp")
        temp.write_text(text, encoding="utf-8")
        temp.chmod(0o755)
        os.replace(temp, path)
    return path, True


def _launcher_note(path: Path, ours: bool) -> None:
    if ours:
        print(f"capture: launcher {path} runs {sys.executable}")
    on_path = shutil.which("capture")
    if on_path is None or Path(on_path).resolve() != path.resolve():
        folders = os.environ.get("PATH", "").split(os.pathsep)
        if str(path.parent) not in folders:
            print(f"note: {path.parent} is not on PATH; add it so the agent finds `capture`")


def _scope(target: Target, asked: str | None) -> str:
    if asked is None:
        return "local" if target.local_path else "shared"
    if asked == "local" and not target.local_path:
        raise InputError(
            f"capture install {target.agent}: the agent has no personal project settings file; "
            "use --shared or --user"
        )
    return asked


def _settings_path(target: Target, scope: str) -> Path:
    if scope == "user":
        return Path(os.path.expanduser(target.user_path))
    relative = target.local_path if scope == "local" and target.local_path else target.project_path
    return find_workspace(Path.cwd()) / relative


def backup_path(path: Path) -> Path:
    """Where the settings file's pre-install copy goes: capture's state folder, never beside the
    file (a repository would show it as new)."""
    import hashlib

    from capture.paths import resolve_paths

    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return resolve_paths().state_dir / "install-backups" / f"{key}-{path.name}"


def _ignore_locally(path: Path) -> None:
    """A personal settings file stays out of `git status`: listed in the repository's own
    .git/info/exclude (as the agent itself does), unless git already ignores it."""
    import subprocess

    root = find_workspace(path.parent)
    git = ["git", "-C", str(root)]
    try:
        ignored = subprocess.run([*git, "check-ignore", "-q", str(path)], check=False)
        if ignored.returncode != 1:  # 0: ignored already; 128: not a repository, or no git
            return
        found = subprocess.run(
            [*git, "rev-parse", "--git-path", "info/exclude"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return
    if found.returncode != 0 or not found.stdout.strip():
        return
    exclude = root / found.stdout.strip()
    rel = "/" + path.resolve().relative_to(root.resolve()).as_posix()
    exclude.parent.mkdir(parents=True, exist_ok=True)
    old = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    joiner = "" if not old or old.endswith("\n") else "\n"
    exclude.write_text(f"{old}{joiner}{rel}\n", encoding="utf-8")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({exc})") from None


def _same_json(a: str, b: str) -> bool:
    import json

    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


def _diff(path: Path, old: str | None, new: str | None) -> str:
    return "".join(
        difflib.unified_diff(
            (old or "").splitlines(keepends=True),
            (new or "").splitlines(keepends=True),
            fromfile=str(path) if old is not None else "/dev/null",
            tofile=str(path) if new is not None else "/dev/null",
        )
    )


def _apply(path: Path, old: str | None, new: str | None, dry_run: bool) -> bool:
    """Write `new` (None: delete the file) after backing up `old`. False when nothing changes."""
    if new == old:
        return False
    if dry_run:
        sys.stdout.write(_diff(path, old, new))
        return True
    if old is not None:
        backup = backup_path(path)
        backup.parent.mkdir(parents=True, exist_ok=True)
        backup.write_text(old, encoding="utf-8")
    if new is None:
        path.unlink()
        return True
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(path.name + ".capture-tmp")
    temp.write_text(new, encoding="utf-8")
    os.replace(temp, path)
    return True


def _git_hooks_dir() -> Path:
    """This repository's hooks folder (core.hooksPath when set)."""
    import subprocess

    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=False
    )
    if top.returncode != 0 or not top.stdout.strip():
        raise InputError("capture install git: not inside a git work tree")
    root = Path(top.stdout.strip())
    # From the top level: a relative core.hooksPath is relative to it.
    done = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--git-path", "hooks"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise InputError("capture install git: cannot find the repository's hooks folder")
    return (root / done.stdout.strip()).resolve()


def _run_git(args: argparse.Namespace) -> int:
    """The post-commit hook that runs the late pass: our block merged into the user's hook."""
    from capture.install.git_hook import HOOK_NAME, install_hook_text, uninstall_hook_text

    if args.scope == "user":
        raise InputError("capture install git: a repository's hook only (no --user)")
    path = _git_hooks_dir() / HOOK_NAME
    old = _read(path)
    argv = _capture_argv()
    new: str | None
    if args.command == "install":
        try:
            new = install_hook_text(old, shlex.join(argv))
        except ValueError as exc:
            raise InputError(f"{path}: {exc}") from None
    else:
        new = None if old is None else uninstall_hook_text(old)
    changed = _apply(path, old, new, args.dry_run)
    if changed and not args.dry_run and new is not None:
        path.chmod(path.stat().st_mode | 0o111)
    if args.dry_run:
        return 0
    if not changed:
        state = "already installed in" if args.command == "install" else "not installed in"
        print(f"git: post-commit hook {state} {path}; nothing to change")
    else:
        verb = "installed in" if args.command == "install" else "removed from"
        print(f"git: post-commit hook {verb} {path}")
    return 0


def _run_watcher(args: argparse.Namespace) -> int:
    """`capture watch` as a user service (systemd on Linux, launchd on macOS)."""
    from capture.watch.service import service_file, service_text, start_hint

    args.scope = "user"  # a service is the user's, whatever the scope asked
    installing = args.command == "install"
    path = service_file(sys.platform, os.environ)
    old = _read(path)
    new = service_text(sys.platform, _capture_argv(), os.environ) if installing else None
    if args.dry_run:
        if new != old:
            sys.stdout.write(_diff(path, old, new))
        return 0
    if new == old:
        state = "already installed at" if installing else "not installed at"
        print(f"watcher: service {state} {path}; nothing to change")
        return 0
    # our own file, whole: no backup (a stray copy beside a unit is noise to its manager)
    if new is None:
        path.unlink()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(new, encoding="utf-8")
    hint = start_hint(sys.platform, path, installing)
    print(f"watcher: service {'written to' if installing else 'removed from'} {path}")
    print(f"{'start' if installing else 'stop'} it with: {hint}")
    return 0


def run(args: argparse.Namespace) -> int:
    if getattr(args, "otel", False):
        return _run_otel(args)
    if args.agent == "git":
        return _run_git(args)
    if args.agent == "watcher":
        return _run_watcher(args)
    target = TARGETS[args.agent]
    installing = args.command == "install"
    scope = _scope(target, args.scope)
    path = _settings_path(target, scope)
    old = _read(path)
    argv = hook_argv(target.agent)
    command = shlex.join(argv)
    new: str | None
    if installing:
        new = install_text(old, target, command, str(path))
    elif old is None:
        new = None
    else:
        text, bare = uninstall_text(old, target, str(path))
        backup = backup_path(path)
        legacy = path.with_name(path.name + BACKUP_SUFFIX)  # where earlier releases kept it
        saved = _read(backup) if backup.exists() else (_read(legacy) if legacy.exists() else None)
        if saved is not None and _same_json(saved, text):
            # the file as it was before install, to the byte (an empty "hooks" or event list of
            # the user's own is otherwise taken for one install made)
            new = saved
        elif bare and (target.own_file or saved is None):
            new = None  # a file capture made, with nothing else in it
        else:
            new = text
    changed = _apply(path, old, new, args.dry_run)
    verb = "would change" if args.dry_run else ("installed in" if installing else "removed from")
    if changed and not args.dry_run:
        print(f"{target.agent}: hooks {verb} {path}")
    elif not changed:
        state = "already installed in" if installing else "not installed in"
        print(f"{target.agent}: hooks {state} {path}; nothing to change")
    if target.agent == "codex" and scope == "user":
        _codex_notify(argv, installing, args.dry_run)
    if installing and not args.dry_run:
        if scope == "local" and path.exists():
            _ignore_locally(path)
        _launcher_note(*ensure_launcher())
        for note in target.notes:
            print(f"note: {note}")
    return 0


def _codex_notify(argv: list[str], installing: bool, dry_run: bool) -> None:
    """Codex's turn-complete notify program (user config only; Codex runs one program)."""
    home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
    path = Path(home) / "config.toml"
    old = _read(path)
    new: str | None
    if installing:
        new, note = add_notify(old, argv)
        if note:
            print(f"note: {path}: {note}")
    else:
        new = remove_notify(old) if old is not None else None
    if old is None and not installing:
        return
    if _apply(path, old, new, dry_run) and not dry_run:
        print(f"codex: notify {'set in' if installing else 'removed from'} {path}")


def _run_otel(args: argparse.Namespace) -> int:
    """The agent's telemetry settings, pointed at `capture otlp` (or taken out)."""
    from capture.install.otel import (
        OTEL_PATHS,
        add_codex_otel,
        add_json_otel,
        remove_codex_otel,
        remove_json_otel,
    )

    if args.agent not in OTEL_PATHS:
        supported = ", ".join(sorted(OTEL_PATHS))
        raise InputError(f"--otel: {args.agent} has no telemetry settings to set ({supported})")
    if args.agent == "codex":
        home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
        path = Path(home) / "config.toml"
    else:
        path = Path(os.path.expanduser(OTEL_PATHS[args.agent]))
    installing = args.command == "install"
    old = _read(path)
    new: str | None
    if args.agent == "codex":
        new = (
            add_codex_otel(old) if installing else (None if old is None else remove_codex_otel(old))
        )
    elif installing:
        new = add_json_otel(old, args.agent, str(path))
    else:
        new = None if old is None else remove_json_otel(old, args.agent, str(path))
    if old is None and new is None:
        print(f"{args.agent}: telemetry not set in {path}; nothing to change")
        return 0
    changed = _apply(path, old, new, args.dry_run)
    if args.dry_run:
        return 0
    if not changed:
        state = "already sent to capture otlp by" if installing else "not set in"
        print(f"{args.agent}: telemetry {state} {path}; nothing to change")
    else:
        verb = "sent to capture otlp by" if installing else "settings removed from"
        print(f"{args.agent}: telemetry {verb} {path}")
    if installing and not args.dry_run:
        print("note: run `capture otlp` (or the watcher) to receive it")
    return 0
