"""Stand-ins for detect-secrets' plugins on the lines it reads: what each plugin's own
`analyze_line` reports, with its work cut where the result cannot change. An expression runs
only on a line holding what it needs to match (`NEEDS`), and the entropy plugins' slow measure
is taken only near their limit. Each stand-in is used only while the plugin is the one it was
read against (detect-secrets 1.5; the expressions by the digest of their text); otherwise the
plugin's own `analyze_line` runs. Each is checked against its plugin in
tests/unit/sync/test_sync_detect.py.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from sync.anonymize.secrets.entropy import shannon_entropy

__all__ = [
    "INDIRECT",
    "KEYWORD_GATE",
    "NEEDS",
    "QUOTE_GATE",
    "Needs",
    "Reader",
    "analyzed",
    "digest",
    "expressions_of",
    "high_entropy_values",
    "indirect_reference_filter",
    "keyword_reader",
    "plugin_gates",
    "reads_quoted_strings",
    "regex_reader",
]


def analyzed(plugin: Any, filename: str, line: str) -> list[str]:
    """What a plugin's own `analyze_line` reports (for a plugin no reader stands in for)."""
    from detect_secrets.util.code_snippet import get_code_snippet

    found = plugin.analyze_line(
        filename=filename, line=line, line_number=1, context=get_code_snippet([line], 1)
    )
    return [secret.secret_value or "" for secret in found]


KEYWORD_GATE, QUOTE_GATE = "keyword", "quote"


def expressions_of(plugins: list[Any]) -> list[re.Pattern[str]]:
    """The expressions of the plugins that `NEEDS` may name."""
    from detect_secrets.plugins import keyword

    found = [getattr(keyword, name) for name in dir(keyword) if name.endswith("_REGEX")]
    for plugin in plugins:
        found.extend(getattr(plugin, "denylist", ()) or ())
    return [e for e in found if isinstance(e, re.Pattern)]


def plugin_gates(plugins: list[Any]) -> list[str | None]:
    """For each plugin, what a line must have for it to find anything (None: no gate)."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    def gate(plugin: Any) -> str | None:
        if type(plugin).__name__ == "KeywordDetector":
            return KEYWORD_GATE
        if isinstance(plugin, HighEntropyStringsPlugin) and reads_quoted_strings(plugin):
            return QUOTE_GATE
        return None

    return [gate(plugin) for plugin in plugins]


def reads_quoted_strings(plugin: Any) -> bool:
    """Is this entropy plugin's expression the quoted-string one `high_entropy_values` stands in
    for? Its `analyze_line` (quoted strings only, kept when their entropy is over the limit) was
    read at detect-secrets 1.5; the dependency is pinned below 2 for that."""
    expected = rf"""([\'"])([{re.escape(plugin.charset)}]+)(\1)"""
    return bool(plugin.regex.pattern == expected)


# Our own entropy is the plugins' own (the Shannon entropy of the string's characters) up to
# rounding, except that the hex plugin lowers it for a string of decimal digits only. So theirs,
# 10x slower, is computed only within this margin of the limit, or for such a string.
_ENTROPY_MARGIN = 0.01


def high_entropy_values(plugin: Any, line: str) -> list[str]:
    """What an entropy plugin's `analyze_line` reports for a line (quoted strings over its
    limit), without building its result objects or measuring most strings again."""
    limit = plugin.entropy_limit
    out: list[str] = []
    for _, value, _ in plugin.regex.findall(line):
        if value in out:
            continue
        ours = shannon_entropy(value)
        if ours <= limit - _ENTROPY_MARGIN:
            continue
        clearly_over = ours > limit + _ENTROPY_MARGIN and _entropy_is_ours(plugin, value)
        if clearly_over or plugin.calculate_shannon_entropy(value) > limit:
            out.append(value)
    return out


def _entropy_is_ours(plugin: Any, value: str) -> bool:
    """Does the plugin measure `value` as we do? Yes unless it measures its own way: the hex
    plugin (read at detect-secrets 1.5) lowers it only for a string of decimal digits."""
    from detect_secrets.plugins.high_entropy_strings import (
        HexHighEntropyString,
        HighEntropyStringsPlugin,
    )

    measure = type(plugin).calculate_shannon_entropy
    if measure is HighEntropyStringsPlugin.calculate_shannon_entropy:
        return True
    return measure is HexHighEntropyString.calculate_shannon_entropy and not value.isdigit()


# What an expression of detect-secrets' plugins needs in a line to match at all: one string of
# each group, in lower case where the expression ignores case. Keyed by the digest of the
# expression's text as read at detect-secrets 1.5 (plugins/keyword.py and the provider plugins):
# an expression not listed, or whose text changed, runs on every line.
_QUOTES = ("'", '"', "`")
_CREDENTIAL_WORDS = ("key", "pwd", "pass", "token")
NEEDS: dict[str, tuple[tuple[str, ...], ...]] = {
    # KeywordDetector: FOLLOWED_BY_COLON_EQUAL_SIGNS_REGEX, FOLLOWED_BY_COLON_REGEX,
    # FOLLOWED_BY_COLON_QUOTES_REQUIRED_REGEX,
    # FOLLOWED_BY_EQUAL_SIGNS_OPTIONAL_BRACKETS_OPTIONAL_AT_SIGN_QUOTES_REQUIRED_REGEX,
    # FOLLOWED_BY_OPTIONAL_ASSIGN_QUOTES_REQUIRED_REGEX, FOLLOWED_BY_EQUAL_SIGNS_REGEX,
    # FOLLOWED_BY_EQUAL_SIGNS_QUOTES_REQUIRED_REGEX,
    # PRECEDED_BY_EQUAL_COMPARISON_SIGNS_QUOTES_REQUIRED_REGEX,
    # FOLLOWED_BY_QUOTES_AND_SEMICOLON_REGEX, FOLLOWED_BY_ARROW_FUNCTION_SIGN_QUOTES_REQUIRED_REGEX
    "644d2c0aea91": ((":=",),),
    "bd3ed982463f": ((":",),),
    "dcbbacde0df9": ((":",), _QUOTES),
    "08ae41c8896b": (("=", "!"), ('"',)),
    "927609c56801": (('("',),),
    "427de8767580": (("=",),),
    "7d5b0b42f008": (("=",), _QUOTES),
    "434c79cd8397": (("=", "!"), _QUOTES),
    "d2b48647db85": ((";",), _QUOTES),
    "0dc290b8e685": (("=",), _QUOTES),
    # ArtifactoryDetector: `AKC...`, `AP...`
    "5d3455a9f0d3": (("AKC",),),
    "18179d7472e0": (("AP",),),
    # CloudantDetector: a key word after `cl`, `clou` or `cloudant`; a URL on cloudant.com
    "32126e884ccf": (("cl",), ("key", "pw", "pass", "token")),
    "aed550fbd128": (("cl",), ("key", "pw", "pass", "token")),
    "2fb7cf8120ae": ((".cloudant.com",),),
    "b9f8e5dbb58f": ((".cloudant.com",),),
    # IbmCosHmacDetector: `secret_access_key` and its spellings
    "8dc9ad5623b9": (("secret",), ("key",)),
    # IbmCloudIamDetector
    "655a58af3964": (_CREDENTIAL_WORDS,),
    # MailchimpDetector: `...-us12`
    "d5687e015476": (("-us",),),
    # SoftlayerDetector: a key word after `sl` or `softlayer`; the SOAP API's URL
    "249a8762e082": (("sl", "softlayer"), _CREDENTIAL_WORDS),
    "bf23d3bd436f": (("softlayer",), ("/soap/v3",)),
    # SquareOAuthDetector
    "ef73f5dac6f5": (("sq0csp-",),),
}


def digest(expression: re.Pattern[str]) -> str:
    return hashlib.sha256(expression.pattern.encode()).hexdigest()[:12]


class Needs:
    """Which of the strings that `NEEDS` names a line holds, as bits; and for each expression,
    the bits of its groups (two: a line may match when it meets both). Every line has bit 0,
    the one group of an expression `NEEDS` does not list."""

    def __init__(self, expressions: Iterable[re.Pattern[str]]) -> None:
        # (string, read in lower case) -> bit; bit 0 is every line's.
        self._bits: dict[tuple[str, bool], int] = {("", False): 1}
        self._groups: dict[re.Pattern[str], tuple[int, int]] = {}
        for expression in expressions:
            need = NEEDS.get(digest(expression))
            if need is not None:
                if not 1 <= len(need) <= 2:
                    raise ValueError(f"a need has one or two groups: {need}")
                ignores_case = bool(expression.flags & re.IGNORECASE)
                masks = [self._mask_of(group, ignores_case) for group in need] + [-1]
                self._groups[expression] = (masks[0], masks[1])
        self._on_line = [(s, bit) for (s, lower), bit in self._bits.items() if s and not lower]
        self._on_lower = [(s, bit) for (s, lower), bit in self._bits.items() if lower]
        self._all_on_lower = sum(bit for _, bit in self._on_lower)

    def _mask_of(self, group: tuple[str, ...], ignores_case: bool) -> int:
        mask = 0
        for string in group:
            key = (string, ignores_case and any(c.isalpha() for c in string))
            mask |= self._bits.setdefault(key, 1 << len(self._bits))
        return mask

    def of(self, line: str) -> int:
        mask = 1
        for string, bit in self._on_line:
            if string in line:
                mask |= bit
        if line.isascii():
            lower = line.lower()
            for string, bit in self._on_lower:
                if string in lower:
                    mask |= bit
        else:
            # Ignoring case, an expression reads some other letters as ASCII ones (`ſ` as `s`),
            # which lower case does not show: those needs are taken as met.
            mask |= self._all_on_lower
        return mask

    def groups(self, expression: re.Pattern[str]) -> tuple[int, int]:
        return self._groups.get(expression, (1, 1))


#: What a plugin reports for a line (its file name, the line, the line's `Needs` mask).
Reader = Callable[[str, str, int], list[str]]


def keyword_reader(plugin: Any, needs: Needs) -> Reader | None:
    """What the keyword plugin's `analyze_line` reports for a line (the first match of each of
    its expressions for the file's type), without running an expression on a line that lacks
    what it needs: a `;`, a `:`, a quote. None when the plugin is not the one this was read
    against (then `analyze_line` runs)."""
    from detect_secrets.plugins import keyword
    from detect_secrets.util.filetype import determine_file_type

    if type(plugin) is not keyword.KeywordDetector or plugin.keyword_exclude is not None:
        return None
    by_type = keyword.REGEX_BY_FILETYPE
    default = keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP
    # Per file name: (expression, its group of the secret, the bits of its needs).
    tables: dict[str, list[tuple[re.Pattern[str], int, int, int]]] = {}

    def read(filename: str, line: str, mask: int) -> list[str]:
        table = tables.get(filename)
        if table is None:
            expressions = by_type.get(determine_file_type(filename), default)
            table = tables[filename] = [
                (expression, group, *needs.groups(expression))
                for expression, group in expressions.items()
            ]
        values: list[str] = []
        for expression, group, first, second in table:
            if mask & first and mask & second:
                m = expression.search(line)
                value = m.group(group) if m is not None else None
                if value and value not in values:
                    values.append(value)
        return values

    return read


def regex_reader(plugin: Any, needs: Needs) -> Reader | None:
    """What a provider plugin (a `RegexBasedDetector`: every match of each expression of its
    `denylist`) reports for a line, without running an expression on a line that lacks what it
    needs. None for a plugin that reads lines its own way."""
    from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector

    kind = type(plugin)
    if not (
        isinstance(plugin, RegexBasedDetector)
        and kind.analyze_string is RegexBasedDetector.analyze_string
        and kind.analyze_line is BasePlugin.analyze_line
    ):
        return None
    denylist = [(expression, *needs.groups(expression)) for expression in plugin.denylist]

    def read(filename: str, line: str, mask: int) -> list[str]:
        values: list[str] = []
        for expression, first, second in denylist:
            if mask & first and mask & second:
                for match in expression.findall(line):
                    for value in match if isinstance(match, tuple) else (match,):
                        if value and value not in values:
                            values.append(value)
        return values

    return read


# detect-secrets' indirect-reference filter (`x = get_secret()`, `x = headers["key"]`): its
# expression opens with `([^\v=!:]*)\s*`, which can match empty, so it matches a line exactly
# when the rest does; searched without that prefix it is 10-40x faster (no scan forward from
# every position). Used only while the library's expression is the one written here.
INDIRECT = r"([^\v=!:]*)\s*(:=?|[!=]{1,3})\s*([\w.-]+[\[\(][^\v]*[\]\)])"
_INDIRECT_CORE = re.compile(r"(:=?|[!=]{1,3})\s*([\w.-]+[\[\(][^\v]*[\]\)])")


def indirect_reference_filter(heuristic: Any) -> Callable[[str], bool]:
    if heuristic._get_indirect_reference_regex().pattern != INDIRECT:
        return heuristic.is_indirect_reference

    def is_indirect_reference(line: str) -> bool:
        # The library's own limit (its expression backtracks badly on long lines).
        return len(line) <= 1000 and _INDIRECT_CORE.search(line) is not None

    return is_indirect_reference
