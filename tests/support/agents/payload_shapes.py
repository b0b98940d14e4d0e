"""The shapes of the hook payloads the real agents send (the dotted field names per agent,
event and tool), from scripted sessions of the CLIs in a cache: `.ci/agents-newest` compares the
pinned versions' shapes with the newest ones'.

    python -m tests.support.agents.payload_shapes CACHE_DIR OUT.json
    python -m tests.support.agents.payload_shapes --diff OLD.json NEW.json
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["diff", "fields", "shapes"]

SCENARIOS = ("keep_undo", "tests_fail_then_pass", "denied_edit")


def fields(value: Any, prefix: str = "") -> set[str]:
    """Dotted names of every member, lists seen through (`tool_calls[].tool_name`)."""
    found: set[str] = set()
    if isinstance(value, dict):
        for key, item in value.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            found.add(name)
            found |= fields(item, name)
    elif isinstance(value, list):
        for item in value:
            found |= fields(item, prefix + "[]")
    return found


def shapes(cache: Path) -> dict[str, Any]:
    os.environ["CAPTURE_AGENTS_CACHE"] = str(cache.resolve())
    from tests.support.agents.scenario import load
    from tests.support.agents.sessions import AGENTS, Session, cli_version
    from tests.support.hook_support import wait_for_queue

    out: dict[str, Any] = {"versions": {}, "shapes": {}}
    for agent in AGENTS:
        out["versions"][agent] = cli_version(agent)
        seen: dict[str, set[str]] = {}
        for name in SCENARIOS:
            scenario = load(name)
            tmp = tempfile.mkdtemp(prefix="agent-shapes-")
            home = Path(tmp) / "capture-home"
            session = Session(agent, Path(tmp), home, scenario.get("files"))
            session.run(scenario["steps"], scenario["prompt"], deny_edits=name == "denied_edit")
            wait_for_queue(home)
            db = sqlite3.connect(home / "data" / "capture.db")
            for (raw,) in db.execute("SELECT payload FROM events WHERE kind = 'hook'"):
                payload = json.loads(raw)
                event = payload.get("hook_event_name") or payload.get("type") or "?"
                key = f"{event} {payload.get('tool_name') or ''}".strip()
                seen.setdefault(key, set()).update(fields(payload))
            db.close()
            # the agents' own helpers may still be writing there: best effort
            shutil.rmtree(tmp, ignore_errors=True)
        out["shapes"][agent] = {key: sorted(names) for key, names in sorted(seen.items())}
    return out


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines = []
    for agent, versions in new["versions"].items():
        lines.append(f"{agent}: {old['versions'].get(agent)} -> {versions}")
        before, after = old["shapes"].get(agent, {}), new["shapes"].get(agent, {})
        for key in sorted(set(before) | set(after)):
            if key not in after:
                lines.append(f"  - event gone: {key}")
                continue
            if key not in before:
                lines.append(f"  + new event: {key}: {', '.join(after[key])}")
                continue
            gone = sorted(set(before[key]) - set(after[key]))
            added = sorted(set(after[key]) - set(before[key]))
            if gone:
                lines.append(f"  - {key}: {', '.join(gone)}")
            if added:
                lines.append(f"  + {key}: {', '.join(added)}")
    return lines


def main(argv: list[str]) -> int:
    if argv[:1] == ["--diff"]:
        old, new = (json.loads(Path(p).read_text()) for p in argv[1:3])
        print("\n".join(diff(old, new)))
        return 0
    Path(argv[1]).write_text(json.dumps(shapes(Path(argv[0])), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
