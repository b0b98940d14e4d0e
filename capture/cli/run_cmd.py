"""`capture run [--name N] [--junit PATH] -- CMD...`: run a test command transparently and
record it. The command runs first; recording comes after, and whatever goes wrong while
recording is one warning line, never a changed exit code."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capture.errors import CaptureError, InputError
from capture.files import find_workspace
from capture.paths import resolve_paths
from capture.runner import Finished, exit_like, run_command
from capture.running import mark_running, unmark

if TYPE_CHECKING:
    import argparse

#: The pytest plugin, when it runs under `capture run`, hands its results over in this file
#: instead of writing a run of its own.
RESULTS_ENV = "CAPTURE_RUN_RESULTS"


def configure(parser: argparse.ArgumentParser) -> None:
    import argparse

    parser.usage = "capture run [--name NAME] [--junit PATH] [--workspace DIR] -- CMD [ARGS...]"
    parser.epilog = (
        "Output, exit code and signals pass through unchanged. Results come from the pytest "
        "plugin when it ran, else from JUnit XML reports the command wrote (--junit, report "
        "files named on the command line, the usual report paths), else from the runner's "
        "summary line."
    )
    parser.add_argument("--name", help="a label for this run (e.g. unit, e2e)")
    parser.add_argument(
        "--junit",
        action="append",
        default=[],
        metavar="PATH",
        help="a JUnit XML report the command writes (repeatable)",
    )
    parser.add_argument("--workspace", help="workspace root (default: the enclosing git tree)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")


_VALUED = {"--name": "name", "--junit": "junit", "--workspace": "workspace"}


def quick_args(argv: list[str]) -> Any:
    """The arguments of `capture run` read without argparse, for the common forms
    (`--name N`, `--name=N`, `--junit P`..., `--workspace D`, then `--` or the command);
    None for anything else (help, an unknown option, no command), which argparse then reads
    and reports."""
    from types import SimpleNamespace

    args = SimpleNamespace(name=None, junit=[], workspace=None, command=[], debug=False, _run=run)
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            args.command = argv[i + 1 :]
            break
        if not token.startswith("-"):
            args.command = argv[i:]
            break
        option, eq, value = token.partition("=")
        if option not in _VALUED:
            return None
        if not eq:
            i += 1
            if i >= len(argv):
                return None
            value = argv[i]
        if option == "--junit":
            args.junit.append(value)
        else:
            setattr(args, _VALUED[option], value)
        i += 1
    return args if args.command else None


def _warn(message: str) -> None:
    try:
        sys.stderr.write(f"capture: warning: {message}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def run(args: argparse.Namespace) -> int:
    argv = list(args.command)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise InputError("no command given: capture run -- CMD [ARGS...]")
    cwd = os.getcwd()
    results_file = os.path.join(
        os.environ.get("TMPDIR") or "/tmp", f"capture-run-{os.getpid()}-{os.urandom(4).hex()}"
    )
    env = dict(os.environ)
    env[RESULTS_ENV] = results_file
    workspace = Path(args.workspace).resolve() if args.workspace else find_workspace(Path(cwd))
    marker = mark_running(resolve_paths().state_dir, str(workspace))
    try:
        finished = run_command(argv, env)
    except FileNotFoundError:
        print(f"capture: error: {argv[0]}: command not found", file=sys.stderr)
        return 127
    except PermissionError:
        print(f"capture: error: {argv[0]}: permission denied", file=sys.stderr)
        return 126
    finally:
        unmark(marker)
    try:
        _record(args, argv, cwd, workspace, finished, results_file)
    except CaptureError as exc:
        _warn(f"this run was not recorded: {exc}")
    except Exception as exc:  # noqa: BLE001 - the command's result must come back regardless
        if getattr(args, "debug", False):
            raise
        _warn(f"this run was not recorded: {type(exc).__name__}: {exc}")
    finally:
        with contextlib.suppress(OSError):
            os.unlink(results_file)
    exit_like(finished)


def _record(
    args: argparse.Namespace,
    argv: list[str],
    cwd: str,
    workspace: Path,
    finished: Finished,
    results_file: str,
) -> None:
    from capture.config import load_config
    from capture.model import TestRunInput
    from capture.recorder import record_test_run
    from capture.reports import DEFAULT_REPORT_GLOBS, find_reports, read_reports, reports_named_in
    from capture.runresults import choose_results, decode_sessions, fill_run
    from capture.store import Store

    config = load_config()
    sessions = []
    try:
        with open(results_file, encoding="utf-8") as fh:
            sessions = decode_sessions(fh.read())
    except FileNotFoundError:
        pass
    junit = None
    report_paths: list[str] = []
    if not sessions:
        globs = config.junit_reports or DEFAULT_REPORT_GLOBS
        named = [*args.junit, *reports_named_in(argv, dict(os.environ))]
        roots = list(dict.fromkeys([Path(cwd), workspace]))
        found = find_reports(roots, globs, named, finished.started_at)
        explicit = [(Path(cwd) / p).resolve() for p in args.junit]
        read = read_reports(found, strict=explicit)
        for warning in read.warnings:
            _warn(f"{warning}; its results were not read")
        for path in explicit:
            if path not in found:
                _warn(f"--junit {path}: this run did not write it")
        junit = read.report
        report_paths = [_display(p, workspace) for p in read.paths]
    summary = None
    if not sessions and junit is None and finished.output.strip():
        from capture.summaries import parse_summary

        summary = parse_summary(finished.output.decode("utf-8", "replace"))
    results = choose_results(
        sessions=sessions, junit=junit, report_paths=report_paths, summary=summary
    )
    run = TestRunInput(
        command=shlex.join(argv),
        source="wrapper",
        started_at=finished.started_at,
        workspace=str(workspace),
        name=args.name,
        cwd=cwd,
        duration_s=round(finished.duration_s, 6),
        exit_code=finished.exit_code,
    )
    fill_run(run, results)
    with Store.open(config.paths.db) as store:
        record_test_run(
            store,
            run,
            now=finished.started_at + finished.duration_s,
            late_seconds=config.late.seconds,
        )


def _display(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)
