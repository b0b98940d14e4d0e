"""Finding secrets in a text and replacing each with `<SECRET:kind:hmac8>`.

The placeholder keeps what a reader of an episode needs (that a secret of this kind stood here,
and whether two places hold the same one: the same value gives the same 8 hex digits) and
nothing else: the digits are a salted HMAC of the value, and the salt never leaves the machine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from typing import NamedTuple

from sync.anonymize.context import Context, find_in_context, has_user_name
from sync.anonymize.detect import (
    DETECT_ANCHORS,
    PROVIDER_HINTS,
    DetectSecrets,
    detect_lines,
    lower_keeping_offsets,
    no_provider_line,
    provider_literal_at,
)
from sync.anonymize.gitleaks import GitleaksRule, GitleaksRules
from sync.anonymize.keyed import hmac_sha256
from sync.anonymize.literals import literal_positions
from sync.anonymize.secret_rules import RULES, Rule
from sync.anonymize.tokens import TokenJudge, long_runs

__all__ = [
    "NO_PLAN",
    "PLACEHOLDER",
    "Finding",
    "Plan",
    "SecretScanner",
    "redact",
]

PLACEHOLDER = re.compile(r"<SECRET:[a-z0-9_]+:[0-9a-f]{8}>")


class Finding(NamedTuple):
    start: int
    end: int
    kind: str


class Plan(NamedTuple):
    """Which detectors can find anything in a body of text: decided once over all of an
    episode's text, so that each of its texts is scanned only by detectors that can hit.
    (Plans and findings are named tuples: made for every text, three times faster than frozen
    dataclasses.)"""

    tokens: tuple[Rule, ...]
    keywords: tuple[Rule, ...]
    #: The lines detect-secrets must read (see `detect_lines`); none: it need not run.
    detect_secrets: tuple[str, ...]
    #: gitleaks' rules that match somewhere.
    gitleaks: tuple[GitleaksRule, ...] = ()
    #: Unquoted runs judged secrets (high entropy, or a secret once decoded): (value, kind).
    runs: tuple[tuple[str, str], ...] = ()
    #: What the episode holds that changes how its texts are read (see context.py).
    context: Context = Context(False, False, False, False)
    #: The lines on which a rule of `keywords` matches: a text holding none needs none of them
    #: (a keyword rule's match stays on its anchor's line).
    keyword_lines: tuple[str, ...] = ()
    #: Likewise for the rules of `gitleaks` searched line by line (the others read every text).
    gitleaks_lines: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.tokens
            or self.keywords
            or self.detect_secrets
            or self.gitleaks
            or self.runs
            or not self.context.empty
        )


#: The plan of a text in which no detector can find anything.
NO_PLAN = Plan((), (), ())

# Literal words whose presence (in lower case) turns on one of the context readers.
_COMMAND_WORDS = (
    "--pass", "--pwd", "--token", "--secret", "--api-key", "--apikey", "--auth-token",
    "mysql", "-u ", "--user ",
)  # fmt: skip
_USER_WORDS = ("user", "login", "uid", "usr", "account")
_USER_WORD_SET = frozenset(_USER_WORDS)
_PASSWORD_WORDS = ("pass", "pwd")
_PEM_WORD = "private key-----"
_DETECT_WORDS = frozenset(DETECT_ANCHORS)
_PROVIDER_WORDS = frozenset(PROVIDER_HINTS)


#: How many plans a scanner keeps (an episode's redacted texts, read again).
_PLANS_KEPT = 16
_PLANNED_CHARS = 20_000
_CLEAN_KEPT = 256


@lru_cache(maxsize=1)
def _gitleaks() -> GitleaksRules:
    return GitleaksRules()


class SecretScanner:
    """Our rules first, then detect-secrets on the lines they leave undecided."""

    def __init__(
        self,
        rules: Sequence[Rule] = RULES,
        detect_secrets: DetectSecrets | None = None,
        *,
        wide: bool = True,
        also: Iterable[str] = (),
        pass_of: SecretScanner | None = None,
    ) -> None:
        """`wide`: also gitleaks' rules, unquoted runs (entropy, decoding) and the episode's
        context (pairs, split keys); off only to measure our own rules alone. `also`: more
        literals (in lower case) for the one pass to find, for a caller of `literal_pass`.
        `pass_of`: a scanner whose one pass finds all the literals this one needs (and more,
        which this one passes over), to be made with its automaton."""
        self.wide = wide
        self.gitleaks = _gitleaks() if wide else None
        self.judge = TokenJudge(self._decoded_kind)
        self._decoding = False
        self.tokens = tuple(r for r in rules if not r.keyword)
        self.keywords = tuple(r for r in rules if r.keyword)
        self.detect_secrets = detect_secrets
        anchors = {a for r in self.keywords for a in r.anchors}
        #: The keyword rules' anchors: most literals the one pass finds are others' (gitleaks'
        #: key words), which each keyword rule would otherwise step over at every anchor.
        self._anchors = frozenset(anchors)
        if detect_secrets is not None:
            anchors.update(DETECT_ANCHORS)
        # A plan finds the anchors and the token rules' probes in one pass over the lower-cased
        # text: a probe in the text is in the lower-cased text too, and each rule it may start
        # is then searched in the text as it is.
        self._rules_of: dict[str, list[int]] = {}  # lower-cased probe -> rules, by place
        for i, rule in enumerate(self.tokens):
            for probe in rule.probes:
                self._rules_of.setdefault(probe.lower(), []).append(i)
        words = anchors | set(self._rules_of)
        if detect_secrets is not None:
            words.update(PROVIDER_HINTS)
        if self.gitleaks is not None:
            words.update(self.gitleaks.keywords)
            words.update(self.gitleaks.family_words)
            words.update((*_COMMAND_WORDS, *_USER_WORDS, *_PASSWORD_WORDS, _PEM_WORD))
        words.update(also)
        self.words = frozenset(words)
        self._literal_hits: Callable[[str], list[tuple[str, int]]]
        if pass_of is not None and self.words <= pass_of.words:
            # One automaton read in turn over an episode's texts stays in the processor's
            # caches; a second one, read once an episode, is fetched from memory each time.
            self._literal_hits = pass_of._literal_hits
        else:
            self._literal_hits = literal_positions(sorted(words))
        #: The text `_plan` read last, lower-cased, and its literals (see `literal_pass`).
        self._last_pass: tuple[str, str, list[tuple[str, int]]] | None = None
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
        """The detectors that match somewhere in `text`. Planned over all of an episode's text
        joined by newlines, a detector left out cannot match in any one of its texts: token rules
        are searched in the whole text, keyword rules at every anchor, which is where `find`
        tries them too."""
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
        """True when nothing this scanner looks for can match in `text`, as one literal pass and
        a few character tests show: no literal of the pass, no quote, nothing a provider
        expression needs. Most texts the second scan reads again (a prompt, a command, with a
        path scrubbed) are such. For the scanner without the wide detectors (their rules
        without key words read every text); False says nothing."""
        if self.gitleaks is not None or "'" in text or '"' in text:
            return False
        if self._literal_hits(lower_keeping_offsets(text)):
            return False
        return self.detect_secrets is None or no_provider_line(text, False)

    def literal_pass(self, text: str) -> tuple[str, list[tuple[str, int]]]:
        """`text` lower-cased, offsets kept, and each literal of the one pass in it (those of
        `also` among them) with where it starts. The text planned last is not read again."""
        last = self._last_pass
        if last is not None and last[0] is text:
            return last[1], last[2]
        lower = lower_keeping_offsets(text)
        return lower, self._literal_hits(lower)

    def _plan(self, text: str) -> Plan:
        lower = lower_keeping_offsets(text)
        hits = self._literal_hits(lower)
        if not hits and self.gitleaks is None:
            # Most short texts: no token rule can start, no keyword rule has an anchor, and no
            # key word calls detect-secrets (a quoted or provider line still may).
            return Plan((), (), self._detect_lines(text, lower, (), None, None, False))
        present = {word for word, _ in hits}
        rules_of = self._rules_of
        started = sorted({i for word in present if word in rules_of for i in rules_of[word]})
        tokens = tuple(self.tokens[i] for i in started if self.tokens[i].pattern.search(text))
        anchors = self._anchors
        anchored = [h for h in hits if h[0] in anchors] if not present.isdisjoint(anchors) else []
        keyword_lines: dict[str, None] = {}
        keywords = (
            tuple(
                r
                for r in self.keywords
                if not present.isdisjoint(r.anchors)
                and _lines_matched(_keyword_spans(r, text, lower, anchored), text, keyword_lines)
            )
            if anchored
            else ()
        )
        data = text.encode("utf-8", "surrogatepass")
        # The unquoted runs are judged below; detect-secrets' provider lines need them too.
        judged = self.gitleaks is not None and not self._decoding
        found_runs = long_runs(data) if judged else None
        detect = self._detect_lines(
            text,
            lower,
            # Without one of its key words, only the text's quoted and provider runs are read.
            () if present.isdisjoint(_DETECT_WORDS) else hits,
            data,
            found_runs,
            not present.isdisjoint(_PROVIDER_WORDS) and provider_literal_at(text, hits),
        )
        if self.gitleaks is None:
            return Plan(tokens, keywords, detect, keyword_lines=tuple(keyword_lines))
        gitleaks_lines: list[str] = []
        gitleaks = self.gitleaks.plan(text, hits, data, present, lower, gitleaks_lines)
        runs = tuple(self.judge.plan(text, data, found_runs).items()) if judged else ()
        context = Context(
            any(r.kind == "aws_access_key" for r in tokens),
            _PEM_WORD in present,
            not present.isdisjoint(_USER_WORDS)
            and not present.isdisjoint(_PASSWORD_WORDS)
            and has_user_name(text, [at for word, at in hits if word in _USER_WORD_SET]),
            not present.isdisjoint(_COMMAND_WORDS),
        )
        # Set last: planning a decoded run (within `judge.plan`) plans another text first.
        self._last_pass = (text, lower, hits)
        if not (tokens or keywords or detect or gitleaks or runs) and context.empty:
            return NO_PLAN  # most episodes: each of their texts is then passed at once
        return Plan(
            tokens,
            keywords,
            detect,
            gitleaks,
            runs,
            context,
            tuple(keyword_lines),
            tuple(dict.fromkeys(gitleaks_lines)),
        )

    def _detect_lines(
        self,
        text: str,
        lower: str,
        hits: list[tuple[str, int]] | tuple[()],
        data: bytes | None,
        found_runs: set[bytes] | None,
        provider_literal: bool,
    ) -> tuple[str, ...]:
        if self.detect_secrets is None:
            return ()
        return detect_lines(text, lower, hits, data, found_runs, provider_literal)

    def find(
        self,
        text: str,
        hint: str = "",
        plan: Plan | None = None,
        values: list[str] | None = None,
    ) -> list[Finding]:
        """Non-overlapping findings in text order. `hint` is a file name (its type changes how
        detect-secrets reads values) or empty for free text. `plan`: from `plan()` over a text
        that contains this one (default: planned for this text alone). `values`, when given,
        receives each detector's own match before overlapping ones are merged."""
        if not text:
            return []
        alone = plan is None
        if alone:
            if (text, self._decoding) in self._clean_alone:
                return []
            plan = self.plan(text)
        assert plan is not None
        if plan is NO_PLAN or plan.empty:
            return []
        # Whether the answer is the same for every hint: detect-secrets reads by file type,
        # and some of gitleaks' rules apply to some paths only.
        any_hint = True
        spans: list[tuple[int, int, str]] = []
        for rule in plan.tokens:
            for m in rule.pattern.finditer(text):
                span = _token_span(rule, text, m)
                if span is not None:
                    spans.append((*span, rule.kind))
        passed: tuple[str, list[tuple[str, int]]] | None = None
        if plan.keywords and any(line in text for line in plan.keyword_lines):
            passed = self.literal_pass(text)
            lower = passed[0]
            hits = [h for h in passed[1] if h[0] in self._anchors]
            for rule in plan.keywords:
                spans.extend(_keyword_spans(rule, text, lower, hits))
        if (
            plan.detect_secrets
            and self.detect_secrets is not None
            and any(line in text for line in plan.detect_secrets)
        ):
            spans.extend(self.detect_secrets.find(text, hint, plan.detect_secrets))
            any_hint = False
        rules = plan.gitleaks
        if rules and not any(line in text for line in plan.gitleaks_lines):
            rules = tuple(r for r in rules if not r.line_bound)
        if rules and self.gitleaks is not None:
            if passed is None:
                passed = self.literal_pass(text)
            spans.extend(self.gitleaks.find(text, rules, hint, passed[1]))
            any_hint = any_hint and all(r.path is None for r in rules)
        if not plan.context.empty:
            spans.extend(find_in_context(text, plan.context))
        if plan.runs:
            # A run's span is kept only where no rule matched: a rule names the kind better,
            # and a run may be longer than the token a rule found in it (`junit-ghp_...`).
            ruled = sorted(spans)
            for value, kind in plan.runs:
                for run in _run_spans(text, value, kind):
                    if not any(a < run[1] and run[0] < b for a, b, _ in ruled):
                        spans.append(run)
        if spans:
            spans = [s for s in spans if not _inside_placeholder(text, s[0], s[1])]
        if not spans:
            if alone and any_hint:
                self._remember_clean(text)
            return []
        if values is not None:
            values.extend(text[a:b] for a, b, _ in spans)
        return _merge(spans)

    def _remember_clean(self, text: str) -> None:
        """A text planned alone in which no detector found anything, whatever the hint: a text
        redacted is read again so (with the file's name), then by the second scan (without)."""
        if len(self._clean_alone) >= _CLEAN_KEPT:
            self._clean_alone.clear()
        self._clean_alone.add((text, self._decoding))


def _lines_matched(
    spans: Iterator[tuple[int, int, str]], text: str, lines: dict[str, None]
) -> bool:
    """Whether `spans` holds any; the line of `text` each stands on is added to `lines`."""
    matched = False
    for start, _, _ in spans:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        lines[text[line_start : len(text) if line_end < 0 else line_end]] = None
        matched = True
    return matched


_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


def _run_spans(text: str, value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    """Where `value` stands in `text` as a whole run (not inside a longer one)."""
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        if (at == 0 or text[at - 1] not in _RUN_CHARS) and (
            end == len(text) or text[end] not in _RUN_CHARS
        ):
            stop = end
            while stop < len(text) and stop - end < 2 and text[stop] == "=":
                stop += 1  # base64 padding goes with its run
            yield at, stop, kind
        at = text.find(value, end)


def _keyword_spans(
    rule: Rule, text: str, lower: str, hits: list[tuple[str, int]]
) -> Iterator[tuple[int, int, str]]:
    """The rule's matches, tried at each of its anchors (`hits`: literals and where they stand
    in `lower`, the rule's anchors among them) and kept within the anchor's line."""
    # `lower` keeps `text`'s offsets, so an anchor found in one stands at the same place in both.
    subject = lower if rule.on_lower else text
    for word, at in hits:
        if word not in rule.anchors:
            continue
        end = lower.find("\n", at)
        m = rule.pattern.match(subject, at, len(lower) if end < 0 else end)
        if m is not None:
            a, b = m.span(rule.group)
            if b > a:
                yield a, b, rule.kind


def _token_span(rule: Rule, text: str, m: re.Match[str]) -> tuple[int, int] | None:
    start, end = m.span(rule.group)
    if end <= start:
        return None
    if rule.left_digits is not None:
        low, high = rule.left_digits
        i = m.start()
        while i > 0 and text[i - 1].isdigit() and m.start() - i < high + 1:
            i -= 1
        if not low <= m.start() - i <= high or (i > 0 and text[i - 1].isdigit()):
            return None
        return i, end
    if rule.left_edge and m.start() > 0:
        before = text[m.start() - 1]
        if before.isascii() and before.isalnum():
            return None
    return start, end


def _inside_placeholder(text: str, start: int, end: int) -> bool:
    if "<SECRET:" not in text:
        return False
    return any(m.start() < end and start < m.end() for m in PLACEHOLDER.finditer(text))


def _merge(spans: list[tuple[int, int, str]]) -> list[Finding]:
    """Overlapping spans become one; the kind of the first (leftmost, then longest) wins."""
    spans.sort(key=lambda s: (s[0], -s[1]))
    out: list[Finding] = []
    for start, end, kind in spans:
        if out and start < out[-1].end:
            if end > out[-1].end:
                out[-1] = Finding(out[-1].start, end, out[-1].kind)
            continue
        out.append(Finding(start, end, kind))
    return out


def redact(text: str, findings: Sequence[Finding], key: bytes) -> tuple[str, list[tuple[str, str]]]:
    """The text with each finding replaced by its placeholder; and (value, placeholder) pairs."""
    if not findings:
        return text, []
    parts: list[str] = []
    replaced: list[tuple[str, str]] = []
    at = 0
    for f in findings:
        value = text[f.start : f.end]
        digest = hmac_sha256(key, value.encode("utf-8", "surrogatepass")).hex()[:8]
        placeholder = f"<SECRET:{f.kind}:{digest}>"
        replaced.append((value, placeholder))
        parts.append(text[at : f.start])
        parts.append(placeholder)
        at = f.end
    parts.append(text[at:])
    return "".join(parts), replaced
