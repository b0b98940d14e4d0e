"""The episode and its parts, as the store gives them (`capture episodes --json`).

Fields are in the order the store writes them. Each is marked with `doc(...)`: a one-line
description, how it is shared (`Share`) and where it must be present (`Required`). Lists are
never null; a value the store may not hold yet is `| None`. What anonymization adds and what an
export adds are parts of their own below; `capture.episode.variants` derives the upload's and
the export line's shapes from these.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from capture.episode.fields import (
    Count,
    Days,
    EpisodeId,
    ExitCode,
    LateSeconds,
    Name,
    Rate,
    Required,
    RulesVersion,
    SchemaName,
    Seconds,
    Text,
    Time,
    doc,
)
from capture.episode.vocabulary import (
    EXPORT_SCHEMA,
    Author,
    EvidenceKind,
    HunkStatus,
    Level,
    Outcome,
    ResultsFrom,
    RevertKind,
    RunLink,
    RunStatus,
    Share,
    Split,
    State,
    Tier,
    Transition,
    UndoneBy,
)

__all__ = [
    "PARTS",
    "Checkpoint",
    "CollectorRecord",
    "Episode",
    "ExportedEpisode",
    "ExportedProposal",
    "Hunk",
    "HunkContext",
    "LateSignals",
    "Proposal",
    "RunBrief",
    "SharedEpisode",
    "SharedLateSignals",
    "SharedProposal",
    "SharedTestRun",
    "SharedTests",
    "TestRun",
    "TestsSummary",
    "TierChange",
    "Trajectory",
    "TrajectoryStep",
]

E = Required.EXPORT
A = Required.ALWAYS


class _Part(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A part of the episode: an unknown field is an error, so that a field the store writes
    and the contract does not name fails the contract's tests."""


class Hunk(_Part):
    """One contiguous change the agent made in the file."""

    old_text: Annotated[
        Text, doc("The text the agent replaced (empty for an insertion)", Share.TEXT)
    ]
    new_text: Annotated[Text, doc("The text the agent wrote (empty for a deletion)", Share.TEXT)]
    status: Annotated[HunkStatus, doc("Whether the hunk's region is still followed in its file")]


class Checkpoint(_Part):
    """The proposal measured at one window after it was applied."""

    window: Annotated[Name, doc("The window's label (10m, 1h, 1d, ...)", required=E)]
    due_at: Annotated[Time, doc("When the window closes", Share.TIME)]
    observed_at: Annotated[Time | None, doc("When the region was read (null: not yet)", Share.TIME)]
    similarity: Annotated[
        Rate | None, doc("1 - normalized Levenshtein distance of the agent's text and the region's")
    ]
    retention: Annotated[
        Rate | None, doc("Share of the characters the agent inserted still in the region")
    ]
    outcome: Annotated[Outcome | None, doc("The outcome these measures mean (null: not measured)")]
    reason: Annotated[Text | None, doc("Why that outcome, in the outcome rules' words")]
    rules_version: Annotated[
        RulesVersion | None, doc("The outcome rules' version that decided it (1: before version 2)")
    ]
    late_seconds: Annotated[
        LateSeconds | None,
        doc("How long after its due time it was measured, when more than 2 s (history lacked it)"),
    ]
    via: Annotated[
        Name | None, doc("How the region was read: disk, disk-watched, disk-late, editor, or git")
    ]


class LateSignals(_Part):
    """What became of the proposal's lines after its windows, read from git."""

    measured_at: Annotated[Time, doc("When the late pass measured these", Share.TIME)]
    lines: Annotated[Count, doc("The agent's added non-blank lines looked for")]
    committed_lines: Annotated[Count, doc("Of them, how many the first commit holding any carried")]
    commit: Annotated[
        Name | None,
        doc("The first commit holding any of the lines", Share.COMMIT, flag="committed"),
    ]
    committed_at: Annotated[Time | None, doc("When that commit was made", Share.TIME)]
    renamed: Annotated[bool, doc("The file had another path at that commit")]
    churn_14d: Annotated[
        Rate | None, doc("Share of the committed lines changed or deleted within 14 days")
    ]
    churn_30d: Annotated[
        Rate | None, doc("Share of the committed lines changed or deleted within 30 days")
    ]
    days_observed: Annotated[
        Days | None, doc("Days between the commit and the newest time churn was measured at")
    ]
    reverted_by: Annotated[
        Name | None, doc("The commit that took the lines back", Share.COMMIT, flag="reverted")
    ]
    reverted_at: Annotated[Time | None, doc("When they were taken back", Share.TIME)]
    revert_kind: Annotated[RevertKind | None, doc("How they were taken back", Share.VOCABULARY)]
    fixed_by: Annotated[
        Name | None,
        doc("A later commit whose message says it fixes the lines", Share.COMMIT, flag="fixed"),
    ]
    fixed_at: Annotated[Time | None, doc("When that fix was committed", Share.TIME)]
    syntax_errors_added: Annotated[
        Count | None, doc("Syntax errors the commit added (null: no grammar for the language)")
    ]
    markers_added: Annotated[Count, doc("TODO, FIXME, HACK and XXX markers among the lines")]
    file_gone: Annotated[bool, doc("The file was deleted before any commit carried the lines")]


class TierChange(_Part):
    """A tier decision: the tier, why, by which rules, and when."""

    tier: Annotated[Tier, doc("The tier", Share.VOCABULARY, required=E)]
    reasons: Annotated[
        list[str], doc("One reason per rule that decided it", Share.REASONS, required=E)
    ]
    rules_version: Annotated[RulesVersion, doc("The tier rules' version", required=E)]
    decided_at: Annotated[Time, doc("When it was decided", Share.TIME)]


class Proposal(_Part):
    """One agent edit operation on one file, and what became of it."""

    id: Annotated[Name, doc("The proposal's id", Share.ID, required=E)]
    file: Annotated[Text, doc("The file, relative to the workspace", Share.PATH, required=E)]
    state: Annotated[State, doc("Whether it was applied, rejected or only shown", required=E)]
    outcome: Annotated[Outcome, doc("What became of it (final once settled)", required=E)]
    reason: Annotated[Text | None, doc("Why that outcome, in the outcome rules' words")]
    rules_version: Annotated[
        RulesVersion, doc("The outcome rules' version that decided it", Share.BY_VALUE)
    ]
    similarity: Annotated[Rate | None, doc("At the last checkpoint measured (see checkpoints)")]
    retention: Annotated[Rate | None, doc("At the last checkpoint measured (see checkpoints)")]
    chars_added: Annotated[Count, doc("Characters the agent inserted")]
    chars_removed: Annotated[Count, doc("Characters the agent removed")]
    lines_added: Annotated[Count, doc("Lines the agent inserted")]
    lines_removed: Annotated[Count, doc("Lines the agent removed")]
    agent: Annotated[Name, doc("The agent that proposed it")]
    model: Annotated[Name | None, doc("The model, when the agent said")]
    tool: Annotated[Name | None, doc("The agent's tool that made the edit (Edit, Write, ...)")]
    source: Annotated[Name | None, doc("Where it was recorded (hook, lsp, cli, import, ...)")]
    backfilled: Annotated[bool, doc("Imported from history rather than seen live")]
    created_file: Annotated[bool, doc("The edit created the file")]
    created_at: Annotated[Time, doc("When it was recorded", Share.TIME)]
    applied_at: Annotated[Time | None, doc("When it was applied (null: never)", Share.TIME)]
    decided_by: Annotated[Name | None, doc("Who applied or rejected it, when known")]
    settled_at: Annotated[Time | None, doc("When its outcome became final", Share.TIME)]
    hunks: Annotated[
        list[Hunk], doc("Its hunks, in order (left out at the metrics level)", Share.TEXT)
    ]
    checkpoints: Annotated[
        list[Checkpoint], doc("Its measures, shortest window first", Share.PARTS, required=E)
    ]
    late_signals: Annotated[
        LateSignals | None, doc("What became of its lines later (null: not measured)", Share.PARTS)
    ]
    tier: Annotated[
        TierChange | None,
        doc("Its current tier decision (null: none yet)", Share.PARTS, required=E),
    ]
    tier_history: Annotated[list[TierChange], doc("Every tier decision, oldest first", Share.PARTS)]
    before_text: Annotated[
        Text | None, doc("The whole file as the edit found it, when known", Share.TEXT)
    ]
    before_via: Annotated[
        Name | None, doc("Where that came from: payload, earlier-edit, earlier-read")
    ]
    evidence: Annotated[
        EvidenceKind | None,
        doc(
            "What its outcome rests on: buffer, disk-watched, disk-late, payload, import or git"
            " (null: recorded before evidence was kept)"
        ),
    ] = None
    evidence_seen: Annotated[
        bool | None,
        doc("Whether that evidence was observed at the moment it describes (false: inferred)"),
    ] = None
    author: Annotated[
        Author | None,
        doc("Who made the change behind the outcome: agent, user, tool or git (null: unknown)"),
    ] = None
    undone_by: Annotated[
        UndoneBy | None,
        doc("For an undone proposal: agent-reverted, user-reverted or unknown"),
    ] = None


class TestRun(_Part):
    """One test run linked to the episode."""

    __test__ = False  # not a pytest test class, whatever its name

    id: Annotated[Name, doc("The run's id", Share.ID, required=E)]
    command: Annotated[Text, doc("The command as it was run", Share.TEXT)]
    name: Annotated[
        Text | None, doc("A name for the run (the runner's, or the source's)", Share.TEXT)
    ]
    source: Annotated[
        Name, doc("Who recorded it: hook, wrapper, pytest-plugin, junit-file, editor, import")
    ]
    exit_code: Annotated[
        ExitCode | None, doc("Its exit code; 128 + N when signal N ended it; null from a report")
    ]
    passed: Annotated[Count | None, doc("Tests passed (null: not counted)")]
    failed: Annotated[Count | None, doc("Tests failed (null: not counted)")]
    errors: Annotated[Count | None, doc("Tests in error (null: not counted)")]
    skipped: Annotated[Count | None, doc("Tests skipped (null: not counted)")]
    failing_ids: Annotated[list[str], doc("The failing tests' ids", Share.TEXT)]
    started_at: Annotated[Time, doc("When it started", Share.TIME)]
    duration_s: Annotated[Seconds | None, doc("How long it ran, in seconds")]
    status: Annotated[RunStatus, doc("What it says")]
    link: Annotated[RunLink, doc("Why it is evidence for this episode")]
    runner: Annotated[
        Name | None, doc("The test runner (pytest, jest, go, cargo, ...)", Share.RUNNER)
    ]
    results_from: Annotated[
        ResultsFrom | None, doc("Where its counts came from (null: its exit code alone)")
    ]
    report: Annotated[
        Text | None, doc("The JUnit file(s) read, relative to the workspace", Share.TEXT)
    ]
    cwd: Annotated[Text | None, doc("Where it ran", Share.TEXT)]
    shell_exit_code: Annotated[
        ExitCode | None,
        doc(
            "The exit code the agent's shell saw, when another source recorded the run",
            Share.BY_VALUE,
        ),
    ]
    seen_by: Annotated[
        list[Name],
        doc("Every source that saw this one run, in the order they reported", Share.VOCABULARY),
    ]


class RunBrief(_Part):
    """A linked run, named by the summary of the episode's tests."""

    id: Annotated[Name, doc("The run's id", Share.ID)]
    status: Annotated[RunStatus, doc("What it says")]
    started_at: Annotated[Time, doc("When it started", Share.TIME)]


class TestsSummary(_Part):
    """What the episode's linked runs say about it."""

    __test__ = False  # not a pytest test class, whatever its name

    runs: Annotated[Count, doc("How many runs are linked")]
    first_run_after: Annotated[
        RunBrief | None, doc("Its first linked run with a verdict", Share.PARTS)
    ]
    last_run_before_settling: Annotated[
        RunBrief | None,
        doc("Its last run with a verdict that started before it settled", Share.PARTS),
    ]
    transition: Annotated[Transition | None, doc("How the runs moved, first to last")]
    failing_tests_in_edited_files: Annotated[
        list[str], doc("Tests that failed and live in a file the agent edited", Share.TEXT)
    ]
    tests_edited_by_agent: Annotated[
        bool, doc("The agent edited test files itself: its runs are weak evidence")
    ]


class TrajectoryStep(_Part):
    """One step of what the agent saw and did: a user message, the assistant's text, or a tool
    call with its input and its result."""

    kind: Annotated[Name, doc("user, assistant or tool")]
    at: Annotated[Time, doc("When it happened (a tool call: when it was made)", Share.TIME)]
    tool: Annotated[Name | None, doc("The tool called (Read, Grep, Bash, an MCP tool, ...)")]
    call_id: Annotated[Name | None, doc("The agent's id of the tool call", Share.HASHED)]
    input: Annotated[Text | None, doc("The tool call's input, as JSON text", Share.TEXT)]
    text: Annotated[Text | None, doc("The message's text, or the tool's result", Share.TEXT)]
    is_error: Annotated[bool, doc("The tool call failed")]
    harness: Annotated[
        Name | None,
        doc("A user-role text the harness wrote (task-notification, command-message, ...)"),
    ]
    subagent: Annotated[
        Name | None, doc("The subagent whose side chain this step is in", Share.HASHED)
    ]
    spawned: Annotated[
        Name | None, doc("For a call that started a subagent: that subagent", Share.HASHED)
    ]
    path: Annotated[Text | None, doc("The file the tool call named", Share.PATH)]
    truncated: Annotated[bool, doc("Its text was cut at the episode's cap")]


class Trajectory(_Part):
    """What the agent saw and did in the episode, in order."""

    tool_calls: Annotated[dict[str, int], doc("Tool name -> how many calls, at every level")]
    steps: Annotated[
        list[TrajectoryStep],
        doc("Its steps, in order (left out at the metrics level)", Share.PARTS),
    ]
    truncated: Annotated[bool, doc("A text was cut at the episode's cap")]


class Episode(_Part):
    """One agent turn: the proposals it made, the test runs linked to it, and its tier."""

    schema: Annotated[SchemaName, doc("agent-capture/episode@1", Share.ID, required=A)]
    id: Annotated[
        EpisodeId, doc("The episode's id (20 hex digits, time-ordered)", Share.ID, required=A)
    ]
    agent: Annotated[Name, doc("The agent (claude-code, codex, aider, ...)", required=E)]
    model: Annotated[Name | None, doc("The model, when the agent said")]
    session_id: Annotated[Name | None, doc("The agent's session id", Share.HASHED)]
    turn_id: Annotated[Name | None, doc("The agent's turn id", Share.HASHED)]
    workspace: Annotated[Text | None, doc("The workspace root", Share.HASHED_ALWAYS)]
    prompt: Annotated[Text | None, doc("The user's request, when the agent sent it", Share.TEXT)]
    source: Annotated[Name | None, doc("Where it was recorded (cli, hook, lsp, import, ...)")]
    started_at: Annotated[Time, doc("Its first proposal's time", Share.TIME)]
    ended_at: Annotated[Time | None, doc("When the agent's turn ended", Share.TIME)]
    settled_at: Annotated[Time | None, doc("When every proposal had its final outcome", Share.TIME)]
    proposals: Annotated[list[Proposal], doc("Its proposals, in order", Share.PARTS, required=A)]
    test_runs: Annotated[
        list[TestRun], doc("The runs linked to it, oldest first", Share.PARTS, required=E)
    ]
    tests: Annotated[TestsSummary, doc("What the linked runs say about it", Share.PARTS)]
    tier: Annotated[
        TierChange | None,
        doc("Its current tier decision (null: none yet)", Share.PARTS, required=E),
    ]
    tier_history: Annotated[list[TierChange], doc("Every tier decision, oldest first", Share.PARTS)]
    task: Annotated[
        Text | None,
        doc(
            "The request the episode's work answers (never a 'continue' or a harness message)",
            Share.TEXT,
        ),
    ]
    task_source: Annotated[
        Name | None,
        doc(
            "Where the task came from: prompt, earlier-prompt, tool-result, plan-file, "
            "subagent-prompt"
        ),
    ]
    trajectory: Annotated[
        Trajectory | None, doc("What the agent saw and did (null: nothing recorded)", Share.PARTS)
    ]


# -- what anonymization adds (`sync.anonymize`: uploads, and exports below the full level) ----


class SharedEpisode(_Part):
    """Added to an anonymized episode."""

    level: Annotated[Level, doc("The level it was anonymized at")]
    prompt_chars: Annotated[Count, doc("The prompt's length, at every level")]
    excluded_files: Annotated[Count, doc("Proposals left out: their files are excluded")]
    secrets_redacted: Annotated[Count, doc("Secrets replaced by <SECRET:kind:hmac8>")]


class SharedProposal(_Part):
    """Added to an anonymized proposal."""

    language: Annotated[Name | None, doc("The file's language, from its extension")]
    hunk_count: Annotated[Count, doc("How many hunks it has, at every level")]


class SharedTestRun(_Part):
    """Added to an anonymized test run."""

    failing_count: Annotated[Count, doc("At the metrics level: how many tests failed by id")]


class SharedTests(_Part):
    """Added to an anonymized tests summary."""

    failing_tests_in_edited_files_count: Annotated[
        Count, doc("At the metrics level: how many failing tests live in edited files")
    ]


class SharedLateSignals(_Part):
    """Added to anonymized late signals: whether there was a commit, at every level."""

    committed: Annotated[bool, doc("A commit carried some of the lines")]
    reverted: Annotated[bool, doc("A commit took them back")]
    fixed: Annotated[bool, doc("A later commit fixed them")]


# -- what an export adds (`capture.export.canonical`) ---------------------------------------


class HunkContext(_Part):
    """Per hunk: the file around the edit before it was made, and where the region is now."""

    before: Annotated[Text, doc("The file's text before the edit, up to the hunk", Share.TEXT)]
    after: Annotated[Text, doc("The file's text after the hunk", Share.TEXT)]
    status: Annotated[HunkStatus, doc("Whether the region is still followed")]
    final: Annotated[
        Text, doc("The region's text when last observed (the user's final version)", Share.TEXT)
    ]
    start_line: Annotated[
        Annotated[int, msgspec.Meta(ge=1)], doc("The region's first line now (1-based)")
    ]
    end_line: Annotated[Annotated[int, msgspec.Meta(ge=1)], doc("The region's last line now")]


class CollectorRecord(_Part):
    """Where an episode exported from a team collector came from."""

    revision: Annotated[Count, doc("The upload's revision")]
    contributor: Annotated[Name | None, doc("The contributor's label, when the uploader gave one")]
    received_at: Annotated[Time, doc("When the collector stored it", Share.TIME)]


class ExportedProposal(_Part):
    """Added to each proposal of an exported episode."""

    hunk_context: Annotated[list[HunkContext], doc("Per hunk, in the order of hunks", Share.PARTS)]


class ExportedEpisode(_Part):
    """Added to an exported episode."""

    export_schema: Annotated[
        str,
        msgspec.Meta(extra_json_schema={"const": EXPORT_SCHEMA}),
        doc("agent-capture/export-episode@1", Share.ID, required=A),
    ]
    split: Annotated[
        Split | None, doc("With --split: the episode's side, from a hash of its id", required=E)
    ]
    collector: Annotated[
        CollectorRecord | None,
        doc("Exported from a team collector: where it came from", Share.PARTS),
    ]


#: Every part of the local episode, outermost first (the reference page's order).
PARTS: tuple[type[_Part], ...] = (
    Episode,
    Proposal,
    Hunk,
    Checkpoint,
    LateSignals,
    TierChange,
    TestRun,
    TestsSummary,
    RunBrief,
    Trajectory,
    TrajectoryStep,
)
