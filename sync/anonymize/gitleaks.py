"""gitleaks' provider rules, read as data (rules/gitleaks.toml) and compiled with google-re2.

A rule is tried only on text holding one of its key words (gitleaks' own prefilter; the key
words join the scanner's one literal pass), and its expression runs in re2, whose time is linear
in the text whatever the expression. What a rule reports is its secret group (or the first
group that matched, or the whole match), kept when its entropy reaches the rule's floor and no
allow-list of the rule or of the whole set lets it pass, as gitleaks decides.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import re2

from sync.anonymize.re2_bytes import found as re2_found
from sync.anonymize.re2_bytes import found_in_text
from sync.anonymize.rules.gitleaks_config import GitleaksConfig, gitleaks_config

__all__ = ["GitleaksRule", "GitleaksRules"]

# Rules whose hits our own rules report under a better kind, or which only restate the key-word
# rule in a weaker form, are still run: a second opinion costs little once the key word is there.
_ALLOW_ANY, _ALLOW_ALL = "OR", "AND"
#: How gitleaks writes its key-word-then-value rules.
_KEY_WORD_FAMILY = "(?i)[\\w.-]{0,50}?(?:"


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
    #: Whether a text holds one of `stopwords`: one automaton pass, where testing each in turn
    #: (`generic-api-key` has 1,446) costs ~40 us a candidate secret.
    has_stopword: Callable[[str], bool] | None = None

    def allows(self, secret: str, match: str, line: str) -> bool:
        subject = {"match": match, "line": line}.get(self.target, secret)
        tests: list[bool] = []
        if self.regexes:
            tests.append(any(found_in_text(r, subject) for r in self.regexes))
        if self.stopwords:
            low = secret.lower()
            if self.has_stopword is not None:
                tests.append(self.has_stopword(low))
            else:
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
    #: A rule of the key-word-then-value family (`generic-api-key`, `adafruit-api-key`...):
    #: its match lies on a line holding one of its key words, where it is searched. Read over
    #: a whole text, its expression (bounded repeats before the key word) costs ~100 us a search.
    line_bound: bool = False
    #: Such a rule's own key words (`(?:lob)` in `lob-api-key`, whose prefilter words are only
    #: `test_` and `live_`) when they are plain: a line must hold one (in lower case).
    family: tuple[str, ...] = ()
    #: Literal characters, in their case, every match starts with (`SK` for `twilio-api-key`,
    #: whose key word `sk` stands in every `task`): no match where the text lacks them. (In
    #: ASCII text a rule with a `head` is tried at its key words instead.)
    case_probe: str = ""
    #: `keywords` as a set.
    keyword_set: frozenset[str] = frozenset()
    #: What must follow one of its key words on the line for the rule to match there (a
    #: looser form of its own expression's tail, `_TAIL_AFTER`), on ASCII bytes; None: not known.
    tail: re.Pattern[bytes] | None = None
    #: What every match starts with, matched where one of its key words stands (`_HEAD_AT`);
    #: None: not known.
    head: re.Pattern[str] | None = None

    @property
    def kind(self) -> str:
        return re.sub(r"[^a-z0-9]+", "_", self.id.lower()).strip("_")


# Key-word-then-value rules whose key word is one of their own key words (lower-cased), as read
# at the commit of rules/gitleaks.toml (keyed by the digest of the expression), and a looser
# form of what follows the key word in their expression, matched right after it: most lines
# holding `token` or `key` hold no operator there (`return token_count + 1`), no value after
# it (`if token_count > 83:`), or no end after the value (`key = os.environ["KEY"]`), and are
# not searched. generic-api-key reads, ignoring case,
# `(?:[ \t\w.-]{0,20})[\s'"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[\x60'"\s=]{0,5}`, then
# `([\w.=-]{10,150}|[a-z0-9][a-z0-9+/]{11,}={0,3})` and `(?:[\x60'"\s;]|\\[nr]|$)`;
# hashicorp-tf-password the same with `("[a-z0-9=_\-]{8,20}")` for the value.
# In the looser form the key word's continuation is taken whole (possessive: it holds no
# operator, and what of it the expression would leave to `[\s'"]{0,3}` is blanks that one
# takes too), so is a value (the expression's ends where its characters do: an end is none of
# them), and a newline only ends a value: a match stays on the key word's line.
_KEY_WORD_TO_VALUE = rb"[ \t\w.\-]{0,20}+[ \t\r\f\v'\"]{0,3}[=>:|?,]{1,4}[`'\" \t\r\f\v=]{0,5}"
_END_OF_VALUE = rb"(?:[`'\"\s;\\]|\Z)"
_TAIL_AFTER = {
    "7495022a3803": _KEY_WORD_TO_VALUE  # generic-api-key
    + rb"(?:[\w.=\-]{10,}+|[A-Za-z0-9][A-Za-z0-9+/]{11,}+=*)"
    + _END_OF_VALUE,
    "f377a28f2141": _KEY_WORD_TO_VALUE  # hashicorp-tf-password
    + rb'"[A-Za-z0-9=_\-]{8,}+"'
    + _END_OF_VALUE,
}


# Rules every match of which starts at one of their key words (as read at the commit of
# rules/gitleaks.toml, keyed likewise), and what it starts with there: `\b` (ASCII) as a
# look-behind, a case-blind part as both cases. jwt's `ey` stands in every `key`,
# twilio-api-key's `sk` in every `task`, vault-service-token's `s.` in every `items.append`: at
# none of them does a match start, and the text is not searched for them.
_HEAD_AT = {
    "036058eec082": r"(?<![0-9A-Za-z_])ey[a-zA-Z0-9]{17}",  # jwt
    "d4a91dc88535": r"SK[0-9a-fA-F]{32}",  # twilio-api-key
    "a91e92937b1b": r"(?<![0-9A-Za-z_])(?:hvs\.[0-9A-Za-z_\-]{90}|s\.[A-Za-z0-9]{24})",  # vault
}


_FAMILY = re.compile(r"\(\?i\)\[\\w\.-\]\{0,50\}\?\(\?:([a-z0-9_.|\-]+)\)")


def _family(expression: str) -> tuple[str, ...]:
    m = _FAMILY.match(expression)
    return tuple(m.group(1).split("|")) if m else ()


def _case_probe(expression: str) -> str:
    """The literal start of an expression with no alternative anywhere and no flags before it
    (a `\\b` or an opening group may come first); empty when there is none of 2+ characters."""
    from sync.anonymize.secret_rules import literal_prefix

    if "|" in expression:
        return ""
    e = expression
    while e.startswith(("\\b", "(")) and not e.startswith("(?"):
        e = e[2:] if e.startswith("\\b") else e[1:]
    probe = literal_prefix(e)
    return probe if len(probe) >= 2 else ""


def _stopword_finder(words: tuple[str, ...]) -> Callable[[str], bool] | None:
    """A test of whether a text holds one of `words` (None: none, or no automaton here)."""
    try:
        from ahocorasick_rs import AhoCorasick
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    if not words:
        return None
    automaton = AhoCorasick(list(dict.fromkeys(words)))

    def has_stopword(text: str) -> bool:
        try:
            return bool(automaton.find_matches_as_indexes(text))
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 for the automaton
            return any(w in text for w in words)

    return has_stopword


def _options(megabytes: int) -> Any:
    options = re2.Options()
    options.max_mem = megabytes << 20
    return options


def _compile(expression: str) -> tuple[Any, Any]:
    options = _options(8)
    return re2.compile(expression, options), re2.compile(expression.encode(), options)


def _load(
    config: GitleaksConfig,
) -> tuple[list[GitleaksRule], tuple[Any, ...], tuple[str, ...], dict[str, str]]:
    """The rules compiled, the set's allow-list, and the rules left out (id -> why: re2 cannot
    compile the expression; none today, and one that appears is not run without a bound)."""
    rules: list[GitleaksRule] = []
    left_out: dict[str, str] = {}
    for raw in config.rules:
        try:
            on_text, on_bytes = _compile(raw["regex"])
        except Exception as exc:  # re2.error: the binding's own exception type
            left_out[raw["id"]] = str(exc)
            continue
        allow = tuple(
            _Allow(
                a.get("condition", _ALLOW_ANY),
                a.get("regexTarget", "secret"),
                tuple(re2.compile(r) for r in a.get("regexes", ())),
                tuple(w.lower() for w in a.get("stopwords", ())),
                _stopword_finder(tuple(w.lower() for w in a.get("stopwords", ()))),
            )
            for a in raw.get("allowlists", ())
        )
        path = raw.get("path")
        digest = hashlib.sha256(raw["regex"].encode()).hexdigest()[:12]
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
                raw["regex"].startswith(_KEY_WORD_FAMILY) and bool(raw["keywords"]),
                _family(raw["regex"]),
                _case_probe(raw["regex"]),
                frozenset(raw["keywords"]),
                re.compile(_TAIL_AFTER[digest]) if digest in _TAIL_AFTER else None,
                re.compile(_HEAD_AT[digest]) if digest in _HEAD_AT else None,
            )
        )
    glob_regexes = tuple(re2.compile(r) for r in config.global_regexes)
    glob_stop = tuple(w.lower() for w in config.global_stopwords)
    return rules, glob_regexes, glob_stop, left_out


#: The rules some key words call on (see `GitleaksRules._candidates`).
_Candidates = tuple[
    tuple[tuple[GitleaksRule, tuple[str, ...]], ...], tuple[GitleaksRule, ...], frozenset[str]
]


class GitleaksRules:
    """The rule set, compiled once (about 0.3 s)."""

    def __init__(self, config: GitleaksConfig | None = None) -> None:
        """`config`: the vendored rule set (`rules/gitleaks.toml`) by default."""
        config = gitleaks_config() if config is None else config
        self.rules, self._global_regexes, self._global_stopwords, self.not_re2 = _load(config)
        # The set's allow-list expressions joined: a match of one is a match of the whole.
        self._global_regex = re2.compile(
            "|".join(f"(?:{r})" for r in config.global_regexes), _options(8)
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

    @property
    def keywords(self) -> tuple[str, ...]:
        return tuple(self.by_keyword)

    @property
    def family_words(self) -> frozenset[str]:
        """The key words of the key-word-then-value rules' own expressions."""
        return frozenset(w for r in self.rules for w in r.family)

    def plan(
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
                    "|".join(f"(?:{self._by_id[i]})" for i in ids).encode(), _options(64)
                )
            except Exception:  # re2.error: two rules name a group alike; searched one by one
                found = None
            if len(self._joined_cache) > 512:
                self._joined_cache.clear()
            self._joined_cache[ids] = found
        return found

    def find(
        self,
        text: str,
        rules: Iterable[GitleaksRule],
        hint: str = "",
        hits: Iterable[tuple[str, int]] | None = None,
    ) -> Iterator[tuple[int, int, str]]:
        """(start, end, kind) of each secret the rules report in `text`. `hits`: where each of
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
                if rule.entropy and _entropy(secret) <= rule.entropy:
                    continue
                whole = text[m.start() : m.end()]
                if self._allowed(rule, secret, whole, _line_of(text, a)):
                    continue
                yield a, b, rule.kind

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
