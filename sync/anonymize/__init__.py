"""The anonymization pipeline: pure functions from an episode to what may leave the machine."""

from sync.anonymize.identity import Identity
from sync.anonymize.levels import LEVELS, Level, parse_level
from sync.anonymize.pipeline import SHARED_SCHEMA, Anonymizer
from sync.anonymize.projection import Projection, WorkspacePolicy, content_hash, dumps

__all__ = [
    "LEVELS",
    "SHARED_SCHEMA",
    "Anonymizer",
    "Identity",
    "Level",
    "Projection",
    "WorkspacePolicy",
    "content_hash",
    "dumps",
    "parse_level",
]
