"""The hook log: one line per thing a hook call could not use. Hooks never fail the agent, so
this file is where their problems show (`capture doctor` names its directory)."""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["LOG_NAME", "MAX_LOG_BYTES", "log_line"]

LOG_NAME = "hooks.log"
MAX_LOG_BYTES = 2 * 1024 * 1024


def log_line(log_dir: Path, agent: str, event: str | None, message: str) -> None:
    """Append one line; rotate to hooks.log.1 beyond MAX_LOG_BYTES. Never raises."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime())
    text = " ".join(message.split())  # one line, whatever the message holds
    if len(text) > 500:
        text = text[:497] + "..."
    line = f"{stamp} {agent} {event or '-'}: {text}\n"
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        path = log_dir / LOG_NAME
        try:
            if path.stat().st_size > MAX_LOG_BYTES:
                os.replace(path, log_dir / (LOG_NAME + ".1"))
        except FileNotFoundError:
            pass
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        pass
