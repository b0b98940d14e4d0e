"""What the agent saw, on the real transcripts of the corpus (tests/fixtures/real, see its
PROVENANCE.md), imported through the real CLI.

The figures are computed here from the raw records and the database's own tables (texts
decompressed here), not through capture's readers: each edit's new identifiers must mostly
appear in what the recorded trajectory held before the edit, or in the file before it; every
episode names its task and where it came from, never a harness message or a "continue"; a
second import adds no text; the trajectory stays near the transcripts' compressed size."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
from pathlib import Path
from typing import Any

import zstandard

from tests.conftest import RunCapture
from tests.support.hook_support import rows

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
#: the harness's own user-role texts, as a reader of the transcripts would spot them
HARNESS = re.compile(r"^\s*(<[a-z_-]+>|Caveat: |This session is being continued|\[Request interr)")
GO_ON = {"continue", "go on", "yes", "ok", "proceed", "keep going", "continue implementation"}

EDITS = ("Edit", "Write", "MultiEdit")
CODEX_ROOT = "/Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2"
CODEX_NAME = "rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"
#: (file, the project root its records name, whether the file is a JSON array of records, the
#: importer)
TRANSCRIPTS = (
    (
        "claude-code/transcript-1x/chat.json",
        "/home/connerohnesorge/Documents/001Repos/templar",
        1,
        "claude-code",
    ),
    (
        "claude-code/transcript-1.0.70/chat.json",
        "/Users/kesslerio/GDrive/Projects/attio-mcp-server",
        1,
        "claude-code",
    ),
    (
        "claude-code/transcript-1.0.70-sidechain/chat.jsonl",
        "/Users/kesslerio/GDrive/Projects/attio-mcp-server",
        0,
        "claude-code",
    ),
    (
        "claude-code/transcript-2x/session-01.jsonl",
        "/tmp/agent-history-real-agent/claude/workspace",
        0,
        "claude-code",
    ),
    (f"codex/rollout-0.40/{CODEX_NAME}", CODEX_ROOT, 0, "codex"),
    (f"codex/rollout-0.40-whole/{CODEX_NAME}", CODEX_ROOT, 0, "codex"),
    (
        "codex/rollout-0.135/session-01.jsonl",
        "/tmp/agent-history-real-agent/codex/workspace",
        0,
        "codex",
    ),
)


def _records(name: str, array: int, root: str, ws: Path) -> list[dict[str, Any]]:
    text = (REAL / name).read_text().replace(root, str(ws))
    if array:
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _import_all(tmp_path: Path, run_capture: RunCapture, tag: str) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for index, (name, root, array, importer) in enumerate(TRANSCRIPTS):
        ws = tmp_path / "projects" / Path(root).name
        if not ws.exists():
            ws.mkdir(parents=True)
            subprocess.run(["git", "init", "-q", str(ws)], check=True)
        found = _records(name, array, root, ws.resolve())
        records.extend(found)
        path = tmp_path / f"history-{tag}" / importer / f"{index}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in found))
        result = run_capture("import", importer, str(path), cwd=ws)
        assert result.returncode == 0, result.stderr
    return records


def _edits(records: list[dict[str, Any]]) -> dict[str, str]:
    """Each edit's call id and the new text it wrote, read from the raw records: Claude Code's
    Edit, Write and MultiEdit calls; Codex's patches (the lines a patch adds)."""
    found: dict[str, str] = {}
    for r in records:
        if r.get("type") == "assistant":
            for b in r["message"]["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_use" and b["name"] in EDITS:
                    found[b["id"]] = _new_texts(b)
        payload = r.get("payload")
        if (
            r.get("type") == "response_item"
            and isinstance(payload, dict)
            and payload.get("type") == "function_call"
            and "*** Begin Patch" in str(payload.get("arguments"))
        ):
            command = json.loads(payload["arguments"])["command"]
            patch = command[-1] if isinstance(command, list) else command
            added = [line[1:] for line in patch.splitlines() if line.startswith("+")]
            found[payload["call_id"]] = "\n".join(added)
    return found


def _texts(home: Path) -> dict[str, str]:
    out = {}
    unzstd = zstandard.ZstdDecompressor()
    for row in rows(home, "SELECT hash, codec, body FROM texts"):
        body = bytes(row["body"])
        out[row["hash"]] = (unzstd.decompress(body) if row["codec"] == "zstd" else body).decode()
    return out


def _new_texts(block: dict[str, Any]) -> str:
    given = block["input"]  # a call the agent got wrong may lack its fields
    if block["name"] == "Write":
        return str(given.get("content", ""))
    if block["name"] == "MultiEdit":
        return "\n".join(e.get("new_string", "") for e in given.get("edits", []))
    return str(given.get("new_string", ""))


def test_each_edit_is_grounded_in_what_came_before_it(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    records = _import_all(tmp_path, run_capture, "one")
    edits = _edits(records)
    assert edits
    texts = _texts(capture_home)
    steps = rows(capture_home, "SELECT * FROM steps ORDER BY session_id, at, id")
    before = {
        r["tool_use_id"]: texts[r["text_hash"]]
        for r in rows(
            capture_home,
            "SELECT p.tool_use_id, b.text_hash FROM proposal_before b "
            "JOIN proposals p ON p.id = b.proposal_id",
        )
    }
    shares = []
    for call_id, new_text in edits.items():
        (own,) = [s for s in steps if s["call_id"] == call_id]
        seen = [
            texts.get(s[column] or "", "")
            for s in steps
            if s["session_id"] == own["session_id"] and (s["at"], s["id"]) < (own["at"], own["id"])
            for column in ("text_hash", "input_hash")
        ]
        known = set(IDENT.findall("\n".join([*seen, before.get(call_id, "")])))
        wanted = set(IDENT.findall(new_text))
        if wanted:
            shares.append(len(wanted & known) / len(wanted))
    # a MultiEdit of the side chain came with no input, a Codex patch only removed lines
    assert len(shares) >= len(edits) - 2
    assert statistics.median(shares) >= 0.95, shares


def test_every_episode_names_its_task_and_no_harness_message_is_one(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    records = _import_all(tmp_path, run_capture, "one")
    episodes = rows(capture_home, "SELECT id, prompt, task, task_source FROM episodes")
    assert episodes
    for episode in episodes:
        assert episode["task"] and episode["task_source"], dict(episode)
        assert not HARNESS.match(episode["task"])
        assert episode["task"].strip().lower() not in GO_ON
        assert episode["prompt"] is None or not HARNESS.match(episode["prompt"])
    # the side chain's task is the prompt its subagent was started with (its first record)
    first = next(r for r in records if r.get("isSidechain") and not r.get("parentUuid"))
    assert first["message"]["content"] in {e["task"] for e in episodes}
    # the harness's texts are kept in the trajectory, marked
    marks = rows(capture_home, "SELECT harness FROM steps WHERE harness IS NOT NULL")
    typed_marks = [
        r
        for r in records
        if r.get("type") == "user"
        and isinstance(r["message"].get("content"), (str, list))
        and HARNESS.match(
            r["message"]["content"]
            if isinstance(r["message"]["content"], str)
            else " ".join(b.get("text", "") for b in r["message"]["content"] if "text" in b)
        )
    ]
    assert len(marks) >= len(typed_marks) > 0


def test_importing_again_adds_no_text_and_the_store_stays_small(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    _import_all(tmp_path, run_capture, "one")
    counted = rows(capture_home, "SELECT count(*), sum(length(body)) FROM texts")[0]
    steps = rows(capture_home, "SELECT count(*) FROM steps")[0][0]
    assert steps > 0
    # the same transcripts under other names: read again, nothing new kept
    _import_all(tmp_path, run_capture, "two")
    assert rows(capture_home, "SELECT count(*), sum(length(body)) FROM texts")[0] == counted
    assert rows(capture_home, "SELECT count(*) FROM steps")[0][0] == steps
    zstd = zstandard.ZstdCompressor()
    compressed = sum(len(zstd.compress((REAL / t[0]).read_bytes())) for t in TRANSCRIPTS)
    assert counted[1] <= 1.5 * compressed
