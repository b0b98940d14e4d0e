"""The `capture` command: a thin shell over the library.

Subcommands live in modules of their own and are imported only when run, so that
`capture hook` pays for nothing but the hook path. The top of the layering: the only part of
`capture` that may import `server` (for `capture serve`) and `sync` (for `capture sync` and
`capture collector`), and that nothing else in the core imports.
"""

from __future__ import annotations

import sys

# Not `from typing import ...`: `capture hook` pays for every import made here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

__all__ = ["COMMANDS", "main"]

#: name -> (module, one-line help). Each module defines configure(parser) and run(args) -> int.
COMMANDS: dict[str, tuple[str, str]] = {
    "propose": ("capture.cli.propose_cmd", "record one agent proposal given as JSON on stdin"),
    "observe": ("capture.cli.observe_cmd", "evaluate due checkpoints against files on disk"),
    "episodes": ("capture.cli.episodes_cmd", "list recorded episodes"),
    "show": ("capture.cli.show_cmd", "show one episode: its proposals, checkpoints and runs"),
    "doctor": ("capture.cli.doctor_cmd", "paths, database health, versions, what is wired up"),
    "hook": ("capture.cli.hook_cmd", "record one agent hook payload (run by the agent)"),
    "install": ("capture.cli.install_cmd", "wire an agent's hooks to capture"),
    "uninstall": ("capture.cli.install_cmd", "remove capture's hooks from an agent's settings"),
    "import": ("capture.cli.import_cmd", "backfill history from agent transcripts or git"),
    "run": ("capture.cli.run_cmd", "run a test command unchanged and record its results"),
    "junit": ("capture.cli.junit_cmd", "record JUnit XML reports: given files, or --watch"),
    "report": ("capture.cli.report_cmd", "personal statistics: outcomes, retention, tests"),
    "collector": ("capture.cli.collector_cmd", "run the team collector and manage its tokens"),
    "serve": ("capture.cli.serve_cmd", "run the LSP sidecar an editor starts (stdio, or --tcp)"),
    "demo": ("capture.cli.demo_cmd", "run a scripted editor session against a real server"),
    "sync": ("capture.cli.sync_cmd", "opt-in upload of anonymized episodes to a team collector"),
    "export": ("capture.cli.export_cmd", "training data: TRL SFT/DPO/KTO, OpenAI, episode JSONL"),
    "otlp": ("capture.cli.otlp_cmd", "receive the agents' OpenTelemetry (OTLP/HTTP) decisions"),
    "watch": (
        "capture.cli.watch_cmd",
        "follow pending files for terminal agents (the hook starts it)",
    ),
}


def _selected(argv: Sequence[str]) -> str | None:
    for token in argv:
        if token in COMMANDS:
            return token
        if not token.startswith("-"):
            return None
    return None


def build_parser(selected: str | None) -> argparse.ArgumentParser:
    import argparse
    import importlib

    from capture import __version__

    parser = argparse.ArgumentParser(
        prog="capture",
        description="Record what coding agents proposed, what became of it, and the tests "
        "that followed.",
    )
    parser.add_argument("--version", action="version", version=f"agent-capture {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # With a command selected, only its parser is built: each costs milliseconds, and
    # `capture hook` and `capture run` are on paths where those count.
    names = [selected] if selected is not None else list(COMMANDS)
    for name in names:
        module_name, help_text = COMMANDS[name]
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        if name == selected:
            module = importlib.import_module(module_name)
            module.configure(command_parser)
            command_parser.set_defaults(_run=module.run)
    return parser


def _damage_hint(exc: BaseException) -> str:
    """For an error that says the database file is damaged: the way forward."""
    from capture.store.repair import DAMAGE_HINT, is_damage

    return f"; {DAMAGE_HINT}" if is_damage(str(exc)) else ""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["hook"]:
        # The hook path runs once per agent tool call: no argparse, no error machinery.
        from capture.cli.hook_cmd import main_fast

        code = main_fast(argv)
        if code is not None:
            return code
    from capture.errors import CaptureError

    args: Any = None
    if argv[:1] == ["run"]:
        # `capture run` wraps every test command: it reads its few options itself rather
        # than pay for argparse (help and mistakes still go through argparse below).
        from capture.cli.run_cmd import quick_args

        args = quick_args(argv[1:])
    if args is None:
        parser = build_parser(_selected(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "_run", None):
            parser.print_help()
            return 0
    try:
        return int(args._run(args) or 0)
    except CaptureError as exc:
        if args.debug:
            raise
        print(f"capture: error: {exc}{_damage_hint(exc)}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - one line for the user, the rest with --debug
        if args.debug:
            raise
        if type(exc).__name__ == "DatabaseError" and _damage_hint(exc):
            print(
                f"capture: error: the database is damaged ({exc}){_damage_hint(exc)}",
                file=sys.stderr,
            )
            return 1
        print(
            f"capture: internal error: {type(exc).__name__}: {exc} (rerun with --debug)",
            file=sys.stderr,
        )
        return 1
