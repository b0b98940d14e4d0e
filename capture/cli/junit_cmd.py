"""`capture junit FILE...` records a run from JUnit XML reports; `capture junit --watch`
watches the workspace's report paths and records each new report as it appears."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from capture.cli.context import Context
from capture.errors import InputError
from capture.files import find_workspace


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="*", metavar="FILE", help="JUnit XML report file(s)")
    parser.add_argument(
        "--watch", action="store_true", help="watch the report paths until interrupted"
    )
    parser.add_argument("--workspace", help="workspace root (default: the enclosing git tree)")


def _log(message: str) -> None:
    print(f"capture: {message}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from capture.testruns.junit_files import DEFAULT_REPORT_GLOBS

    ctx = Context()
    cwd = Path.cwd()
    root = Path(args.workspace).resolve() if args.workspace else find_workspace(cwd, cwd)
    if args.files and args.watch:
        raise InputError("give report files or --watch, not both")
    if args.files:
        from capture.testruns.sources.junit_watcher import record_reports

        paths = [Path(f).resolve() for f in args.files]
        missing = [str(p) for p in paths if not p.is_file()]
        if missing:
            raise InputError(f"no such file: {missing[0]}")
        run_id = record_reports(ctx.store, ctx.config, root, paths, log=_log, skip_covered=False)
        if run_id is None:
            raise InputError("no JUnit results in the given file(s)")
        print(run_id)
        return 0
    if not args.watch:
        raise InputError("give report files, or --watch")
    from capture.testruns.sources.junit_watcher import ReportWatcher

    globs = ctx.config.junit_reports or DEFAULT_REPORT_GLOBS
    watcher = ReportWatcher(root, ctx.config, globs, log=_log)
    watcher.start()
    _log(f"watching {root} for JUnit reports ({', '.join(globs)}); Ctrl-C to stop")
    try:
        watcher.run_forever()
    except KeyboardInterrupt:
        pass
    finally:
        watcher.stop()
    return 0
