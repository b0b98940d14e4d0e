"""What every text of an episode goes through on its way out, and the checks after it.

For each text field the level lets through:

1. secrets are found (the scanner's engines, planned once over all of the episode's text) and
   replaced by `<SECRET:kind:hmac8>`, repeated until a scan finds nothing new;
2. identity is scrubbed (workspace path, home directories, user and host names, e-mail and IP
   addresses); credentials in URLs went in step 1;
3. a value replaced anywhere is replaced everywhere else it occurs in the episode.

Then the second scan: every string of the result is scanned again, and the result is searched
for every value replaced in step 1. Any hit quarantines the episode: it is never sent, and
`capture sync status` lists it.
"""

from __future__ import annotations

import hmac
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sync.anonymize.identity import HINTS as IDENTITY_HINTS
from sync.anonymize.identity import Identity, IdentityPlan, IdentityScrubber
from sync.anonymize.projection import dumps
from sync.anonymize.secrets import NO_PLAN, Plan, SecretScanner, redact
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets

__all__ = ["TIMESTAMP", "EpisodePass", "TextStage"]

#: Values shorter than this are not searched for elsewhere: too many innocent collisions.
_MIN_PROPAGATED = 6
#: No detector can match a shorter text (the shortest, `PWD=` and six characters, is 10 long).
_MIN_SECRET_TEXT = 10
#: A timestamp as our own code writes them (proposals' created, applied and settled times): no
#: detector matches one, and each is unique, so none would ever be remembered as clean.
TIMESTAMP = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?(?:Z|[+-][0-9]{2}:[0-9]{2})?"
)
_NOTHING = Plan(())


@dataclass(slots=True)
class EpisodePass:
    """What one episode's first pass learned, for the second."""

    roots: tuple[str, ...]
    plan: Plan
    identity: IdentityPlan
    values: dict[str, str] = field(default_factory=dict)  # replaced value -> placeholder
    #: Output strings the second scan must read: texts the first pass changed, and text fields
    #: copied as they were. (A text the first pass scanned and left unchanged is known clean.)
    unchecked: list[str] = field(default_factory=list)
    #: Texts the first pass changed only by scrubbing identity: every detector read them before
    #: (identity markers cannot make a secret), so the second scan reads them with our own rules
    #: and detect-secrets only, not the wide detectors (gitleaks, runs, context) again.
    scrubbed_only: list[str] = field(default_factory=list)
    secrets: int = 0  # placeholders written
    known_clean: set[str] = field(default_factory=set)

    def copy_all(self, values: list[Any]) -> None:
        known = self.known_clean
        self.unchecked += [
            v
            for v in values
            if type(v) is str
            and len(v) >= _MIN_SECRET_TEXT
            and v not in known
            and TIMESTAMP.fullmatch(v) is None
        ]

    def copy(self, value: Any) -> Any:
        if type(value) is str and len(value) >= _MIN_SECRET_TEXT and value not in self.known_clean:
            self.unchecked.append(value)
        return value


class TextStage:
    """Secrets and identity scrubbed from an episode's texts, values propagated, and the second
    scan. One per anonymizer: what it remembers (plans, clean texts) is deterministic."""

    def __init__(
        self, salt: bytes, identity: Identity, detect_secrets: DetectSecrets | None = None
    ) -> None:
        # Its own key, so that a secret digest can never be matched with a path digest.
        self._secret_key = hmac.digest(salt, b"agent-capture/secret", "sha256")
        self.scanner = SecretScanner(
            detect_secrets=detect_secrets if detect_secrets is not None else DetectSecrets(),
            # The identity plan is read from the scanner's pass over the episode's text.
            also=IDENTITY_HINTS,
        )
        #: The second scan's scanner for texts changed only by identity scrubbing.
        self.narrow = SecretScanner(
            detect_secrets=self.scanner.detect_secrets, wide=False, pass_of=self.scanner
        )
        self.identity = IdentityScrubber(identity)
        #: Short strings the second scan has read and found clean. The scanner is deterministic,
        #: so a string clean once is clean again; field values recur (agent names, reasons).
        self._known_clean: set[str] = set()

    def start(self, texts: Sequence[str] | None, roots: tuple[str, ...]) -> EpisodePass:
        """The pass over an episode whose `texts` (every text the projection may carry) are
        read; None: no text goes at this level (the copied fields are left to the second
        scan)."""
        if texts is None:
            return EpisodePass(roots, _NOTHING, IdentityPlan(), known_clean=self._known_clean)
        blob = "\n".join(texts)
        plan = self.scanner.plan(blob)
        lower, hits = self.scanner.literal_pass(blob)
        return EpisodePass(
            roots,
            plan,
            # The workspace path is replaced first: what identity is left is elsewhere.
            self.identity.plan_from(blob, lower, hits, roots),
            known_clean=self._known_clean,
        )

    def text(self, value: str | None, hint: str, state: EpisodePass) -> str | None:
        """`value` with its secrets replaced and identity scrubbed. `hint`: the file's name for
        a hunk's text, else empty."""
        if not value:
            return value
        if state.plan is NO_PLAN:
            # Most episodes: no detector can match in any of their texts (what `find` answers
            # for this plan), so only identity is left to scrub.
            scrubbed = self.identity.scrub(value, state.roots, state.identity)
            if scrubbed is not value and scrubbed != value:
                state.scrubbed_only.append(scrubbed)
            return scrubbed
        found: list[str] = []
        findings = self.scanner.find(value, hint, state.plan, found)
        out = value
        rounds = 0
        while findings and rounds < 3:
            out, replaced = redact(out, findings, self._secret_key)
            for original, placeholder in replaced:
                for v in (original, *found):
                    if original.find(v) >= 0:
                        for core in _cores(v):
                            state.values.setdefault(core, placeholder)
            rounds += 1
            found = []
            findings = self.scanner.find(out, hint, None, found)
        scrubbed = self.identity.scrub(out, state.roots, state.identity)
        if rounds:
            state.secrets += scrubbed.count("<SECRET:")
        if scrubbed is not value and scrubbed != value:
            (state.unchecked if rounds else state.scrubbed_only).append(scrubbed)
        return scrubbed

    def finish(
        self, out: dict[str, Any], state: EpisodePass
    ) -> tuple[dict[str, Any], str, list[str]]:
        """The episode once every value replaced is replaced everywhere, serialized, and why
        the second scan refuses it (empty: it may go)."""
        serialized = dumps(out)
        if state.values and _any_in(state.values, serialized):
            # A replaced value occurs somewhere else too: replace it there (a walk over the
            # whole episode, so only when the serialized form says it is needed).
            out = self._propagate(out, state)
            out["secrets_redacted"] = state.secrets
            serialized = dumps(out)
        return out, serialized, self._second_scan(serialized, state)

    def _propagate(self, out: dict[str, Any], state: EpisodePass) -> dict[str, Any]:
        values = sorted(state.values, key=len, reverse=True)
        pattern = re.compile("|".join(re.escape(v) for v in values))

        def fix(s: str) -> str:
            if not any(v in s for v in values):
                return s
            fixed, n = pattern.subn(lambda m: state.values[m.group()], s)
            state.secrets += n
            return fixed

        result = _map_strings(out, fix)
        assert isinstance(result, dict)
        state.unchecked = [fix(s) for s in state.unchecked]
        state.scrubbed_only = [fix(s) for s in state.scrubbed_only]
        return result

    def _second_scan(self, serialized: str, state: EpisodePass) -> list[str]:
        reasons: list[str] = []
        # Joined by newlines: every rule but the private-key block stops at a line's end, and that
        # one only grows when joined, so a hit in any string is a hit here.
        todo = "\n".join(state.unchecked)
        found = self.scanner.find(todo) if todo else []
        if state.scrubbed_only:
            scrubbed = "\n".join(state.scrubbed_only)
            if not self.narrow.surely_clean(scrubbed):
                found = found + self.narrow.find(scrubbed)
        for finding in found:
            reasons.append(f"second scan: {finding.kind} still present")
        if not found:
            # Short field values recur (agent and model names, outcome reasons): remember them.
            if len(self._known_clean) > 50_000:
                self._known_clean.clear()
            # Only what every detector read: a copied field equal to a scrubbed-only text skips
            # the second scan when remembered, and the narrow scanner alone read that text.
            self._known_clean.update(s for s in state.unchecked if len(s) < 200)
        for value, placeholder in state.values.items():
            if _occurs(value, serialized):
                kind = placeholder.split(":")[1]
                reasons.append(f"second scan: a replaced {kind} value is still present")
        return sorted(set(reasons))


def _occurs(value: str, serialized: str) -> bool:
    """Does `value` occur in the serialized episode, as it is or JSON-escaped?"""
    return value in serialized or dumps(value)[1:-1] in serialized


def _any_in(values: dict[str, str], serialized: str) -> bool:
    return any(_occurs(v, serialized) for v in values)


_EDGE_PUNCTUATION = "()[]{}<>,;:.!?'\"`"


def _cores(value: str) -> list[str]:
    """What to look for elsewhere in the episode once `value` was found: the value, without
    punctuation that clings to it in prose, and a URL credential's password on its own."""
    out = []
    for v in (value, value.strip(_EDGE_PUNCTUATION)):
        if len(v) >= _MIN_PROPAGATED and "<SECRET:" not in v:
            out.append(v)
        user, colon, password = v.partition(":")
        if colon and len(password) >= _MIN_PROPAGATED and "<SECRET:" not in password:
            out.append(password)
    return out


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value
