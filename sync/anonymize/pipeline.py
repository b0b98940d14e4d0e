"""The anonymized projection of one episode (`agent-capture/episode@1` in, a shareable episode out).

A pure function of the episode, the level, the workspace's globs, the salt and the names to
scrub: no clock, no files, no network. This module walks the episode's fields: which are copied,
hashed, dropped or read as text at each level (levels.py has the table). Each text goes through
text_stage.py (secrets replaced, identity scrubbed), which then checks the whole result.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any

from capture.episode.fields import field_marks, is_text, names
from capture.episode.model import Checkpoint, Episode, LateSignals, Proposal, TestRun
from capture.episode.vocabulary import (
    EPISODE_SCHEMA,
    RUN_SOURCES,
    TIER_REASONS,
    TIERS,
    RevertKind,
    Share,
)
from sync.anonymize.identity import Identity
from sync.anonymize.levels import Level
from sync.anonymize.paths import PathHasher, file_name, language_of, selected
from sync.anonymize.projection import Projection, WorkspacePolicy, content_hash, dumps
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets
from sync.anonymize.text_stage import TIMESTAMP as _TIMESTAMP
from sync.anonymize.text_stage import EpisodePass as _Pass
from sync.anonymize.text_stage import TextStage
from sync.anonymize.trajectory import shared_before, shared_task, shared_trajectory

__all__ = [
    "SHARED_SCHEMA",
    "Anonymizer",
    "Projection",
    "WorkspacePolicy",
    "content_hash",
    "dumps",
]

#: Same schema as `capture episodes --json`: fields are removed or rewritten per level (and
#: `level`, `language`, counts added), never given another meaning.
SHARED_SCHEMA = EPISODE_SCHEMA

#: Test runners named at the metrics level (the first word of a command, when it is one of these).
_RUNNERS = frozenset(
    {
        "pytest", "py.test", "tox", "nox", "unittest", "jest", "vitest", "mocha", "ava", "jasmine",
        "karma", "cargo", "go", "gotestsum", "npm", "npx", "yarn", "pnpm", "bun", "deno", "node",
        "python", "python3", "uv", "poetry", "hatch", "make", "mvn", "gradle", "gradlew",
        "dotnet", "ctest", "rspec", "rake", "bundle", "phpunit", "mix", "swift", "stack", "cabal",
        "dune", "bazel", "playwright", "cypress", "nextest",
    }
)  # fmt: skip


def _runner(command: str | None) -> str | None:
    if not command:
        return None
    for word in command.split():
        if "=" in word and not word.startswith("-"):
            continue  # FOO=bar pytest
        name = word.replace("\\", "/").rsplit("/", 1)[-1]
        return name if name in _RUNNERS else None
    return None


class Anonymizer:
    def __init__(
        self,
        salt: bytes,
        identity: Identity | None = None,
        *,
        detect_secrets: DetectSecrets | None = None,
    ) -> None:
        self.salt = salt
        self.identity_names = identity or Identity()
        # Separate keys per use, so that a path digest can never be matched with a secret digest
        # (the text stage holds the secrets' key).
        self._name_key = hmac.digest(salt, b"agent-capture/name", "sha256")
        self.paths = PathHasher(self._name_key)
        self.texts = TextStage(salt, identity or Identity(), detect_secrets)
        self.scanner = self.texts.scanner
        #: A text with its secrets replaced and identity scrubbed (bound once: called for every
        #: text of every episode).
        self._text: Callable[[str | None, str, _Pass], str | None] = self.texts.text

    def hashed(self, value: str | None) -> str | None:
        if value is None:
            return None
        return self.paths.digest(value)

    # -- the projection --------------------------------------------------------------------

    def project(self, episode: dict[str, Any], policy: WorkspacePolicy) -> Projection:
        level = policy.level
        root = episode.get("workspace") or ""
        roots = (root,) if root else ()
        text_level = level.carries_text
        # No text goes at the metrics level: the copied fields are left to the second scan.
        state = self.texts.start(_episode_texts(episode) if text_level else None, roots)

        proposals = []
        excluded = 0
        for p in episode.get("proposals") or []:
            path = p.get("file") or ""
            if not selected(path, policy.include, policy.exclude):
                excluded += 1
                continue
            proposals.append(self._proposal(p, level, state))
        if excluded and not proposals:
            return Projection(None, excluded_files=excluded)

        prompt = episode.get("prompt")
        out: dict[str, Any] = {
            "schema": SHARED_SCHEMA,
            "level": level.value,
            "id": episode["id"],
            "agent": state.copy(episode.get("agent")),
            "model": state.copy(episode.get("model")),
            "session_id": (
                state.copy(episode.get("session_id")) if level is Level.FULL else
                self.hashed(episode.get("session_id"))
            ),
            "turn_id": (
                state.copy(episode.get("turn_id")) if level is Level.FULL else
                self.hashed(episode.get("turn_id"))
            ),
            "workspace": self.hashed(root) if root else None,
            "source": state.copy(episode.get("source")),
            "prompt": self._text(prompt, "", state) if text_level else None,
            "prompt_chars": len(prompt) if prompt else 0,
            "started_at": episode.get("started_at"),
            "ended_at": episode.get("ended_at"),
            "settled_at": episode.get("settled_at"),
            "excluded_files": excluded,
            "proposals": proposals,
            "test_runs": [self._test_run(r, level, state) for r in episode.get("test_runs") or []],
        }  # fmt: skip
        if isinstance(episode.get("tests"), dict):
            out["tests"] = self._tests_summary(episode["tests"], level, state)
        self._trajectory(episode, out, level, state)
        self._tier_fields(episode, out, level, state)
        if not _EPISODE_FIELDS.issuperset(episode):
            self._extra(episode, out, _EPISODE_FIELDS, level, state)
        out["secrets_redacted"] = state.secrets
        out, serialized, reasons = self.texts.finish(out, state)
        return Projection(out, tuple(reasons), state.secrets, excluded, serialized)

    def _trajectory(
        self, episode: dict[str, Any], out: dict[str, Any], level: Level, state: _Pass
    ) -> None:
        def text(value: str | None, hint: str) -> str | None:
            return self._text(value, hint, state)

        def path(value: str) -> str:
            if level is Level.REDACTED:
                return self.paths.path(
                    value, hash_file_name=False, scrub=lambda n: text(n, "") or ""
                )
            return text(value, "") or ""

        if "task" in episode:
            out.update(shared_task(episode, level, text))
        if "trajectory" in episode:
            out["trajectory"] = shared_trajectory(
                episode["trajectory"], level, text, self.hashed, path, state.copy
            )
        by_id = {p.get("id"): p for p in episode.get("proposals") or ()}
        for shared in out["proposals"]:
            source = by_id.get(shared.get("id"))
            if source is not None and "before_text" in source:
                shared_before(source, shared, level, text)

    def _proposal(self, p: dict[str, Any], level: Level, state: _Pass) -> dict[str, Any]:
        def scrub_name(name: str) -> str:
            return self._text(name, "", state) or ""

        path = p.get("file") or ""
        plain = list(map(p.get, _PROPOSAL_PLAIN))
        state.copy_all(plain)
        if level is Level.METRICS:
            file = self.paths.path(path, hash_file_name=True)
        elif level is Level.REDACTED:
            file = self.paths.path(path, hash_file_name=False, scrub=scrub_name)
        else:
            file = scrub_name(path)
        hunks = p.get("hunks") or []
        out: dict[str, Any] = dict(
            zip(
                _PROPOSAL_OUT,
                (p.get("id"), file, language_of(path), *plain, len(hunks)),
                strict=True,
            )
        )
        if level.carries_text:
            text = self._text
            out["hunks"] = [
                {
                    "old_text": text(h.get("old_text"), path, state),
                    "new_text": text(h.get("new_text"), path, state),
                    "status": h.get("status"),
                }
                for h in hunks
            ]
        # Checkpoints hold only what our own code writes: window labels, times, measures.
        out["checkpoints"] = [_checkpoint(c) for c in p.get("checkpoints") or ()]
        self._tier_fields(p, out, level, state)
        if "late_signals" in p:
            out["late_signals"] = self._late(p["late_signals"], level, state)
        if not _PROPOSAL_FIELDS.issuperset(p):
            self._extra(p, out, _PROPOSAL_FIELDS, level, state)
        return out

    def _test_run(self, r: dict[str, Any], level: Level, state: _Pass) -> dict[str, Any]:
        def text(value: str | None, hint: str) -> str | None:
            return self._text(value, hint, state)

        plain = list(map(r.get, _TEST_RUN_PLAIN))
        state.copy_all(plain)
        runner = r.get("runner")
        out: dict[str, Any] = {
            "id": r.get("id"),
            "runner": state.copy(runner) if runner else _runner(r.get("command")),
            **dict(zip(_TEST_RUN_PLAIN, plain, strict=True)),
        }
        # The sources that saw the run: only the names our own code writes go out.
        seen = r.get("seen_by")
        out["seen_by"] = [s for s in seen if s in _RUN_SOURCES] if isinstance(seen, list) else None
        if level.carries_text:
            out["command"] = text(r.get("command"), "")
            out["name"] = text(r.get("name"), "")
            out["failing_ids"] = [text(f, "") for f in r.get("failing_ids") or []]
            # Where it ran and its report file: paths, scrubbed like any text.
            for key in ("cwd", "report"):
                if key in r:
                    out[key] = text(r[key], "")
        else:
            out["failing_count"] = len(r.get("failing_ids") or [])
        if not _TEST_RUN_FIELDS.issuperset(r):
            self._extra(r, out, _TEST_RUN_FIELDS, level, state)
        return out

    def _tests_summary(self, t: dict[str, Any], level: Level, state: _Pass) -> dict[str, Any]:
        """What the linked test runs say about the episode: counts, statuses and the transition
        go at every level; the failing tests' ids (paths and names) only with text."""
        out: dict[str, Any] = {}
        for key, value in t.items():
            if key == "failing_tests_in_edited_files":
                ids = value if isinstance(value, list) else []
                if level.carries_text:
                    out[key] = [self._text(f, "", state) for f in ids if isinstance(f, str)]
                else:
                    out["failing_tests_in_edited_files_count"] = len(ids)
            elif isinstance(value, dict) or value is None or isinstance(value, bool | int | float):
                out[key] = (
                    {k: state.copy(v) for k, v in value.items()}
                    if isinstance(value, dict)
                    else value
                )
            elif isinstance(value, str):
                out[key] = state.copy(value)
        return out

    def _tier_fields(
        self, source: dict[str, Any], out: dict[str, Any], level: Level, state: _Pass
    ) -> None:
        """`tier` and `tier_history` at every level: the tier's value, its rules version and
        time, and the reasons our rule table writes; any other reason is text (scrubbed at the
        text levels, dropped at metrics)."""
        if "tier" in source:
            out["tier"] = self._tier(source["tier"], level, state)
        if "tier_history" in source:
            history = source["tier_history"]
            decisions = (self._tier(d, level, state) for d in history or ())
            out["tier_history"] = [d for d in decisions if d is not None]

    def _tier(self, decision: Any, level: Level, state: _Pass) -> dict[str, Any] | None:
        if not isinstance(decision, dict):
            return None
        tier = decision.get("tier")
        reasons: list[str] = []
        for reason in decision.get("reasons") or ():
            if not isinstance(reason, str):
                continue
            if reason in TIER_REASONS:
                reasons.append(reason)
            elif level.carries_text:
                reasons.append(self._text(reason, "", state) or "")
        version = decision.get("rules_version")
        decided_at = decision.get("decided_at")
        return {
            "tier": tier if tier in _TIERS else None,
            "reasons": reasons,
            "rules_version": version if type(version) is int else None,
            "decided_at": decided_at if _is_timestamp(decided_at) else None,
        }

    def _late(self, late: Any, level: Level, state: _Pass) -> dict[str, Any] | None:
        """A proposal's late signals: numbers, flags and times at every level; the commits'
        SHAs only at the text levels (scrubbed like any text), flags saying whether there was
        one at every level."""
        if not isinstance(late, dict):
            return None
        out: dict[str, Any] = {}
        for key in _LATE_NUMBERS:
            value = late.get(key)
            out[key] = value if value is None or isinstance(value, bool | int | float) else None
        for key in _LATE_TIMES:
            value = late.get(key)
            out[key] = value if _is_timestamp(value) else None
        kind = late.get("revert_kind")
        out["revert_kind"] = kind if kind in _REVERT_KINDS else None
        for key, flag in _LATE_SHAS:
            sha = late.get(key)
            out[flag] = isinstance(sha, str) and bool(sha)
            if level.carries_text:
                out[key] = self._text(sha, "", state) if isinstance(sha, str) else None
        return out

    def _extra(
        self,
        source: dict[str, Any],
        out: dict[str, Any],
        known: frozenset[str],
        level: Level,
        state: _Pass,
    ) -> None:
        """Fields added to the episode schema after this code was written: numbers and flags go
        at every level; text only at the text levels, scrubbed like the rest."""
        for key, value in source.items():
            if key in known or key in out:
                continue
            kept = self._unknown(value, level, state)
            if kept is not _DROP:
                out[key] = kept

    def _unknown(self, value: Any, level: Level, state: _Pass) -> Any:
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return self._text(value, "", state) if level.carries_text else _DROP
        if isinstance(value, list):
            items = [self._unknown(v, level, state) for v in value]
            return [v for v in items if v is not _DROP]
        if isinstance(value, dict):
            items2 = {str(k): self._unknown(v, level, state) for k, v in value.items()}
            return {k: v for k, v in items2.items() if v is not _DROP}
        return _DROP


class _Drop:
    pass


_DROP: Any = _Drop()

# The field lists are the episode contract's (`capture.episode.model`), read from each field's
# `Share` mark: a field the contract adds is shared by its mark, or by value until one is given.
# Whether a record holds a field not listed is asked with `issuperset` (no set is built): 3x
# faster than a difference, asked of every episode, proposal and run.
_EPISODE_FIELDS = frozenset(names(Episode, Share.BY_VALUE, exclude=True))
_TIERS = frozenset(TIERS)
#: The sources our own code records a test run from (`seen_by` holds these, nothing else).
_RUN_SOURCES = RUN_SOURCES
#: Late signals as `LateSignals.as_json` writes them: numbers and flags, times, and the commits
#: (a SHA, with the flag that says there was one).
_LATE_NUMBERS = names(LateSignals, Share.COPIED)
_LATE_TIMES = names(LateSignals, Share.TIME)
_LATE_SHAS = tuple(
    (m.name, m.flag or m.name) for m in field_marks(LateSignals) if m.share is Share.COMMIT
)
_REVERT_KINDS = frozenset(RevertKind)
#: Copied as they are at every level (ids, paths, texts and parts each have their own rule).
_COPIED = (Share.COPIED, Share.TIME, Share.VOCABULARY)
_PROPOSAL_PLAIN = names(Proposal, *_COPIED)
#: In the order the store writes them, so that a stored checkpoint is copied as it is.
_CHECKPOINT_FIELDS = tuple(m.name for m in field_marks(Checkpoint))
_CHECKPOINT_TEMPLATE: dict[str, Any] = dict.fromkeys(_CHECKPOINT_FIELDS)
_TEST_RUN_PLAIN = names(TestRun, *_COPIED)
_PROPOSAL_FIELDS = frozenset(names(Proposal, Share.BY_VALUE, exclude=True))
#: A shared proposal's first fields, in order (then its hunks and checkpoints).
_PROPOSAL_OUT = ("id", "file", "language", *_PROPOSAL_PLAIN, "hunk_count")
_TEST_RUN_FIELDS = frozenset(names(TestRun, Share.BY_VALUE, exclude=True))


def _checkpoint(c: dict[str, Any]) -> dict[str, Any]:
    # Our own code writes checkpoints with these keys (older rows lack the later ones): merged
    # into the template, they come out in its order with None for what is missing, as the
    # comprehension below would give them, 4x faster. A key of another kind makes it longer.
    out = _CHECKPOINT_TEMPLATE | c
    if len(out) == len(_CHECKPOINT_FIELDS):
        return out
    return {k: c.get(k) for k in _CHECKPOINT_FIELDS}


def _is_timestamp(value: Any) -> bool:
    return type(value) is str and _TIMESTAMP.fullmatch(value) is not None


def _episode_texts(e: dict[str, Any]) -> list[str]:
    """Every text of an episode the projection may carry (ids and timestamps aside). Each text
    `_text` reads must be here: detectors are planned over these."""
    out = [v for v in map(e.get, _EPISODE_TEXTS) if type(v) is str]
    for p in e.get("proposals") or ():
        out += [v for v in map(p.get, _PROPOSAL_TEXTS) if type(v) is str]
        path = p.get("file")
        if type(path) is str:
            # At the redacted level the file name is read as a text of its own.
            out.append(file_name(path))
        for h in p.get("hunks") or ():
            out += [v for v in (h.get("old_text"), h.get("new_text")) if type(v) is str]
        for k in ("tier", "tier_history", "late_signals"):
            if p.get(k):
                out += _strings(p[k])
        if not _PROPOSAL_FIELDS.issuperset(p):
            out += _strings({k: p[k] for k in p.keys() - _PROPOSAL_FIELDS})
    for r in e.get("test_runs") or ():
        out += [v for v in map(r.get, _TEST_RUN_TEXTS) if type(v) is str]
        out += [f for f in r.get("failing_ids") or () if type(f) is str]
        if not _TEST_RUN_FIELDS.issuperset(r):
            out += _strings({k: r[k] for k in r.keys() - _TEST_RUN_FIELDS})
    tests = e.get("tests")
    if isinstance(tests, dict):
        out += _strings(tests)
    for k in ("tier", "tier_history"):
        if e.get(k):
            out += _strings(e[k])
    if not _EPISODE_FIELDS.issuperset(e):
        out += _strings({k: e[k] for k in e.keys() - _EPISODE_FIELDS})
    return out


# The texts a secret could hide in: every string field that is not an id, a time or a word.
_EPISODE_TEXTS = tuple(m.name for m in field_marks(Episode) if is_text(m))
_PROPOSAL_TEXTS = tuple(m.name for m in field_marks(Proposal) if is_text(m))
_TEST_RUN_TEXTS = tuple(m.name for m in field_marks(TestRun) if is_text(m))


def _strings(value: Any) -> list[str]:
    """Every string value (not key) in a JSON-like structure."""
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if type(v) is str:
            out.append(v)
        elif type(v) is dict:
            stack.extend(v.values())
        elif type(v) is list:
            stack.extend(v)
        elif isinstance(v, str):
            out.append(v)
    return out
