"""What a label rests on (capture.edits.evidence): refusals told from failures, error kinds,
and the evidence kind of a label from what decided it."""

from __future__ import annotations

import pytest

from capture.edits.evidence import (
    NO_POST_EVENT,
    WORKSPACE_ABSENT,
    EvidenceKind,
    error_kind,
    evidence_of,
    is_refusal,
    not_applied,
    undone_reason,
)
from capture.model import State


@pytest.mark.parametrize(
    "error",
    [
        "The user doesn't want to proceed with this tool use. The tool use was rejected",
        "patch rejected by user",
        "declined",
        "[Request interrupted by user for tool use]",
    ],
)
def test_a_refusal_is_rejected_by_the_user(error: str) -> None:
    assert is_refusal(error)
    assert not_applied(error) == (State.REJECTED, "refused by the user", "user")


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        ("String to replace not found in file.", "not-found"),
        ("Found 3 matches of the string to replace, but replace_all is false.", "ambiguous"),
        ("File has not been read yet. Read it first before writing to it.", "not-read"),
        ("File has been modified since read, either by the user or by a linter.", "stale"),
        ("EACCES: permission denied, open '/etc/x'", "permission"),
        ("something nobody has seen", "error"),
        (None, "error"),
    ],
)
def test_a_failure_is_failed_with_its_kind(error: str | None, kind: str) -> None:
    assert not is_refusal(error)
    assert not_applied(error) == (State.FAILED, kind, "tool-failure")
    assert error_kind(error) == kind


def _kind(**kw: object) -> tuple[EvidenceKind, bool]:
    args: dict[str, object] = {
        "outcome": "kept",
        "reason": None,
        "via": None,
        "late_seconds": None,
        "backfilled": False,
    }
    args.update(kw)
    found = evidence_of(**args)  # type: ignore[arg-type]
    return found.kind, found.seen


def test_the_evidence_kind_follows_what_decided_the_label() -> None:
    assert _kind(via="editor") == (EvidenceKind.BUFFER, True)
    assert _kind(via="disk", late_seconds=0.2) == (EvidenceKind.DISK_WATCHED, True)
    assert _kind(via="disk", late_seconds=600.0) == (EvidenceKind.DISK_LATE, False)
    assert _kind(via="git", backfilled=True) == (EvidenceKind.GIT, True)
    assert _kind(via="import", backfilled=True) == (EvidenceKind.IMPORT, False)
    assert _kind(outcome="rejected") == (EvidenceKind.PAYLOAD, True)
    assert _kind(outcome="failed", backfilled=True) == (EvidenceKind.IMPORT, True)
    assert _kind(outcome="lost", reason=NO_POST_EVENT) == (EvidenceKind.PAYLOAD, False)
    assert _kind(outcome="lost", reason=WORKSPACE_ABSENT, backfilled=True) == (
        EvidenceKind.IMPORT,
        False,
    )


def test_undone_names_who_undid_it() -> None:
    assert [undone_reason(a) for a in ("agent", "user", "git", None)] == [
        "agent-reverted",
        "user-reverted",
        "unknown",
        "unknown",
    ]
