"""Recording inputs: each is appended to the raw event log and applied to the domain tables in
one transaction, so the log and the tables never disagree."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from capture.config import Config
from capture.errors import InputError
from capture.files import read_text, relative_to_workspace
from capture.model import CaseResult, ProposalInput, State, TestRunInput
from capture.store.database import Store
from capture.testruns.testfiles import file_of_test_id, workspace_relative

if TYPE_CHECKING:
    from capture.edits.hunks import LocatedHunk

__all__ = [
    "failing_cases",
    "proposal_payload",
    "record_proposal",
    "record_test_run",
    "run_payload",
]


def proposal_payload(proposal: ProposalInput) -> str:
    data: dict[str, Any] = dataclasses.asdict(proposal)
    data.pop("file_text", None)
    return json.dumps(data, default=str)


def record_proposal(
    store: Store,
    config: Config,
    proposal: ProposalInput,
    *,
    now: float,
    raw: str | None = None,
) -> str:
    """Record one proposal; returns its id. Raises InputError when the file cannot be used."""
    from capture.edits.hunks import LocatedHunk, locate  # not needed on the test-run path

    path = Path(proposal.path)
    root = Path(proposal.workspace)
    relative = relative_to_workspace(path, root)
    if relative is None:
        raise InputError(f"{path} is outside the workspace {root}")
    located: list[LocatedHunk]
    if proposal.state is State.APPLIED:
        text = proposal.file_text if proposal.file_text is not None else read_text(path)
        if text is None:
            if not path.exists():
                raise InputError(f"{path}: no such file")
            raise InputError(f"{path}: not a UTF-8 text file (or larger than the tracking limit)")
        proposal.file_text = text
        located = locate(text, proposal.hunks)
    else:
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in proposal.hunks]
    with store.transaction():
        store.append_event(
            "proposal",
            raw if raw is not None else proposal_payload(proposal),
            at=now,
            source=proposal.source,
            workspace=str(root),
        )
        from capture.recording.observer import follow_to

        follow_to(store, proposal, relative, now=now)
        return store.add_proposal(
            proposal,
            located,
            relative_path=relative,
            now=now,
            windows=config.windows,
            late=config.late,
            gap=config.episode_gap,
        )


def record_test_run(
    store: Store,
    run: TestRunInput,
    *,
    now: float,
    raw: str | None = None,
    late_seconds: float | None = None,
) -> str:
    """Record one test run (event and domain rows in one transaction); returns its id. Failing
    ids given without per-test results become failing results, with the file their id names
    made relative to the workspace."""
    if not run.cases and run.failing_ids:
        run.cases = failing_cases(run.failing_ids, run.cwd, run.workspace)
    with store.transaction():
        store.append_event(
            "test_run",
            raw if raw is not None else run_payload(run),
            at=now,
            source=run.source,
            workspace=run.workspace,
        )
        if late_seconds is None:
            return store.add_test_run(run, now=now)
        return store.add_test_run(run, now=now, late_seconds=late_seconds)


def run_payload(run: TestRunInput) -> str:
    """The event log's copy of a run; per-test results as rows (dataclasses.asdict would copy
    each of thousands of results field by field)."""
    data: dict[str, Any] = {
        f.name: getattr(run, f.name) for f in dataclasses.fields(run) if f.name != "cases"
    }
    data["cases"] = [[c.test_id, c.outcome, c.file, c.classname, c.duration_s] for c in run.cases]
    return json.dumps(data, separators=(",", ":"))


def failing_cases(ids: list[str], cwd: str | None, workspace: str | None) -> list[CaseResult]:
    base = ""
    if cwd and workspace:
        base = relative_to_workspace(Path(cwd), Path(workspace)) or ""
        base = "" if base == "." else base
    cases = []
    for test_id in ids:
        file = file_of_test_id(test_id)
        cases.append(
            CaseResult(test_id, "failed", workspace_relative(file, base) if file else None)
        )
    return cases
