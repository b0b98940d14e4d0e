"""Unknown is not negative: labels that rest on missing evidence are `lost` with a reason,
never `rejected` or `undone`, and a failed tool call is `failed`, not `rejected`. Played on the
real corpus (tests/fixtures/real, see its PROVENANCE.md) through the real CLI: the hook log
replayed with `capture import hooks`, the transcript imported with `capture import
claude-code`, each once with the project on this machine and once without."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import rows

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
HOOKS_ROOT = "/Users/dylan/projects/others/claude-ast-skill"
TRANSCRIPT_ROOT = "/Users/kesslerio/GDrive/Projects/attio-mcp-server"


def _workspace(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws.resolve()


def _real_edit(ws: Path) -> dict[str, Any]:
    """The real Claude Code 2.x Edit payload of the corpus, its project moved into `ws`, the
    edited file on disk as it was before the edit."""
    raw = (REAL / "claude-code/hooks-2x/post_tool_use.json").read_text()
    payloads = json.loads(raw.replace(HOOKS_ROOT, str(ws)))
    (edit,) = [p for p in payloads if p["tool_name"] == "Edit"]
    target = Path(edit["tool_input"]["file_path"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(edit["tool_response"]["originalFile"])
    return dict(edit)


def _as(payload: dict[str, Any], event: str, **changes: Any) -> dict[str, Any]:
    out = {k: v for k, v in payload.items() if k != "tool_response"}
    out.update(hook_event_name=event, **changes)
    return out


def _stop(payload: dict[str, Any], session_id: str) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "transcript_path": payload["transcript_path"],
        "cwd": payload["cwd"],
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }


def _replay(run_capture: RunCapture, tmp_path: Path, ws: Path, log: list[dict[str, Any]]) -> str:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "hooks.json").write_text(json.dumps(log))
    result = run_capture("import", "hooks", str(logs), cwd=ws)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _labels(home: Path) -> list[tuple[str, str, str, str | None, str | None]]:
    return [
        (r["tool_use_id"], r["state"], r["outcome"], r["reason"], r["decided_by"])
        for r in rows(
            home,
            "SELECT tool_use_id, state, outcome, reason, decided_by FROM proposals "
            "ORDER BY tool_use_id",
        )
    ]


def test_a_replayed_pre_event_with_no_post_event_is_lost_not_rejected(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = _workspace(tmp_path, "claude-ast-skill")
    edit = _real_edit(ws)
    session = edit["session_id"]
    # the log was cut after the pre-event (its turn's Stop is there), and a second session's
    # pre-event is the log's last entry (no Stop at all)
    log = [
        _as(edit, "PreToolUse", tool_use_id="toolu_cut_a"),
        _stop(edit, session),
        _as(edit, "PreToolUse", tool_use_id="toolu_cut_b", session_id=f"{session}-2"),
    ]
    out = _replay(run_capture, tmp_path, ws, log)
    assert "1 announced edit(s) with no post-event" in out, out
    assert _labels(capture_home) == [
        ("toolu_cut_a", "shown", "lost", "no-post-event", None),
        ("toolu_cut_b", "shown", "lost", "no-post-event", None),
    ]


def test_a_failed_tool_call_is_failed_with_its_error_kind_and_a_refusal_is_rejected(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    ws = _workspace(tmp_path, "claude-ast-skill")
    edit = _real_edit(ws)
    log = [
        _as(edit, "PreToolUse", tool_use_id="toolu_a_failed"),
        _as(
            edit,
            "PostToolUseFailure",
            tool_use_id="toolu_a_failed",
            error="String to replace not found in file.",
        ),
        _as(
            edit,
            "PostToolUseFailure",
            tool_use_id="toolu_b_refused",
            error="The user doesn't want to proceed with this tool use. "
            "The tool use was rejected (eg. if it was a file edit, the new_string was NOT "
            "written to the file).",
        ),
    ]
    _replay(run_capture, tmp_path, ws, log)
    assert _labels(capture_home) == [
        ("toolu_a_failed", "failed", "failed", "not-found", "tool-failure"),
        ("toolu_b_refused", "rejected", "rejected", "refused by the user", "user"),
    ]
    # every label says what it rests on and who made the change: in the episode JSON, in
    # `capture show`, and in the report's evidence mix
    (episode,) = episodes_json(run_capture)
    said = {
        p["outcome"]: (p["evidence"], p["evidence_seen"], p["author"]) for p in episode["proposals"]
    }
    assert said == {"failed": ("payload", True, "tool"), "rejected": ("payload", True, "user")}
    shown = " ".join(run_capture("show", episode["id"], check=True).stdout.split())
    assert "outcome failed (not-found); evidence payload (seen); change by tool" in shown
    assert "outcome rejected (refused by the user); evidence payload (seen); change by user" in (
        shown
    )
    report = json.loads(run_capture("report", "--json", check=True).stdout)
    assert report["evidence"]["labels"] == 2
    assert report["evidence"]["share"]["payload"] == 1.0
    # an export keeps only the labels resting on the evidence asked for
    for kinds, expected in (("payload", 2), ("buffer,git", 0)):
        out = tmp_path / f"export-{expected}"
        run_capture(
            "export", "--format", "episodes", "--level", "full", "--evidence", kinds,
            "--out", str(out), "--quiet", check=True,
        )  # fmt: skip
        (line,) = (out / "episodes.jsonl").read_text().splitlines()
        assert len(json.loads(line)["proposals"]) == expected
    bad = run_capture("export", "--format", "episodes", "--evidence", "hearsay")
    assert bad.returncode == 2 and "unknown evidence kind 'hearsay'" in bad.stderr


def _transcript(tmp_path: Path, root: str) -> Path:
    raw = (REAL / "claude-code/transcript-1.0.70/chat.json").read_text()
    records = json.loads(raw.replace(TRANSCRIPT_ROOT, root))
    path = tmp_path / "history" / "c7428042.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_an_imported_edit_whose_workspace_is_not_here_is_lost_not_undone(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    absent = tmp_path / "elsewhere" / "attio-mcp-server"  # never created: another machine's
    path = _transcript(tmp_path, str(absent))
    out = run_capture("import", "claude-code", str(path), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "1 lost (workspace-absent)" in out.stdout, out.stdout
    (proposal,) = rows(capture_home, "SELECT tool, state, outcome, reason FROM proposals")
    assert tuple(proposal) == ("MultiEdit", "applied", "lost", "workspace-absent")
