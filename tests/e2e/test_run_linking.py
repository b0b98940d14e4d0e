"""Through the command line: agent edits (`capture propose`), test runs (`capture run` around a
real pytest), and what each episode's tests then read."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import RunCapture, episodes_json
from tests.support.projects import CALC, LONG_WINDOWS, SHOUT, agent_edit, make_project, pytest_cmd


def record_run(run_capture: RunCapture, ws: Path, *, plugin: bool, expect: int) -> None:
    result = run_capture("run", "--", *pytest_cmd(plugin=plugin), cwd=ws, env=LONG_WINDOWS)
    assert result.returncode == expect, result.stdout + result.stderr
    assert "capture:" not in result.stderr, result.stderr


def by_id(run_capture: RunCapture) -> dict[str, dict]:
    return {e["id"]: e for e in episodes_json(run_capture)}


def test_agent_edit_failing_run_user_fix_passing_run(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = make_project(tmp_path)
    episode = agent_edit(
        run_capture, ws, "src/calc.py", "return a + b\n", "return a + b + 1\n", "claude-code", "t1"
    )
    record_run(run_capture, ws, plugin=True, expect=1)
    (ws / "src" / "calc.py").write_text(CALC)  # the user fixes it
    record_run(run_capture, ws, plugin=True, expect=0)

    e = by_id(run_capture)[episode]
    assert [(r["status"], r["link"]) for r in e["test_runs"]] == [
        ("failing", "open"),
        ("passing", "open"),
    ]
    first, last = e["test_runs"]
    assert first["failing_ids"] == ["tests/test_calc.py::test_add"]
    assert (first["passed"], first["failed"], first["results_from"]) == (1, 1, "plugin")
    assert first["exit_code"] == 1 and last["exit_code"] == 0 and last["failed"] == 0
    assert first["source"] == "wrapper" and first["runner"] == "pytest"
    tests = e["tests"]
    assert tests["first_run_after"]["id"] == first["id"]
    assert tests["first_run_after"]["status"] == "failing"
    assert tests["last_run_before_settling"]["id"] == last["id"]
    assert tests["last_run_before_settling"]["status"] == "passing"
    assert tests["transition"] == "failing_to_passing"
    assert tests["failing_tests_in_edited_files"] == []
    assert tests["tests_edited_by_agent"] is False

    shown = run_capture("show", episode, check=True).stdout
    assert "failing -> passing" in shown
    assert "tests/test_calc.py::test_add" in shown


def test_two_agents_interleaving_in_one_workspace(tmp_path: Path, run_capture: RunCapture) -> None:
    ws = make_project(tmp_path)
    calc = agent_edit(
        run_capture, ws, "src/calc.py", "return a + b\n", "return a + b + 1\n", "claude-code", "t1"
    )
    record_run(run_capture, ws, plugin=False, expect=1)  # run 1: only the calc agent's edit
    text = agent_edit(
        run_capture,
        ws,
        "tests/test_text.py",
        "== 'A'\n",
        "== 'A'\n" + SHOUT,
        "codex",
        "t9",
    )
    assert text != calc
    record_run(run_capture, ws, plugin=False, expect=1)  # run 2: both edits, two failures
    # The user fixes both: the calc bug and the new test's expectation.
    (ws / "src" / "calc.py").write_text(CALC)
    test_text = ws / "tests" / "test_text.py"
    test_text.write_text(test_text.read_text().replace("'HEY!!'", "'HEY!'"))
    record_run(run_capture, ws, plugin=False, expect=0)  # run 3

    episodes = by_id(run_capture)
    calc_runs = episodes[calc]["test_runs"]
    text_runs = episodes[text]["test_runs"]
    assert [r["status"] for r in calc_runs] == ["failing", "failing", "passing"]
    assert [r["id"] for r in text_runs] == [r["id"] for r in calc_runs[1:]]
    assert calc_runs[0]["results_from"] == "summary"
    assert sorted(calc_runs[1]["failing_ids"]) == [
        "tests/test_calc.py::test_add",
        "tests/test_text.py::test_shout",
    ]

    calc_tests, text_tests = episodes[calc]["tests"], episodes[text]["tests"]
    assert calc_tests["first_run_after"]["id"] == calc_runs[0]["id"]
    assert text_tests["first_run_after"]["id"] == text_runs[0]["id"]
    assert calc_tests["transition"] == text_tests["transition"] == "failing_to_passing"
    # The failing test the codex agent wrote is its own, not the calc agent's.
    assert text_tests["failing_tests_in_edited_files"] == ["tests/test_text.py::test_shout"]
    assert calc_tests["failing_tests_in_edited_files"] == []
    assert text_tests["tests_edited_by_agent"] is True
    assert calc_tests["tests_edited_by_agent"] is False

    shown = run_capture("show", text, check=True).stdout
    assert "agent edited test files" in shown
