"""What crosses the wire: the JSON schemas of an upload batch and of the collector's answers.

The upload's schema is the episode contract's (`capture.episode`): generated from its types and
written out into the plain JSON Schema subset `validation.compile_schema` compiles, it is both
the validator's input and the OpenAPI description's content, so the contract, what the
documentation promises and what the collector enforces cannot drift apart. It is permissive
where anonymization legitimately removes or rewrites things (fields absent or null, paths
hashed, unknown fields from a newer client, a vocabulary's word a plain name) and strict about
types: a string where a number belongs is a 422 naming the field.
"""

from __future__ import annotations

from typing import Any

from capture.episode.fields import (
    EPISODE_ID_PATTERN,
    EPISODE_SCHEMA_PATTERN,
    MAX_INT,
    MAX_REVISION,
    TIMESTAMP_PATTERN,
)
from capture.episode.schemas import upload_episode_schema, upload_schema
from capture.episode.vocabulary import LEVELS, SUPPORTED_SCHEMAS

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

TEAM_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
CONTRIBUTOR_PATTERN = r"^[A-Za-z0-9_.:+/=-]{1,128}$"


def episode_schema() -> dict[str, Any]:
    """One episode as `capture episodes --json` prints it, after anonymization."""
    return upload_episode_schema()


def batch_schema() -> dict[str, Any]:
    """The body of `POST /v1/episodes`. The batch size limit is the collector's setting (413
    beyond it, like an oversized body), so it is stated in words, not as `maxItems`."""
    return upload_schema()


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
