"""The scanner: every engine behind one `find(text, hint) -> spans`, with the batching that
keeps throughput (see engine.py).

An episode's texts are planned together: one literal pass over all of them joined by newlines
finds every engine's words, each engine plans over that body, and each text is then read only by
the engines whose plan is not None (`Plan`). Overlapping spans are merged; a span inside a
placeholder already written is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from sync.anonymize.secrets.context import ContextEngine
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets
from sync.anonymize.secrets.engine import Body, SecretEngine, Span
from sync.anonymize.secrets.gitleaks import gitleaks_rules
from sync.anonymize.secrets.literals import literal_positions, lower_keeping_offsets
from sync.anonymize.secrets.our_rules import RULES, OurRules, Rule
from sync.anonymize.secrets.redaction import inside_placeholder
from sync.anonymize.secrets.runs import UnquotedRuns, long_runs

__all__ = ["NO_PLAN", "Plan", "SecretScanner"]


class Plan(NamedTuple):
    """Each engine's plan over a body of text, in the scanner's order of engines (None: the
    engine can match nowhere in it). Decided once over all of an episode's text, so that each of
    its texts is read only by engines that can find something. (Plans and spans are named
    tuples: made for every text, three times faster than frozen dataclasses.)"""

    parts: tuple[Any, ...]
    #: Where `parts` are not None (what `find` reads).
    active: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return self.parts.count(None) == len(self.parts)


def _plan_of(parts: tuple[Any, ...]) -> Plan:
    return Plan(parts, tuple(i for i, part in enumerate(parts) if part is not None))


#: The plan of a text in which no engine can find anything.
NO_PLAN = Plan(())

#: How many plans a scanner keeps (an episode's redacted texts, read again).
_PLANS_KEPT = 16
_PLANNED_CHARS = 20_000
_CLEAN_KEPT = 256


class SecretScanner:
    """The engines in their order: our rules, detect-secrets, gitleaks' rules, the episode's
    context, unquoted runs. The order decides which kind a span gets when two engines find the
    same one (the first engine's)."""

    def __init__(
        self,
        rules: Sequence[Rule] = RULES,
        detect_secrets: DetectSecrets | None = None,
        *,
        wide: bool = True,
        also: Iterable[str] = (),
        pass_of: SecretScanner | None = None,
    ) -> None:
        """`rules`: our rules to run; `detect_secrets`: its engine, or None to leave it out.
        `wide`: also gitleaks' rules, the episode's context (pairs, split keys) and unquoted
        runs (entropy, decoding); off only to measure the narrow engines alone. `also`: more
        literals (in lower case) for the one pass to find, for a caller of `literal_pass`.
        `pass_of`: a scanner whose one pass finds all the literals this one needs (and more,
        which this one passes over), to be made with its automaton."""
        ours = OurRules(rules)
        engines: list[SecretEngine] = [ours]
        if detect_secrets is not None:
            engines.append(detect_secrets)
        if wide:
            aws = [r for r in ours.tokens if r.kind == "aws_access_key"]
            engines += [gitleaks_rules(), ContextEngine(aws), UnquotedRuns(self._decoded_kind)]
        self.engines = tuple(engines)
        # Bound once: `plan` calls them for every episode, `find` for every text.
        self._planners = tuple(e.plan for e in self.engines)
        self._finds = tuple((e.find, e.fallback) for e in self.engines)
        self.detect_secrets = detect_secrets
        self._decoding = False
        self._reads_long_runs = any(e.reads_long_runs for e in self.engines)
        self.words = frozenset(also).union(*(e.words for e in self.engines))
        self._literal_hits: Callable[[str], list[tuple[str, int]]]
        if pass_of is not None and self.words <= pass_of.words:
            # One automaton read in turn over an episode's texts stays in the processor's
            # caches; a second one, read once an episode, is fetched from memory each time.
            self._literal_hits = pass_of._literal_hits
        else:
            self._literal_hits = literal_positions(sorted(self.words))
        #: The text `_plan` read last, lower-cased, and its literals (see `literal_pass`).
        self._last_pass: tuple[str, str, list[tuple[str, int]]] | None = None
        #: The text `find` read last and its literal pass (`_literals_of`).
        self._text_pass: tuple[str, tuple[str, list[tuple[str, int]]]] | None = None
        #: The last few texts planned on their own, and their plans: a text redacted and read
        #: again (`find` with no plan) is the second scan's text too when it is the episode's
        #: only redacted one. Plans are deterministic, so a text planned once is planned alike.
        self._plans: dict[tuple[str, bool], Plan] = {}
        #: Texts (with the decoding flag, as plans are kept) found clean by `_remember_clean`.
        self._clean_alone: set[tuple[str, bool]] = set()

    def _decoded_kind(self, text: str) -> str | None:
        """The kind of the first secret in a decoded run (runs in it are not decoded again)."""
        if self._decoding:
            return None
        self._decoding = True
        try:
            found = self.find(text)
        finally:
            self._decoding = False
        return found[0].kind if found else None

    def plan(self, text: str) -> Plan:
        """What each engine can match in `text`. Planned over all of an episode's text joined by
        newlines, an engine left out cannot match in any one of its texts."""
        key = (text, self._decoding)
        known = self._plans.get(key)
        if known is not None:
            return known
        plan = self._plan(text)
        if len(text) > _PLANNED_CHARS:
            return plan
        if len(self._plans) >= _PLANS_KEPT:
            self._plans.clear()
        self._plans[key] = plan
        return plan

    def surely_clean(self, text: str) -> bool:
        """True when nothing this scanner looks for can match in `text`, as a few character
        tests and one literal pass show: no engine can find anything in a text without its
        words. Most texts the second scan reads again (a prompt, a command, with a path
        scrubbed) are such. False says nothing (a wide scanner's runs read every text)."""
        if not all(e.silent_without_literals(text) for e in self.engines):
            return False
        return not self._literal_hits(lower_keeping_offsets(text))

    def literal_pass(self, text: str) -> tuple[str, list[tuple[str, int]]]:
        """`text` lower-cased, offsets kept, and each literal of the one pass in it (those of
        `also` among them) with where it starts. The text planned last is not read again."""
        last = self._last_pass
        if last is not None and last[0] is text:
            return last[1], last[2]
        lower = lower_keeping_offsets(text)
        return lower, self._literal_hits(lower)

    def _literals_of(self, text: str) -> tuple[str, list[tuple[str, int]]]:
        """`literal_pass(text)`, made once for the engines that read it in the same text."""
        known = self._text_pass
        if known is not None and known[0] is text:
            return known[1]
        found = self.literal_pass(text)
        self._text_pass = (text, found)
        return found

    def _plan(self, text: str) -> Plan:
        lower = lower_keeping_offsets(text)
        hits = self._literal_hits(lower)
        body = Body(text, lower, hits, self._decoding)
        if self._reads_long_runs and not self._decoding:
            body.long_runs = long_runs(body.data)
        parts = tuple([plan(body) for plan in self._planners])
        # Set last: planning a decoded run (within the runs' plan) plans another text first.
        self._last_pass = (text, lower, hits)
        if parts.count(None) == len(parts):
            return NO_PLAN  # most episodes: each of their texts is then passed at once
        return _plan_of(parts)

    def find(
        self,
        text: str,
        hint: str = "",
        plan: Plan | None = None,
        values: list[str] | None = None,
    ) -> list[Span]:
        """Non-overlapping spans in text order. `hint` is a file name (its type changes how
        detect-secrets reads values) or empty for free text. `plan`: from `plan()` over a text
        that contains this one (default: planned for this text alone). `values`, when given,
        receives each engine's own match before overlapping ones are merged."""
        if not text:
            return []
        alone = plan is None
        if alone:
            if (text, self._decoding) in self._clean_alone:
                return []
            plan = self.plan(text)
        assert plan is not None
        if not plan.active:  # NO_PLAN (a plan made by `plan` is empty only so)
            return []
        literals = self._literals_of
        finds = self._finds
        parts = plan.parts
        spans: list[Span] = []
        fallback: list[Span] = []
        for i in plan.active:
            find, is_fallback = finds[i]
            found = find(text, hint, parts[i], literals)
            if found:
                (fallback if is_fallback else spans).extend(found)
        if fallback:
            # A fallback span is kept only where no other engine found a secret.
            ruled = sorted(spans)
            for span in fallback:
                if not any(a < span.end and span.start < b for a, b, _ in ruled):
                    spans.append(span)
        if spans:
            spans = [s for s in spans if not inside_placeholder(text, s.start, s.end)]
        if not spans:
            if alone and not any(self.engines[i].reads_hint(text, parts[i]) for i in plan.active):
                self._remember_clean(text)
            return []
        if values is not None:
            values.extend(text[a:b] for a, b, _ in spans)
        return _merge(spans)

    def _remember_clean(self, text: str) -> None:
        """A text planned alone in which no engine found anything, whatever the hint: a text
        redacted is read again so (with the file's name), then by the second scan (without)."""
        if len(self._clean_alone) >= _CLEAN_KEPT:
            self._clean_alone.clear()
        self._clean_alone.add((text, self._decoding))


def _merge(spans: list[Span]) -> list[Span]:
    """Overlapping spans become one; the kind of the first (leftmost, then longest) wins."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[Span] = []
    for start, end, kind in spans:
        if out and start < out[-1].end:
            if end > out[-1].end:
                out[-1] = Span(out[-1].start, end, out[-1].kind)
            continue
        out.append(Span(start, end, kind))
    return out
