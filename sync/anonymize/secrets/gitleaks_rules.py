"""gitleaks' rules compiled: each rule of the vendored TOML (rules/gitleaks.toml, read by
`rules.gitleaks_config`) made a `GitleaksRule`, with google-re2 for its expression and what this
project read of its shape to search it faster (see `GitleaksRules` for how they are searched).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import re2

from sync.anonymize.rules.gitleaks_config import GitleaksConfig
from sync.anonymize.secrets.re2_bytes import found_in_text

__all__ = ["Allow", "GitleaksRule", "compile_rules", "options"]

# Rules whose hits our own rules report under a better kind, or which only restate the key-word
# rule in a weaker form, are still run: a second opinion costs little once the key word is there.
_ALLOW_ANY, _ALLOW_ALL = "OR", "AND"
#: How gitleaks writes its key-word-then-value rules.
_KEY_WORD_FAMILY = "(?i)[\\w.-]{0,50}?(?:"


@dataclass(frozen=True, slots=True)
class Allow:
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
    allow: tuple[Allow, ...] = field(default=())
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
    from sync.anonymize.secrets.our_rules import literal_prefix

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


def options(megabytes: int) -> Any:
    options = re2.Options()
    options.max_mem = megabytes << 20
    return options


def _compile(expression: str) -> tuple[Any, Any]:
    eight = options(8)
    return re2.compile(expression, eight), re2.compile(expression.encode(), eight)


def compile_rules(
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
            Allow(
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
