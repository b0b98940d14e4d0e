"""gitleaks' provider rules as an engine: the rule set (rules/gitleaks.toml) compiled with
google-re2 (`gitleaks_rules`), searched as gitleaks would.

A rule is tried only on text holding one of its key words (gitleaks' own prefilter; the key
words join the scanner's one literal pass), and its expression runs in re2, whose time is linear
in the text whatever the expression. What a rule reports is its secret group (or the first
group that matched, or the whole match), kept when its entropy reaches the rule's floor and no
allow-list of the rule or of the whole set lets it pass, as gitleaks decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any, NamedTuple

import re2

from sync.anonymize.rules.gitleaks_config import GitleaksConfig, gitleaks_config
from sync.anonymize.secrets.engine import Body, Literals, Span, prepared
from sync.anonymize.secrets.entropy import shannon_entropy
from sync.anonymize.secrets.gitleaks_rules import GitleaksRule, compile_rules, options
from sync.anonymize.secrets.re2_bytes import found as re2_found
from sync.anonymize.secrets.re2_bytes import found_in_text

__all__ = ["GitleaksPlan", "GitleaksRules", "gitleaks_rules"]


class GitleaksPlan(NamedTuple):
    """gitleaks' rules that match somewhere in a body."""

    rules: tuple[GitleaksRule, ...]
    #: The lines on which a rule searched line by line (`GitleaksRule.line_bound`) matched: a
    #: text holding none of them needs none of those rules...
    lines: tuple[str, ...]
    #: ...only these.
    free: tuple[GitleaksRule, ...]
    #: Whether some of `rules`, and of `free`, apply to some paths only (then the hint counts).
    rules_read_paths: bool
    free_read_paths: bool


def _plan_of(rules: tuple[GitleaksRule, ...], lines: tuple[str, ...]) -> GitleaksPlan:
    free = tuple(r for r in rules if not r.line_bound)
    return GitleaksPlan(
        rules,
        lines,
        free,
        any(r.path is not None for r in rules),
        any(r.path is not None for r in free),
    )


@lru_cache(maxsize=1)
def gitleaks_rules() -> GitleaksRules:
    """The vendored rule set, compiled once a process (about 0.3 s, on first use)."""
    return GitleaksRules()


#: The rules some key words call on (see `GitleaksRules._candidates`).
_Candidates = tuple[
    tuple[tuple[GitleaksRule, tuple[str, ...]], ...], tuple[GitleaksRule, ...], frozenset[str]
]


class GitleaksRules:
    """The rule set, compiled once (about 0.3 s), and the engine that searches it."""

    fallback = False
    reads_long_runs = False

    def __init__(self, config: GitleaksConfig | None = None) -> None:
        """`config`: the vendored rule set (`rules/gitleaks.toml`) by default."""
        config = gitleaks_config() if config is None else config
        compiled = compile_rules(config)
        self.rules, self._global_regexes, self._global_stopwords, self.not_re2 = compiled
        # The set's allow-list expressions joined: a match of one is a match of the whole.
        self._global_regex = re2.compile(
            "|".join(f"(?:{r})" for r in config.global_regexes), options(8)
        )
        self.always = tuple(r for r in self.rules if not r.keywords)
        self._by_id = {raw["id"]: raw["regex"] for raw in config.rules}
        self._joined_cache: dict[tuple[str, ...], Any] = {}
        self._by_rule_id = {r.id: r for r in self.rules}
        self._by_words: dict[frozenset[str], _Candidates] = {}
        self.by_keyword: dict[str, list[GitleaksRule]] = {}
        for rule in self.rules:
            for word in rule.keywords:
                self.by_keyword.setdefault(word, []).append(rule)
        self._keyword_set = frozenset(self.by_keyword)
        self.words = self._keyword_set | self.family_words

    @property
    def keywords(self) -> tuple[str, ...]:
        return tuple(self.by_keyword)

    @property
    def family_words(self) -> frozenset[str]:
        """The key words of the key-word-then-value rules' own expressions."""
        return frozenset(w for r in self.rules for w in r.family)

    # -- the engine ----------------------------------------------------------------------------

    def plan(self, body: Body) -> GitleaksPlan | None:
        lines: list[str] = []
        rules = self.matching_rules(
            body.text, body.hits, body.data, body.present, body.lower, lines
        )
        return _plan_of(rules, tuple(dict.fromkeys(lines))) if rules else None

    def find(
        self,
        text: str,
        hint: str = "",
        plan: GitleaksPlan | None = None,
        literals: Literals | None = None,
    ) -> list[Span]:
        if plan is None or literals is None:
            plan, literals = prepared(self, text, plan, literals)
        if plan is None:
            return []
        rules = plan.rules if any(line in text for line in plan.lines) else plan.free
        if not rules:
            return []
        return list(self.spans(text, rules, hint, literals(text)[1]))

    def reads_hint(self, text: str, plan: GitleaksPlan) -> bool:
        # Some rules apply to some paths only.
        if any(line in text for line in plan.lines):
            return plan.rules_read_paths
        return plan.free_read_paths

    def silent_without_literals(self, text: str) -> bool:
        return not self.always  # a rule without key words reads every text

    # -- the rule set ------------------------------------------------------------------------

    def matching_rules(
        self,
        text: str,
        hits: Iterable[tuple[str, int]],
        blob: bytes,
        present: AbstractSet[str] | None = None,
        lower: str | None = None,
        matched_lines: list[str] | None = None,
    ) -> tuple[GitleaksRule, ...]:
        """The rules that match somewhere in `text` (an episode's texts; `blob`: its UTF-8),
        among those one of whose key words stands in its lower-cased text (`hits`: literals and
        where each starts, from the scanner's one pass; other literals may be listed). What the
        caller knows already may be given: `present`, the literals of `hits`, which then are
        looked for with `family_words` too, and `lower`, `text` lower-cased keeping offsets.
        `matched_lines`, when given, receives each line on which a rule searched line by line
        matches."""
        families_known = present is not None
        if present is None:
            present = {word for word, _ in hits}
        words = self._keyword_set.intersection(present)
        if not words and not self.always:
            return ()
        line_rules, free_rules, line_words = self._candidates(words)
        at_word: dict[str, list[int]] = {}
        if line_words:
            for word, at in hits:
                if word in line_words:
                    places = at_word.get(word)
                    if places is None:
                        at_word[word] = [at]
                    else:
                        places.append(at)
        # In ASCII a character offset is a byte offset: lines are searched in `blob` (re2 on
        # a `str` with bounds converts the whole text's offsets on every call). A lone
        # surrogate takes 3 bytes in `blob`, so ASCII text is also encodable as it is.
        ascii = len(blob) == len(text)
        as_given = text  # the lines matched are told as they stand in it
        if not ascii:
            text = _encodable(text)
            lower = None
        kept: list[GitleaksRule] = []
        lines: dict[int, tuple[int, int]] = {}
        for rule, rule_words in line_rules:
            family = rule.family
            if family:
                if families_known:
                    held = not present.isdisjoint(family)
                else:
                    if lower is None:
                        lower = text.lower()
                    held = any(w in lower for w in family)
                if not held:
                    continue  # no line holds one (`test_` is common, `lob` is not)
                if lower is None:
                    lower = text.lower()
            spans: set[tuple[int, int]] = set()
            # In ASCII only: ignoring case, re2 reads `ſ` as `s` and `K` as `k`.
            tail = rule.tail if ascii else None
            for word in rule_words:
                for at in at_word[word]:
                    if tail is not None and tail.match(blob, at + len(word)) is None:
                        continue
                    span = lines.get(at)
                    if span is None:
                        span = lines[at] = _line_span(text, at)
                    spans.add(span)
            if family:
                assert lower is not None
                low = lower
                spans = {(a, b) for a, b in spans if any(w in low[a:b] for w in family)}
            matched = [
                (a, b) for a, b in sorted(spans) if _search_line(rule, text, blob, a, b, ascii)
            ]
            if matched:
                kept.append(rule)
                if matched_lines is not None:
                    matched_lines.extend(as_given[a:b] for a, b in matched)
        free = tuple(
            r.id
            for r in free_rules
            if (
                any(r.head.match(text, at) for w in r.keywords for at in at_word.get(w, ()))
                # In ASCII only: ignoring case, re2 reads `K` (Kelvin) as `k`, `ſ` as `s`.
                if r.head is not None and ascii
                else not r.case_probe or r.case_probe in text
            )
        )
        if free:
            # Most episodes hold a common key word and no secret: one search with the candidates
            # joined says so, where one search per rule would read the text 5-20 times.
            joined = self._joined(free)
            if joined is None or re2_found(joined, blob):
                by_id = self._by_rule_id
                kept.extend(r for i in free if re2_found((r := by_id[i]).pattern_bytes, blob))
        return tuple(kept)

    def _candidates(self, words: frozenset[str]) -> _Candidates:
        """The rules the key words `words` call on: those searched line by line, each with its
        own key words among `words`, and the others in the order of their ids; and the key
        words of the first. Decided once per set of key words (an episode's are most often a few
        common ones: `token`, `key`...)."""
        found = self._by_words.get(words)
        if found is None:
            seen = {r.id: r for word in words for r in self.by_keyword[word]}
            for rule in self.always:
                seen.setdefault(rule.id, rule)
            line_rules = tuple(
                (r, tuple(w for w in r.keywords if w in words))
                for r in seen.values()
                if r.line_bound
            )
            free_rules = tuple(seen[i] for i in sorted(seen) if not seen[i].line_bound)
            found = (
                line_rules,
                free_rules,
                frozenset(w for _, rule_words in line_rules for w in rule_words)
                | {w for r in free_rules if r.head is not None for w in r.keywords if w in words},
            )
            if len(self._by_words) > 4096:
                self._by_words.clear()
            self._by_words[words] = found
        return found

    def _joined(self, ids: tuple[str, ...]) -> Any:
        found = self._joined_cache.get(ids, False)
        if found is False:
            try:
                found = re2.compile(
                    "|".join(f"(?:{self._by_id[i]})" for i in ids).encode(), options(64)
                )
            except Exception:  # re2.error: two rules name a group alike; searched one by one
                found = None
            if len(self._joined_cache) > 512:
                self._joined_cache.clear()
            self._joined_cache[ids] = found
        return found

    def spans(
        self,
        text: str,
        rules: Iterable[GitleaksRule],
        hint: str = "",
        hits: Iterable[tuple[str, int]] | None = None,
    ) -> Iterator[Span]:
        """Each secret the rules report in `text`. `hits`: where each of
        the rules' key words stands in the lower-cased text (other literals may be listed), when
        the caller found them already."""
        text = _encodable(text)
        data = text.encode("ascii") if text.isascii() else None
        lower: bytes | None = None
        for rule in rules:
            if rule.path is not None and not (hint and rule.path.search(hint)):
                continue
            matches: Iterable[Any]
            if data is not None:
                pattern = rule.pattern_bytes
                if rule.line_bound:
                    if lower is None:
                        lower = data.lower()
                    low = lower
                    family = rule.family
                    lines = (
                        _lines_with(low, rule.keywords)
                        if hits is None
                        else _lines_at(text, hits, rule.keyword_set)
                    )
                    matches = (
                        m
                        for a, b in lines
                        if not family or any(w.encode() in low[a:b] for w in family)
                        for m in pattern.finditer(data, a, b)
                    )
                else:
                    matches = pattern.finditer(data)
            else:
                matches = rule.pattern.finditer(text)
            for m in matches:
                span = _secret_span(m, rule.secret_group)
                if span is None:
                    continue
                a, b = span
                secret = text[a:b]
                if rule.entropy and shannon_entropy(secret) <= rule.entropy:
                    continue
                whole = text[m.start() : m.end()]
                if self._allowed(rule, secret, whole, _line_of(text, a)):
                    continue
                yield Span(a, b, rule.kind)

    def _allowed(self, rule: GitleaksRule, secret: str, match: str, line: str) -> bool:
        if found_in_text(self._global_regex, secret):
            return True
        low = secret.lower()
        if any(w in low for w in self._global_stopwords):
            return True
        return any(a.allows(secret, match, line) for a in rule.allow)


def _encodable(text: str) -> str:
    """`text` with each lone surrogate (JSON can carry one; re2 reads UTF-8) as `?`: one
    character for one, so offsets hold."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _search_line(rule: GitleaksRule, text: str, blob: bytes, a: int, b: int, ascii: bool) -> bool:
    if ascii:
        return re2_found(rule.pattern_bytes, blob, a, b)
    return rule.pattern.search(text[a:b]) is not None


def _line_span(text: str, at: int) -> tuple[int, int]:
    end = text.find("\n", at)
    return text.rfind("\n", 0, at) + 1, len(text) if end < 0 else end


def _lines_at(
    text: str, hits: Iterable[tuple[str, int]], words: frozenset[str]
) -> list[tuple[int, int]]:
    """(start, end) of each line of `text` on which one of `words` stands (`hits`: literals
    and where each starts), as `_lines_with` finds them in the lower-cased text."""
    return sorted({_line_span(text, at) for word, at in hits if word in words})


def _lines_with(lower: Any, words: Iterable[str]) -> list[tuple[int, int]]:
    """(start, end) of each line of `lower` (str or bytes, lower case) holding one of `words`."""
    nl: Any = b"\n" if isinstance(lower, bytes) else "\n"
    spans: set[tuple[int, int]] = set()
    for word in words:
        w: Any = word.encode() if isinstance(lower, bytes) else word
        at = lower.find(w)
        while at >= 0:
            start = lower.rfind(nl, 0, at) + 1
            end = lower.find(nl, at)
            if end < 0:
                end = len(lower)
            spans.add((start, end))
            at = lower.find(w, end)
    return sorted(spans)


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
