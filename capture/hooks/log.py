"""The hook log: one line per thing a hook call could not use. Hooks never fail the agent, so
this file is where their problems show (`capture doctor` names its directory)."""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["LOG_NAME", "MAX_LOG_BYTES", "format_line", "log_line"]

LOG_NAME = "hooks.log"
MAX_LOG_BYTES = 2 * 1024 * 1024


def log_line(log_dir: Path, agent: str, event: str | None, message: str) -> None:
    """Append one line; rotate to hooks.log.1 beyond MAX_LOG_BYTES. Never raises: text UTF-8
    cannot hold (a lone surrogate from a payload's path or an argument) is written escaped."""
    try:
        line = format_line(time.localtime(), agent, event, message)
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / LOG_NAME
        try:
            if path.stat().st_size > MAX_LOG_BYTES:
                os.replace(path, log_dir / (LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        with path.open("a", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(line)
    except Exception:  # noqa: BLE001 - the log is where problems go; it never adds one
        pass


def format_line(when: time.struct_time, agent: str, event: str | None, message: str) -> str:
    """One log line: whitespace folded, long messages cut, every character UTF-8 can write
    (anything else escaped, so the writer never fails on what a payload carried)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", when)
    text = " ".join(message.split())  # one line, whatever the message holds
    if len(text) > 500:
        text = text[:497] + "..."
    line = f"{stamp} {agent} {event or '-'}: {text}\n"
    return line.encode("utf-8", "backslashreplace").decode("utf-8")
