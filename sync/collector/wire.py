"""What crosses the wire: the JSON schemas of an upload batch and of the collector's answers.

These dicts are both the validator's input (`validation.compile_schema`) and the OpenAPI
description's content, so the two never disagree. The episode schema is permissive where
anonymization legitimately removes or rewrites things (code fields absent or null, paths hashed,
unknown fields from a newer client) and strict about types: a string where a number belongs is a
422 naming the field.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "CONTRIBUTOR_PATTERN",
    "EPISODE_ID_PATTERN",
    "EPISODE_SCHEMA_PATTERN",
    "BATCH_EXAMPLE",
    "ERROR_SCHEMA",
    "HEALTH_SCHEMA",
    "LEVELS",
    "MAX_INT",
    "MAX_REVISION",
    "REPORT_SCHEMA",
    "RESULTS_SCHEMA",
    "SUPPORTED_SCHEMAS",
    "TEAM_PATTERN",
    "TIMESTAMP_PATTERN",
    "batch_schema",
    "episode_schema",
]

LEVELS = ("metrics", "redacted", "full")
SUPPORTED_SCHEMAS = ("agent-capture/episode@1",)
EPISODE_SCHEMA_PATTERN = r"^agent-capture/episode@[0-9]{1,6}$"
EPISODE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$"
TEAM_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
CONTRIBUTOR_PATTERN = r"^[A-Za-z0-9_.:+/=-]{1,128}$"
TIMESTAMP_PATTERN = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}"
    r"(\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$"
)
# Integers are stored in 64-bit columns; revisions in 32-bit ones.
MAX_INT = 2**53
MAX_REVISION = 2**31 - 1

_TEXT: dict[str, Any] = {"type": ["string", "null"]}
_NAME: dict[str, Any] = {"type": ["string", "null"], "maxLength": 256}
_TIME: dict[str, Any] = {"type": ["string", "null"], "pattern": TIMESTAMP_PATTERN}
_RATE: dict[str, Any] = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
_COUNT: dict[str, Any] = {"type": ["integer", "null"], "minimum": 0, "maximum": MAX_INT}
_FLAG: dict[str, Any] = {"type": ["boolean", "null"]}
# Which version of the outcome rules decided a label (the outcomes work numbers them from 1).
_RULES: dict[str, Any] = {"type": ["integer", "null"], "minimum": 1, "maximum": 2**31 - 1}
_EXIT: dict[str, Any] = {"type": ["integer", "null"], "minimum": -(2**31), "maximum": 2**31 - 1}

_HUNK: dict[str, Any] = {
    "type": "object",
    "properties": {"old_text": _TEXT, "new_text": _TEXT, "status": _NAME},
}

_CHECKPOINT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "window": _NAME,
        "due_at": _TIME,
        "observed_at": _TIME,
        "similarity": _RATE,
        "retention": _RATE,
        "outcome": _NAME,
        "via": _NAME,
        "reason": _TEXT,
        "rules_version": _RULES,
        # How long after its due time the state it measured was read (history did not hold it).
        "late_seconds": {"type": ["number", "null"], "minimum": -1e9, "maximum": 1e9},
    },
}

# A tier decision as the episode JSON writes it (`tier`, each of `tier_history`).
_TIER: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {
        # A name, not an enum: a newer client's tier is stored, not refused.
        "tier": _NAME,
        "reasons": {"type": ["array", "null"], "items": {"type": "string"}},
        "rules_version": _RULES,
        "decided_at": _TIME,
    },
}
_TIER_HISTORY: dict[str, Any] = {"type": ["array", "null"], "items": _TIER}
_DAYS: dict[str, Any] = {"type": ["number", "null"], "minimum": 0, "maximum": 1e9}
# What became of a proposal's lines after the windows; at metrics the commits are flags only.
_LATE: dict[str, Any] = {
    "type": ["object", "null"],
    "properties": {
        "measured_at": _TIME,
        "lines": _COUNT,
        "committed_lines": _COUNT,
        "committed_at": _TIME,
        "renamed": _FLAG,
        "churn_14d": _RATE,
        "churn_30d": _RATE,
        "days_observed": _DAYS,
        "reverted_at": _TIME,
        "revert_kind": _NAME,
        "fixed_at": _TIME,
        "syntax_errors_added": _COUNT,
        "markers_added": _COUNT,
        "file_gone": _FLAG,
        "committed": _FLAG,
        "reverted": _FLAG,
        "fixed": _FLAG,
        "commit": _NAME,
        "reverted_by": _NAME,
        "fixed_by": _NAME,
    },
}
_PROPOSAL: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": _NAME,
        "file": _TEXT,
        "state": _NAME,
        "outcome": _NAME,
        "reason": _TEXT,
        "rules_version": _RULES,
        "similarity": _RATE,
        "retention": _RATE,
        "chars_added": _COUNT,
        "chars_removed": _COUNT,
        "lines_added": _COUNT,
        "lines_removed": _COUNT,
        "agent": _NAME,
        "model": _NAME,
        "tool": _NAME,
        "source": _NAME,
        "language": _NAME,
        "backfilled": _FLAG,
        "created_file": _FLAG,
        "created_at": _TIME,
        "applied_at": _TIME,
        "decided_by": _NAME,
        "settled_at": _TIME,
        "hunks": {"type": ["array", "null"], "items": _HUNK},
        "checkpoints": {"type": ["array", "null"], "items": _CHECKPOINT},
        "tier": _TIER,
        "tier_history": _TIER_HISTORY,
        "late_signals": _LATE,
    },
}

_TEST_RUN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": _NAME,
        "command": _TEXT,
        "name": _TEXT,
        "source": _NAME,
        "exit_code": _EXIT,
        # The exit code the shell reported (a hook), beside the runner's own.
        "shell_exit_code": _EXIT,
        # The sources that saw this one run (hook, wrapper, junit, ...), kept as one run.
        "seen_by": {"type": ["array", "null"], "items": {"type": "string", "maxLength": 256}},
        "passed": _COUNT,
        "failed": _COUNT,
        "errors": _COUNT,
        "skipped": _COUNT,
        "failing_ids": {"type": ["array", "null"], "items": {"type": "string"}},
        "started_at": _TIME,
        "duration_s": {"type": ["number", "null"], "minimum": 0, "maximum": 1e9},
    },
}


def episode_schema() -> dict[str, Any]:
    """One episode as `capture episodes --json` prints it, after anonymization."""
    return {
        "type": "object",
        "required": ["schema", "id", "proposals"],
        "properties": {
            "schema": {"type": "string", "pattern": EPISODE_SCHEMA_PATTERN},
            "id": {"type": "string", "pattern": EPISODE_ID_PATTERN},
            "agent": _NAME,
            "model": _NAME,
            "session_id": _NAME,
            "turn_id": _NAME,
            "workspace": _TEXT,
            "prompt": _TEXT,
            "source": _NAME,
            "started_at": _TIME,
            "ended_at": _TIME,
            "settled_at": _TIME,
            "proposals": {"type": "array", "items": _PROPOSAL},
            "test_runs": {"type": ["array", "null"], "items": _TEST_RUN},
            "tier": _TIER,
            "tier_history": _TIER_HISTORY,
        },
    }


def batch_schema() -> dict[str, Any]:
    """The body of `POST /v1/episodes`. The batch size limit is the collector's setting (413
    beyond it, like an oversized body), so it is stated in words, not as `maxItems`."""
    return {
        "type": "object",
        "required": ["episodes"],
        "additionalProperties": False,
        "properties": {
            "episodes": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "revision", "idempotency_key", "level", "episode"],
                    "additionalProperties": False,
                    "properties": {
                        "id": {"type": "string", "pattern": EPISODE_ID_PATTERN},
                        "revision": {"type": "integer", "minimum": 1, "maximum": MAX_REVISION},
                        "idempotency_key": {"type": "string", "maxLength": 160},
                        "level": {"type": "string", "enum": list(LEVELS)},
                        "episode": episode_schema(),
                    },
                },
            }
        },
    }


BATCH_EXAMPLE: dict[str, Any] = {
    "episodes": [
        {
            "id": "0194f3a2b7c1e9d2a",
            "revision": 1,
            "idempotency_key": "0194f3a2b7c1e9d2a:1",
            "level": "metrics",
            "episode": {
                "schema": "agent-capture/episode@1",
                "id": "0194f3a2b7c1e9d2a",
                "agent": "claude-code",
                "model": "opus",
                "source": "hook",
                "started_at": "2026-11-30T09:12:03.120Z",
                "ended_at": "2026-11-30T09:12:41.007Z",
                "settled_at": "2026-11-30T09:22:41.007Z",
                "proposals": [
                    {
                        "id": "0194f3a2b7c1f0a11",
                        "file": "src/h-3f9a1c2e/app.py",
                        "state": "applied",
                        "outcome": "kept",
                        "similarity": 0.98,
                        "retention": 0.97,
                        "chars_added": 120,
                        "chars_removed": 14,
                        "lines_added": 4,
                        "lines_removed": 1,
                        "tool": "Edit",
                        "created_at": "2026-11-30T09:12:10.400Z",
                        "applied_at": "2026-11-30T09:12:10.400Z",
                        "hunks": [{"status": "tracking"}],
                        "checkpoints": [
                            {
                                "window": "10m",
                                "due_at": "2026-11-30T09:22:10.400Z",
                                "observed_at": "2026-11-30T09:22:10.650Z",
                                "similarity": 0.98,
                                "retention": 0.97,
                                "outcome": "kept",
                                "via": "disk",
                            }
                        ],
                    }
                ],
                "test_runs": [
                    {
                        "name": "pytest",
                        "source": "wrapper",
                        "exit_code": 0,
                        "passed": 41,
                        "failed": 0,
                        "errors": 0,
                        "skipped": 1,
                        "started_at": "2026-11-30T09:12:50.000Z",
                        "duration_s": 3.2,
                    }
                ],
            },
        }
    ]
}

RESULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["results"],
    "properties": {
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "revision", "status"],
                "properties": {
                    "id": {"type": "string"},
                    "revision": {"type": "integer"},
                    "status": {"type": "string", "enum": ["accepted", "duplicate", "rejected"]},
                    "error": {"type": "string"},
                },
            },
        }
    },
}

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error", "message"],
    "properties": {
        "error": {"type": "string"},
        "message": {"type": "string"},
        "field": {"type": ["string", "null"]},
    },
}

HEALTH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["status", "database", "version", "limits"],
    "properties": {
        "status": {"type": "string", "enum": ["ok"]},
        "database": {"type": "string", "enum": ["sqlite", "postgresql"]},
        "version": {"type": "string"},
        "limits": {
            "type": "object",
            "required": ["max_body_bytes", "max_batch", "max_level"],
            "properties": {
                "max_body_bytes": {"type": "integer"},
                "max_batch": {"type": "integer"},
                "max_level": {"type": "string", "enum": list(LEVELS)},
            },
        },
    },
}

_RATIO: dict[str, Any] = {
    "type": "object",
    "required": ["value", "numerator", "denominator"],
    "properties": {
        "value": {"type": ["number", "null"]},
        "numerator": {"type": "number"},
        "denominator": {"type": "number"},
    },
}

_GROUP: dict[str, Any] = {
    "type": "object",
    "required": ["key", "suppressed"],
    "properties": {
        "key": {"type": ["string", "null"]},
        "suppressed": {"type": "boolean"},
        "reason": {"type": "string"},
        "contributors": {"type": "integer"},
        "episodes": {"type": "integer"},
        "proposals": {"type": "object"},
        "outcomes": {"type": "object"},
        "rates": {"type": "object", "additionalProperties": _RATIO},
        "chars_added": {"type": "integer"},
        "lines_added": {"type": "integer"},
        "test_runs": {"type": "object"},
        # Proposals per current tier, how many have one, and the debt rate over the tiers of
        # edits that passed the short-term checks (gold, silver, edited, debt).
        "tiers": {
            "type": "object",
            "properties": {
                "proposals": {"type": "object", "additionalProperties": {"type": "integer"}},
                "tiered": {"type": "integer"},
                "debt_rate": _RATIO,
            },
        },
        # Mean retention at each checkpoint window, shortest first.
        "retention_curve": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "window": {"type": "string"},
                    "checkpoints": {"type": "integer"},
                    "mean_retention": {"type": ["number", "null"]},
                },
            },
        },
        # Median seconds from an episode's first applied proposal to its first linked run.
        "time_to_first_test": {
            "type": "object",
            "properties": {
                "median_s": {"type": ["number", "null"]},
                "episodes": {"type": "integer"},
            },
        },
        # Episodes whose failing run was followed by a passing one, of those with a failing run.
        "repairs": {
            "type": "object",
            "properties": {
                "repaired": {"type": "integer"},
                "failing": {"type": "integer"},
                "rate": _RATIO,
            },
        },
    },
}

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["team", "min_contributors", "total", "by_agent", "by_model", "by_week"],
    "properties": {
        "team": {"type": "string"},
        "generated_at": {"type": "string"},
        "since": {"type": ["string", "null"]},
        "until": {"type": ["string", "null"]},
        "min_contributors": {"type": "integer"},
        "total": _GROUP,
        "by_agent": {"type": "array", "items": _GROUP},
        "by_model": {"type": "array", "items": _GROUP},
        "by_week": {"type": "array", "items": _GROUP},
    },
}
