"""The real-data corpus (tests/fixtures/real, see its PROVENANCE.md) through the real CLI:
hook logs replayed with `capture import hooks`, transcripts with `capture import claude-code`.
What each file holds is counted here from its raw JSON, independently of the readers, and the
database must hold exactly that; every file is read with no internal error, and importing or
replaying twice adds nothing twice."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from capture.importers.claude_transcript import read_transcript
from tests.conftest import RunCapture, episodes_json
from tests.support.hook_support import count, log_lines, no_agent_env, rows  # noqa: F401

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
EDIT_TOOLS = {"Edit", "Write", "MultiEdit"}
#: test runners as a reader of the logs would spot them (independent of capture's own list)
RUNNER = re.compile(
    r"\b(pytest|jest|vitest|go test|cargo test|mix test)\b|\b(p?npm|yarn)\b[^|;&]*\btest\b"
)


def _moved(text: str, old_root: str, ws: Path) -> str:
    """A corpus file with its project root moved into the test's workspace."""
    return text.replace(old_root, str(ws))


def _workspace(tmp_path: Path, name: str) -> Path:
    ws = tmp_path / name
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    return ws.resolve()


def _no_internal_error(home: Path) -> None:
    assert not [line for line in log_lines(home) if "internal error" in line]


def _replay(run_capture: RunCapture, folder: Path, cwd: Path) -> str:
    result = run_capture("import", "hooks", str(folder), cwd=cwd)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_claude_code_2x_post_tool_use_log(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = "/Users/dylan/projects/others/claude-ast-skill"
    ws = _workspace(tmp_path, "claude-ast-skill")
    raw = (REAL / "claude-code/hooks-2x/post_tool_use.json").read_text()
    runs = [
        p
        for p in json.loads(raw)
        if p["tool_name"] == "Bash" and RUNNER.search(p["tool_input"]["command"])
    ]
    text = _moved(raw, root, ws)
    payloads: list[dict[str, Any]] = json.loads(text)
    edits = [p for p in payloads if p["tool_name"] in EDIT_TOOLS]
    # the project as the session left it: the edited file holds the edit's result
    (edit,) = edits
    target = Path(edit["tool_input"]["file_path"])
    target.parent.mkdir(parents=True)
    original = edit["tool_response"]["originalFile"]
    target.write_text(
        original.replace(edit["tool_input"]["old_string"], edit["tool_input"]["new_string"])
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "post_tool_use.json").write_text(text)

    out = _replay(run_capture, logs, ws)
    assert f"{len(payloads)} payload(s) fed" in out
    proposals = rows(capture_home, "SELECT path, tool, tool_use_id, state FROM proposals")
    assert [(r["path"], r["tool"], r["tool_use_id"], r["state"]) for r in proposals] == [
        (str(target.relative_to(ws)), "Edit", edit["tool_use_id"], "applied")
    ]
    assert count(capture_home, "test_runs") == len(runs) == 0
    _no_internal_error(capture_home)

    again = _replay(run_capture, logs, ws)
    assert "0 log(s) replayed, 1 unchanged" in again
    assert count(capture_home, "proposals") == 1


def test_claude_code_1x_prompt_log_with_control_characters(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    source = REAL / "claude-code/hooks-1x/user_prompt_submit.json"
    payloads: list[dict[str, Any]] = json.loads(source.read_text())
    typed = [p["prompt"] for p in payloads if p["hook_event_name"] == "UserPromptSubmit"]
    assert "contin\u0003ue\n" in typed  # what the log really holds: a Ctrl-C typed into a prompt
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / source.name).write_text(source.read_text())

    _replay(run_capture, logs, tmp_path)
    recorded = episodes_json(run_capture)
    assert sorted(e["prompt"] for e in recorded) == sorted(typed)
    assert {e["session_id"] for e in recorded} == {p["session_id"] for p in payloads}
    _no_internal_error(capture_home)
    _replay(run_capture, logs, tmp_path)
    assert len(episodes_json(run_capture)) == len(typed)


def _transcript_lines(records: list[dict[str, Any]]) -> list[str]:
    """The transcript as Claude Code wrote it, one record a line (the log holds it as a JSON
    array of those records)."""
    return [json.dumps(r) + "\n" for r in records]


def test_claude_code_1_0_57_transcript(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = "/home/connerohnesorge/Documents/001Repos/templar"
    ws = _workspace(tmp_path, "templar")
    raw = (REAL / "claude-code/transcript-1x/chat.json").read_text()
    commands = [
        b["input"]["command"]
        for r in json.loads(raw)
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "tool_use" and b["name"] == "Bash"
    ]
    text = _moved(raw, root, ws)
    records: list[dict[str, Any]] = json.loads(text)
    assert {r["version"] for r in records if "version" in r} == {"1.0.57"}
    uses = [
        b
        for r in records
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    ]
    prompts = []
    for r in records:
        content = r.get("message", {}).get("content") if r.get("type") == "user" else None
        if isinstance(content, str):
            prompts.append(content)
        elif isinstance(content, list) and all(b["type"] == "text" for b in content):
            joined = "\n".join(b["text"] for b in content)
            if not joined.startswith("[Request interrupted"):
                prompts.append(joined)
    assert len(prompts) == 2
    history = read_transcript(_transcript_lines(records))
    assert [t.prompt for t in history.turns] == prompts
    assert history.bad_lines == 0
    assert len(history.edits) == sum(u["name"] in EDIT_TOOLS for u in uses) == 0
    assert [r.command.command for r in history.runs] == [
        u["input"]["command"] for u in uses if u["name"] == "Bash"
    ]

    path = tmp_path / "history" / "session.jsonl"
    path.parent.mkdir()
    path.write_text("".join(_transcript_lines(records)))
    result = run_capture("import", "claude-code", str(path), cwd=ws)
    assert result.returncode == 0, result.stderr
    test_runs = [c for c in commands if RUNNER.search(c)]
    assert f"0 proposal(s) (0 rejected), {len(test_runs)} test run(s)" in result.stdout
    assert "0 unreadable line(s)" in result.stdout
    again = run_capture("import", "claude-code", str(path), cwd=ws)
    assert "1 unchanged since the last import" in again.stdout


def _codex_prompts(records: list[dict[str, Any]]) -> list[str]:
    return [
        r["payload"]["message"]
        for r in records
        if r.get("type") == "event_msg" and r["payload"].get("type") == "user_message"
    ]


def _claude_prompts(records: list[dict[str, Any]]) -> list[str]:
    return [
        r["message"]["content"]
        for r in records
        if r.get("type") == "user" and isinstance(r["message"].get("content"), str)
    ]


#: the corpus's transcripts and rollouts kept one record a line: (file, importer, project root,
#: the prompts counted from the raw records)
LINE_FILES = (
    (
        "codex/rollout-0.135/session-01.jsonl",
        "codex",
        "/tmp/agent-history-real-agent/codex/workspace",
        _codex_prompts,
    ),
    (
        "claude-code/transcript-2x/session-01.jsonl",
        "claude-code",
        "/tmp/agent-history-real-agent/claude/workspace",
        _claude_prompts,
    ),
)


def test_current_codex_and_claude_code_transcripts(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    from capture.importers.codex_rollout import read_rollout

    readers = {"codex": read_rollout, "claude-code": read_transcript}
    for name, importer, root, prompts_of in LINE_FILES:
        ws = _workspace(tmp_path, importer)
        text = _moved((REAL / name).read_text(), root, ws)
        records = [json.loads(line) for line in text.splitlines()]
        history = readers[importer](text.splitlines(keepends=True))
        assert [t.prompt for t in history.turns] == prompts_of(records) == ["[REDACTED_PROMPT]"]
        assert (history.bad_lines, len(history.edits), len(history.runs)) == (0, 0, 0)
        assert history.cwd == str(ws)
        path = tmp_path / "history" / importer / Path(name).name
        path.parent.mkdir(parents=True)
        path.write_text(text)
        result = run_capture("import", importer, str(path), cwd=ws)
        assert result.returncode == 0, result.stderr
        assert "1 file(s) imported" in result.stdout and "0 unreadable line(s)" in result.stdout
        again = run_capture("import", importer, str(path), cwd=ws)
        assert "1 unchanged since the last import" in again.stdout
    assert count(capture_home, "proposals") == count(capture_home, "test_runs") == 0


def test_every_corpus_file_has_its_provenance() -> None:
    provenance = (REAL / "PROVENANCE.md").read_text()
    files = [p for p in REAL.rglob("*") if p.is_file() and p.name != "PROVENANCE.md"]
    assert files
    for path in files:
        assert f"| {path.relative_to(REAL)} |" in provenance, path


CODEX_040 = (
    "codex/rollout-0.40/rollout-2025-09-24T19-22-20-01997e76-d124-7592-9cac-2ec05abbca08.jsonl"
)


def _import_codex_040(tmp_path: Path, run_capture: RunCapture) -> dict[str, Any]:
    """The 0.40 rollout counted from its raw lines, then imported into a workspace holding the
    file its applied patch added."""
    root = "/Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2"
    raw = (REAL / CODEX_040).read_text(encoding="utf-8")
    records = [json.loads(line) for line in raw.splitlines()]
    assert records[0]["payload"]["cli_version"] == "0.40.0"
    prompts = [
        r["payload"]["message"]
        for r in records
        if r["type"] == "event_msg" and r["payload"]["type"] == "user_message"
    ]
    calls = {
        r["payload"]["call_id"]: json.loads(r["payload"]["arguments"])
        for r in records
        if r["payload"].get("type") == "function_call"
    }
    outputs = {
        r["payload"]["call_id"]: r["payload"]["output"]
        for r in records
        if r["payload"].get("type") == "function_call_output"
    }
    patches = {k: v for k, v in calls.items() if "apply_patch" in v["command"][-1]}
    refused = [k for k in patches if outputs[k] == "patch rejected by user"]
    runs = [k for k, v in calls.items() if k not in patches and RUNNER.search(v["command"][-1])]
    assert (len(prompts), len(patches), len(refused), len(runs)) == (3, 2, 1, 1)

    ws = _workspace(tmp_path, "spectora-labs-monorepo-v2")
    (done,) = [k for k in patches if k not in refused]
    body = calls[done]["command"][-1]
    added = re.search(r"\*\*\* Add File: (.*)\n", body)
    assert added is not None
    target = ws / added.group(1)
    target.parent.mkdir(parents=True)
    target.write_text("".join(line[1:] + "\n" for line in body.split("\n") if line.startswith("+")))
    path = tmp_path / "sessions" / Path(CODEX_040).name
    path.parent.mkdir()
    path.write_text(_moved(raw, root, ws), encoding="utf-8")
    result = run_capture("import", "codex", str(path), cwd=ws)
    assert result.returncode == 0, result.stderr
    return {
        "prompts": prompts,
        "calls": calls,
        "outputs": outputs,
        "patches": patches,
        "refused": refused,
        "runs": runs,
        "added": added.group(1),
        "path": path,
        "ws": ws,
        "stdout": result.stdout,
    }


def test_codex_0_40_rollout_with_apply_patch_through_the_shell(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    got = _import_codex_040(tmp_path, run_capture)
    patches, refused = got["patches"], got["refused"]
    assert f"{len(patches)} proposal(s) ({len(refused)} rejected)" in got["stdout"]
    assert "0 unreadable line(s)" in got["stdout"]
    recorded = {e["prompt"]: e for e in episodes_json(run_capture)}
    # the first prompt made both patches (one declined); a prompt per turn, none merged
    first = recorded[got["prompts"][0]]
    states = sorted((p["file"], p["state"], p["outcome"]) for p in first["proposals"])
    assert states == sorted(
        [
            (got["added"], "applied", "kept"),
            (
                "apps/spectora-labs/src/app/(protected)/settings/teams/hooks/useTeamWithStats.ts",
                "rejected",
                "rejected",
            ),
        ]
    )
    again = run_capture("import", "codex", str(got["path"]), cwd=got["ws"])
    assert "1 unchanged since the last import" in again.stdout
    assert count(capture_home, "proposals") == len(patches)


def test_codex_0_40_rollout_test_run(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    got = _import_codex_040(tmp_path, run_capture)
    (run_id,) = got["runs"]
    output = json.loads(got["outputs"][run_id])
    passed = int(re.search(r"Tests\s+(\d+) passed", output["output"])[1])
    (run,) = rows(capture_home, "SELECT command, exit_code, passed, failed FROM test_runs")
    assert tuple(run) == (got["calls"][run_id]["command"][-1], 0, passed, 0)


def test_claude_code_1x_multiedit_with_original_file_contents_and_a_vitest_run(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = "/Users/kesslerio/GDrive/Projects/attio-mcp-server"
    raw = (REAL / "claude-code/hooks-1x-multiedit/post_tool_use.json").read_text()
    originals = json.loads(raw)
    multi = [p for p in originals if p["tool_name"] == "MultiEdit"]
    runs = [
        p
        for p in originals
        if p["tool_name"] == "Bash" and RUNNER.search(p["tool_input"]["command"])
    ]
    assert len(multi) == len(runs) == 1
    # 1.0.x: the file before the edit under its old name, no tool_use_id in the payload
    assert "originalFileContents" in multi[0]["tool_response"]
    assert "tool_use_id" not in multi[0]
    passed = int(re.search(r"Tests\s+(\d+) passed", runs[0]["tool_response"]["stdout"])[1])

    ws = _workspace(tmp_path, "attio-mcp-server")
    text = _moved(raw, root, ws)
    (edit,) = [p for p in json.loads(text) if p["tool_name"] == "MultiEdit"]
    after = edit["tool_response"]["originalFileContents"]
    for step in edit["tool_input"]["edits"]:
        after = after.replace(step["old_string"], step["new_string"], 1)
    target = Path(edit["tool_input"]["file_path"])
    target.parent.mkdir(parents=True)
    target.write_text(after)
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "post_tool_use.json").write_text(text)

    _replay(run_capture, logs, ws)
    (proposal,) = rows(capture_home, "SELECT id, path, tool, state FROM proposals")
    assert (proposal["path"], proposal["tool"], proposal["state"]) == (
        str(target.relative_to(ws)),
        "MultiEdit",
        "applied",
    )
    hunks = rows(capture_home, "SELECT * FROM hunks WHERE proposal_id = ?", proposal["id"])
    assert len(hunks) == len(edit["tool_input"]["edits"])
    (run,) = rows(capture_home, "SELECT command, exit_code, passed, failed FROM test_runs")
    assert (run["command"], run["exit_code"], run["passed"], run["failed"]) == (
        runs[0]["tool_input"]["command"],
        0,
        passed,
        0,
    )
    _no_internal_error(capture_home)
    _replay(run_capture, logs, ws)
    assert (count(capture_home, "proposals"), count(capture_home, "test_runs")) == (1, 1)


def test_claude_code_1_0_70_transcript_multiedit_and_a_failed_vitest_run(
    tmp_path: Path, capture_home: Path, run_capture: RunCapture
) -> None:
    root = "/Users/kesslerio/GDrive/Projects/attio-mcp-server"
    raw = (REAL / "claude-code/transcript-1.0.70/chat.json").read_text()
    records: list[dict[str, Any]] = json.loads(raw)
    assert {r["version"] for r in records} == {"1.0.70"}
    results = {
        b["tool_use_id"]: (b, r.get("toolUseResult"))
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    }
    uses = [
        b
        for r in records
        if r["type"] == "assistant"
        for b in r["message"]["content"]
        if b["type"] == "tool_use"
    ]
    edits = [u for u in uses if u["name"] in EDIT_TOOLS]
    tests = [u for u in uses if u["name"] == "Bash" and RUNNER.search(u["input"]["command"])]
    assert len(edits) == len(tests) == 1
    (edit,), (test,) = edits, tests
    # 1.0.x: the file before the MultiEdit as originalFileContents
    assert "originalFileContents" in results[edit["id"]][1]
    # a failed run: is_error, and its output with no "Exit code N" line
    block, _ = results[test["id"]]
    assert block["is_error"] and not re.search(r"Exit code \d+", block["content"])
    summary = re.search(r"Tests\s+(\d+) failed \| (\d+) passed", block["content"])
    assert summary is not None
    failed, passed = int(summary[1]), int(summary[2])

    ws = _workspace(tmp_path, "attio-mcp-server")
    text = _moved(raw, root, ws)
    moved = json.loads(text)
    result = next(r["toolUseResult"] for r in moved if isinstance(r.get("toolUseResult"), dict))
    after = result["originalFileContents"]
    for step in result["edits"]:
        after = after.replace(step["old_string"], step["new_string"], 1)
    target = Path(result["filePath"])
    target.parent.mkdir(parents=True)
    target.write_text(after)
    path = tmp_path / "history" / "c7428042.jsonl"
    path.parent.mkdir()
    path.write_text("".join(_transcript_lines(moved)))

    out = run_capture("import", "claude-code", str(path), cwd=ws)
    assert out.returncode == 0, out.stderr
    assert "1 proposal(s) (0 rejected), 1 test run(s)" in out.stdout
    assert "0 unreadable line(s)" in out.stdout
    (proposal,) = rows(capture_home, "SELECT path, tool, state, outcome FROM proposals")
    assert tuple(proposal) == (str(target.relative_to(ws)), "MultiEdit", "applied", "kept")
    (run,) = rows(capture_home, "SELECT command, name, exit_code, passed, failed FROM test_runs")
    # it ran and failed (not "did not start"); the transcript does not say the code
    assert tuple(run) == (test["input"]["command"], "npm test", None, passed, failed)
    again = run_capture("import", "claude-code", str(path), cwd=ws)
    assert "1 unchanged since the last import" in again.stdout
