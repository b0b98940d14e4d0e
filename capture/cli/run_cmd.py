"""`capture run [--name N] [--junit PATH] -- CMD...`: run a test command transparently and
record it. The command runs first; recording comes after, and whatever goes wrong while
recording is one warning line, never a changed exit code.

A run with nothing to read but the command's output (no pytest plugin results, no JUnit
report) is queued (`capture.testruns.sources.handoff`) and recorded by a detached process, so the
exit status comes back without waiting for the store; readers apply the queue before they read. Runs
with results to read are recorded here, where a problem with a report can still be said.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

from capture.dirs import capture_dirs
from capture.errors import CaptureError, InputError
from capture.files import find_workspace
from capture.testruns.sources.in_progress import mark_running, unmark
from capture.testruns.sources.passthrough import exit_like, run_command

# Not `from typing import ...` nor dataclasses: `capture run` pays for every import made here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from typing import Any

    from capture.testruns.sources.passthrough import Finished

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
    marker = mark_running(Path(capture_dirs(os.environ)[2]), str(workspace))
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
    done = _Done(args, argv, cwd, workspace, finished, results_file)
    try:
        if not _queue(done):
            _record(done)
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


def _report_globs() -> tuple[str, ...]:
    from capture.testruns.junit_paths import DEFAULT_REPORT_GLOBS

    # The configuration (and what it imports) is read only when there is one to read.
    configured = os.environ.get("CAPTURE_JUNIT_REPORTS") or os.path.exists(
        os.path.join(capture_dirs(os.environ)[1], "config.toml")
    )
    if configured:
        from capture.config import load_config

        return load_config().junit_reports or DEFAULT_REPORT_GLOBS
    return DEFAULT_REPORT_GLOBS


class _Done:
    """A command that has run, with what is needed to record it."""

    __slots__ = ("args", "argv", "cwd", "workspace", "finished", "results_file")

    def __init__(
        self,
        args: argparse.Namespace,
        argv: list[str],
        cwd: str,
        workspace: Path,
        finished: Finished,
        results_file: str,
    ) -> None:
        self.args = args
        self.argv = argv
        self.cwd = cwd
        self.workspace = workspace
        self.finished = finished
        self.results_file = results_file

    def written_reports(self) -> list[Path]:
        from capture.testruns.junit_paths import find_reports, reports_named_in

        named = [*self.args.junit, *reports_named_in(self.argv, dict(os.environ))]
        roots = list(dict.fromkeys([Path(self.cwd), self.workspace]))
        return find_reports(roots, _report_globs(), named, self.finished.started_at)

    def fields(self) -> dict[str, Any]:
        """The run as `encode_run` and `wrapped_run` take it."""
        return {
            "cwd": self.cwd,
            "workspace": str(self.workspace),
            "name": self.args.name,
            "started_at": self.finished.started_at,
            "duration_s": self.finished.duration_s,
            "exit_code": self.finished.exit_code,
        }


def _queue(done: _Done) -> bool:
    """Queue the run when it has no results to read here; False when it must be recorded
    here (results to read, or a store the queue cannot take: first run, unwritable)."""
    if done.args.junit or os.path.exists(done.results_file) or done.written_reports():
        return False
    try:  # what SQLite cannot store (undecodable bytes in a path) gets its warning here
        "".join([*done.argv, done.cwd, str(done.workspace)]).encode("utf-8")
    except UnicodeEncodeError:
        return False
    from capture.cli.hook_cmd import drain_queue
    from capture.hooks import inbox
    from capture.testruns.sources.handoff import RUN_AGENT, RUN_EVENT, encode_run

    raw = encode_run(argv=done.argv, output=done.finished.output, **done.fields())
    db = inbox.db_path(os.environ)
    # A locked store is waited for briefly: recording here then waits its own while.
    if not inbox.enqueue(db, RUN_AGENT, RUN_EVENT, raw, done.cwd, "", timeout=2.0):
        return False
    if not inbox.detach(drain_queue):
        drain_queue()  # queued already: whatever fails here, the next reader applies it
    return True


def _record(done: _Done) -> None:
    from capture.config import load_config
    from capture.store.database import Store
    from capture.testruns.junit_files import read_reports
    from capture.testruns.results import choose_results, decode_sessions
    from capture.testruns.sources.wrapper import record_wrapped, wrapped_run

    config = load_config()
    finished = done.finished
    sessions = []
    try:
        with open(done.results_file, encoding="utf-8") as fh:
            sessions = decode_sessions(fh.read())
    except FileNotFoundError:
        pass
    junit = None
    report_paths: list[str] = []
    if not sessions:
        found = done.written_reports()
        explicit = [(Path(done.cwd) / p).resolve() for p in done.args.junit]
        read = read_reports(found, strict=explicit)
        for warning in read.warnings:
            _warn(f"{warning}; its results were not read")
        for path in explicit:
            if path not in found:
                _warn(f"--junit {path}: this run did not write it")
        junit = read.report
        report_paths = [_display(p, done.workspace) for p in read.paths]
    summary = None
    if not sessions and junit is None and finished.output.strip():
        from capture.testruns.summaries import parse_summary

        summary = parse_summary(finished.output.decode("utf-8", "replace"))
    results = choose_results(
        sessions=sessions, junit=junit, report_paths=report_paths, summary=summary
    )
    run = wrapped_run(done.argv, **done.fields())
    with Store.open(config.paths.db) as store:
        record_wrapped(store, config, run, results)


def _display(path: Path, workspace: Path) -> str:
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        return str(path)
