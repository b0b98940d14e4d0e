"""gitleaks' provider rules, read as data (rules/gitleaks_data.py) and compiled with google-re2.

A rule is tried only on text holding one of its key words (gitleaks' own prefilter; the key
words join the scanner's one literal pass), and its expression runs in re2, whose time is linear
in the text whatever the expression. What a rule reports is its secret group (or the first
group that matched, or the whole match), kept when its entropy reaches the rule's floor and no
allow-list of the rule or of the whole set lets it pass, as gitleaks decides.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import re2

from sync.anonymize.rules import gitleaks_data

__all__ = ["GitleaksRule", "GitleaksRules"]

# Rules whose hits our own rules report under a better kind, or which only restate the key-word
# rule in a weaker form, are still run: a second opinion costs little once the key word is there.
_ALLOW_ANY, _ALLOW_ALL = "OR", "AND"


def _entropy(value: str) -> float:
    n = len(value)
    if not n:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


@dataclass(frozen=True, slots=True)
class _Allow:
    condition: str
    target: str  # secret, match or line
    regexes: tuple[Any, ...]
    stopwords: tuple[str, ...]

    def allows(self, secret: str, match: str, line: str) -> bool:
        subject = {"match": match, "line": line}.get(self.target, secret)
        tests: list[bool] = []
        if self.regexes:
            tests.append(any(r.search(subject) for r in self.regexes))
        if self.stopwords:
            low = secret.lower()
            tests.append(any(w in low for w in self.stopwords))
        if not tests:
            return False
        return all(tests) if self.condition == _ALLOW_ALL else any(tests)


@dataclass(frozen=True, slots=True)
class GitleaksRule:
    id: str
    keywords: tuple[str, ...]
    secret_group: int
    entropy: float
    pattern: Any  # re2 pattern on str
    pattern_bytes: Any  # the same on UTF-8 bytes, for planning over a whole episode
    path: Any | None = None
    allow: tuple[_Allow, ...] = field(default=())

    @property
    def kind(self) -> str:
        return re.sub(r"[^a-z0-9]+", "_", self.id.lower()).strip("_")


def _compile(expression: str) -> tuple[Any, Any]:
    options = re2.Options()
    options.max_mem = 8 << 20
    return re2.compile(expression, options), re2.compile(expression.encode(), options)


def _load() -> tuple[list[GitleaksRule], tuple[Any, ...], tuple[str, ...]]:
    rules: list[GitleaksRule] = []
    for raw in gitleaks_data.RULES:
        if raw["id"] in gitleaks_data.NOT_RE2:
            # None today; were one to appear, it is left out rather than run without a bound.
            continue
        on_text, on_bytes = _compile(raw["regex"])
        allow = tuple(
            _Allow(
                a.get("condition", _ALLOW_ANY),
                a.get("regexTarget", "secret"),
                tuple(re2.compile(r) for r in a.get("regexes", ())),
                tuple(w.lower() for w in a.get("stopwords", ())),
            )
            for a in raw.get("allowlists", ())
        )
        path = raw.get("path")
        rules.append(
            GitleaksRule(
                raw["id"],
                tuple(raw["keywords"]),
                raw["secret_group"],
                raw["entropy"],
                on_text,
                on_bytes,
                re2.compile(path) if path else None,
                allow,
            )
        )
    glob_regexes = tuple(re2.compile(r) for r in gitleaks_data.GLOBAL_REGEXES)
    glob_stop = tuple(w.lower() for w in gitleaks_data.GLOBAL_STOPWORDS)
    return rules, glob_regexes, glob_stop


class GitleaksRules:
    """The rule set, compiled once (about 0.1 s)."""

    def __init__(self) -> None:
        self.rules, self._global_regexes, self._global_stopwords = _load()
        self.always = tuple(r for r in self.rules if not r.keywords)
        self.by_keyword: dict[str, list[GitleaksRule]] = {}
        for rule in self.rules:
            for word in rule.keywords:
                self.by_keyword.setdefault(word, []).append(rule)

    @property
    def keywords(self) -> tuple[str, ...]:
        return tuple(self.by_keyword)

    def plan(self, present: Iterable[str], blob: bytes) -> tuple[GitleaksRule, ...]:
        """The rules that match somewhere in `blob` (an episode's texts, UTF-8), among those one
        of whose key words is `present` in its lower-cased text."""
        seen: dict[str, GitleaksRule] = {}
        for word in present:
            for rule in self.by_keyword.get(word, ()):
                seen.setdefault(rule.id, rule)
        for rule in self.always:
            seen.setdefault(rule.id, rule)
        return tuple(r for r in seen.values() if r.pattern_bytes.search(blob) is not None)

    def find(
        self, text: str, rules: Iterable[GitleaksRule], hint: str = ""
    ) -> Iterator[tuple[int, int, str]]:
        """(start, end, kind) of each secret the rules report in `text`."""
        for rule in rules:
            if rule.path is not None and not (hint and rule.path.search(hint)):
                continue
            for m in rule.pattern.finditer(text):
                span = _secret_span(m, rule.secret_group)
                if span is None:
                    continue
                a, b = span
                secret = text[a:b]
                if rule.entropy and _entropy(secret) <= rule.entropy:
                    continue
                if self._allowed(rule, secret, m.group(0), _line_of(text, a)):
                    continue
                yield a, b, rule.kind

    def _allowed(self, rule: GitleaksRule, secret: str, match: str, line: str) -> bool:
        if any(r.search(secret) for r in self._global_regexes):
            return True
        low = secret.lower()
        if any(w in low for w in self._global_stopwords):
            return True
        return any(a.allows(secret, match, line) for a in rule.allow)


def _secret_span(m: Any, group: int) -> tuple[int, int] | None:
    if group:
        a, b = m.span(group)
        return (a, b) if a >= 0 and b > a else None
    groups = len(m.groups())
    for g in range(1, groups + 1):
        a, b = m.span(g)
        if a >= 0 and b > a:
            return a, b
    a, b = m.span(0)
    return (a, b) if b > a else None


def _line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : len(text) if end < 0 else end]
