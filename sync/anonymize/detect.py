"""detect-secrets, run only where our own rules cannot decide, and cached by line content.

Measured on this project's machine: importing detect-secrets costs 0.15-0.5 s and its plugins
scan about 3,000 lines/s together (the keyword detector alone 12,000 lines/s), while an episode
carries tens of lines and the pipeline must anonymize thousands of episodes a second. So a line
goes to detect-secrets only when it could hold what our rules do not cover: one of the keywords
its keyword plugin looks for (its own list), or a long quoted run of letters and digits that its
entropy plugins could flag. Most lines of code hold neither. Results are cached by (file type,
line); detect-secrets is imported on first use, never on the hook path.

On the lines it reads, the plugins' own work is cut where the result cannot change: an
expression runs only on a line holding what it needs to match (`_NEEDS`), and the entropy
plugins' slow measure is taken only near their limit. Each shortcut is checked against the
plugin it stands in for (tests/unit/sync/test_sync_detect.py).

Its heuristic filters (templated values, indirect references, UUIDs, sequential strings...) are
applied as `detect-secrets scan` applies them; a hit is widened to the whole token it sits in,
because some plugins report only a prefix (the GitHub plugin reports `ghp`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from sync.anonymize.literals import occurrences
from sync.anonymize.re2_bytes import found as re2_found

__all__ = [
    "DETECT_ANCHORS",
    "PROVIDER_HINTS",
    "DetectSecrets",
    "detect_lines",
    "lower_keeping_offsets",
    "no_provider_line",
    "provider_literal_at",
]

# The keyword plugin's own list (detect_secrets.plugins.keyword.DENYLIST), as one expression.
_KEYWORD = re.compile(
    r"api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|private_?key|"
    r"client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|secret|contrase"
)
# What the entropy plugins can flag: a quoted string long enough to reach their limits
# (base64 4.5 bits/char needs >= 23 distinct characters; hex 3.0 needs >= 8)...
_ENTROPY_DOUBLE = re.compile(r'"([A-Za-z0-9+/=_\-.]{20,}|[0-9a-fA-F]{8,})"')
_ENTROPY_SINGLE = re.compile(r"'([A-Za-z0-9+/=_\-.]{20,}|[0-9a-fA-F]{8,})'")
# ...and whose entropy comes near those limits. Below these (a margin under the plugins' own
# 4.5 and 3.0) the plugins cannot report the string, so it need not be shown to them: UUIDs,
# dotted names and long identifiers stop here.
_BASE64_GATE = 4.0
_HEX_GATE = 2.8
_BASE64_LIMIT = 4.5
_HEX_LIMIT = 3.0
_HEX = frozenset("0123456789abcdefABCDEF")
# What a token is made of, for widening a hit; `=` is left out, so that `KEY=value` widens to
# `value` only.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/_\-.~]+")
# Our placeholders and identity markers: detect-secrets must not see them as values.
_PLACEHOLDER = re.compile(r"<SECRET:[a-z0-9_]+:[0-9a-f]{8}>|<(?:email|ip|user|host|workspace)>")
# The secret placeholder in lower-cased text: its `secret` is ours, not a key word of the line.
_PLACEHOLDER_LOWER = re.compile(r"<secret:[a-z0-9_]+:[0-9a-f]{8}>")

_KIND = {
    "Secret Keyword": "keyword",
    "Base64 High Entropy String": "high_entropy",
    "Hex High Entropy String": "high_entropy",
}
#: Kinds whose plugins report the value alone (the others' expressions may take in what stands
#: around a token, `_AROUND_A_TOKEN`).
_OWN_VALUES = frozenset(_KIND.values())
_AROUND_A_TOKEN = " \t\r\n\"'=:"

# Plugins not run: IPs are identity (scrubbed elsewhere), and the providers our own rules find
# in every text anyway (tests/unit/sync/test_sync_secret_rules.py shows each), whose plugins
# would only repeat those hits at ~2 us a line each.
_LEFT_OUT = frozenset(
    {
        "Public IP (ipv4)", "AWS Access Key", "Azure Storage Account access key",
        "Basic Auth Credentials", "GitHub Token", "GitLab Token", "JSON Web Token", "NPM tokens",
        "OpenAI Token", "Private Key", "PyPI Token", "SendGrid API Key", "Slack Token",
        "Stripe Access Key", "Telegram Bot Token", "Twilio API Key",
    }
)  # fmt: skip

# Representative file names per detect-secrets file type, so the cache is keyed by type, not name.
_CONFIG_SUFFIXES = {".yaml", ".yml", ".ini", ".cfg", ".conf", ".properties", ".toml", ".env"}


#: Lower-case substrings one of which the keyword plugin's words all contain.
DETECT_ANCHORS = ("key", "pass", "pwd", "secret", "contrase")
_DETECT_ANCHOR_SET = frozenset(DETECT_ANCHORS)


def detect_lines(
    text: str,
    lower: str | None = None,
    hits: Sequence[tuple[str, int]] | None = None,
    data: bytes | None = None,
    long_runs: Iterable[bytes] | None = None,
    provider_literal: bool | None = None,
) -> tuple[str, ...]:
    """The lines of `text` that `find` would show detect-secrets (their content). Over all of an
    episode's texts joined by newlines, these are the candidate lines of each of its texts:
    a text holding none of them needs no detect-secrets. `lower`: `lower_keeping_offsets(text)`
    and `hits`: where each of `DETECT_ANCHORS` stands in it (others may be listed too), when
    the caller found them already; `data`: its UTF-8 (surrogates passed), and `long_runs`:
    each run of 20 or more of `[A-Za-z0-9+/_-]` in it (`tokens.long_runs`), likewise; and
    `provider_literal`: `provider_literal_at` of a literal pass that looked for `PROVIDER_HINTS`."""
    if not hits and hits is not None and "'" not in text and '"' not in text:
        # No key word and no quote: only a provider expression can call for a line.
        return tuple(provider_lines(text, data, long_runs, provider_literal))
    spans = _candidate_lines(text, None, lower, hits)
    found = dict.fromkeys(text[a:b] for a, b in spans)
    found.update(dict.fromkeys(provider_lines(text, data, long_runs, provider_literal)))
    return tuple(found)


def provider_lines(
    text: str,
    data: bytes | None = None,
    long_runs: Iterable[bytes] | None = None,
    literal: bool | None = None,
) -> list[str]:
    """The lines of `text` on which one of detect-secrets' provider expressions matches (its
    Discord, Mailchimp, Artifactory, Square, IBM, Cloudant and SoftLayer plugins): those
    plugins apply to any line, not only to lines with a key word or a quoted string. One re2
    pass over the whole text finds them; the plugin itself then reads each such line.
    `long_runs`: as for `detect_lines`; `literal`: whether one of the literals an expression
    needs stands in the text (`provider_literal_at`), when a literal pass found out."""
    finder = _provider_finder()
    if finder is None:
        return []
    if data is None:
        data = text.encode("utf-8", "surrogatepass")
    gate = _provider_gate()
    if gate is not None and len(data) == len(text):
        # ASCII (one byte a character, as the gate reads it): is what they need there?
        unknown = literal is None
        if literal:
            needed = True
        elif long_runs is None and len(data) <= _SHORT:
            # A short text (a prompt, a command): its token characters made one letter and
            # searched for a run of them cost less than the search, whose automaton is seldom
            # still in the processor's caches.
            needed = _PROVIDER_RUN_OF in data.translate(_TOKEN_AS_A) or (
                unknown and any(lit in data for lit in _PROVIDER_LITERALS)
            )
        elif long_runs is None:
            needed = re2_found(gate, data)
        else:
            # The 24 in a row stand in a run of 20 or more of a wider class (with `+` and `/`).
            needed = any(
                _PROVIDER_RUN_OF in run.translate(_TOKEN_AS_A)
                for run in long_runs
                if len(run) >= _PROVIDER_RUN
            ) or (unknown and any(lit in data for lit in _PROVIDER_LITERALS))
        if not needed:
            return []
    if not re2_found(finder, data):
        return []
    out: list[str] = []
    last = -1
    for m in finder.finditer(data):
        at = m.start()
        if data[at] == 0x0A:
            at += 1  # the newline an expression's `\s` opening took: the token is on the next line
        start = data.rfind(b"\n", 0, at) + 1
        if start == last:
            continue
        last = start
        end = data.find(b"\n", at)
        line = data[start : len(data) if end < 0 else end]
        out.append(line.decode("utf-8", "surrogatepass").rstrip("\r"))
    return out


# re2 has no look-behind: the plugins' `(?:(?<=\W)|(?<=^))` opening, which only asks that the
# expression starts a word, becomes a consumed `(?:^|\W)` (finding the line is all that is
# asked of it here; the plugin's own expression then decides).
_LOOK_BEHIND_START = "(?:(?<=\\W)|(?<=^))"


@lru_cache(maxsize=1)
def _provider_expressions() -> tuple[re.Pattern[str], ...] | None:
    """The expressions of the provider plugins the finder stands in for (None: no
    detect-secrets)."""
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    found: list[re.Pattern[str]] = []
    mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    for name, cls in sorted(mapping.items()):
        if name in _LEFT_OUT:
            continue
        plugin = cls()
        if isinstance(plugin, RegexBasedDetector):
            found.extend(plugin.denylist)
    return tuple(found)


@lru_cache(maxsize=1)
def _provider_finder() -> Any:
    try:
        import re2
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    expressions = _provider_expressions()
    if expressions is None:  # pragma: no cover
        return None
    parts = []
    for expression in expressions:
        pattern = expression.pattern.replace(_LOOK_BEHIND_START, "(?:^|\\W)")
        # A look-ahead only narrows a match: without it the expression finds a superset.
        pattern = _LOOK_AHEAD.sub("", pattern)
        flags = "i" if expression.flags & re.IGNORECASE else ""
        parts.append(f"(?m{flags}:{pattern})")
    options = re2.Options()
    options.max_mem = 64 << 20
    return re2.compile("|".join(parts).encode(), options)


# What every provider expression needs, read at detect-secrets 1.5 (keyed as `_NEEDS`): one of
# the literals `AKC` and `AP` (Artifactory) or `sq0csp-` (Square), or else 24 characters or
# more of `[A-Za-z0-9_-]` in a row (each other expression's value: Cloudant's 24 letters or 64
# hex digits, Discord's 24-26 first characters, IBM's 44 and 48, Mailchimp's 32 and `-us1`,
# SoftLayer's 64). In ASCII text one small search for those says whether the finder, whose
# many expressions ignoring case make a large automaton, need read the text at all.
_PROVIDER_GATED = frozenset(
    {
        "5d3455a9f0d3", "18179d7472e0", "32126e884ccf", "aed550fbd128", "2fb7cf8120ae",
        "b9f8e5dbb58f", "fe064d6f9d32", "8dc9ad5623b9", "655a58af3964", "d5687e015476",
        "249a8762e082", "bf23d3bd436f", "ef73f5dac6f5",
    }
)  # fmt: skip
_PROVIDER_LITERALS = (b"AKC", b"AP", b"sq0csp-")
#: The same literals as a literal pass over lower-cased text finds them, Artifactory's `AP` with
#: the hex digit its expression puts after it (`ap` alone stands in `map` and `wrap`); each hit
#: is then read in the text's own case (`provider_literal_at`).
PROVIDER_HINTS = ("akc", "sq0csp-", *(f"ap{c}" for c in "0123456789abcdef"))
_PROVIDER_HINT_SET = frozenset(PROVIDER_HINTS)
_UPPER_HEX = frozenset("0123456789ABCDEF")
_PROVIDER_RUN = 24
_PROVIDER_GATE = b"|".join(_PROVIDER_LITERALS) + rb"|[A-Za-z0-9_\-]{%d}" % _PROVIDER_RUN
_SHORT = 256
#: Each byte of `[A-Za-z0-9_-]` made an `a`, every other a space.
_TOKEN_AS_A = bytes(
    0x61 if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "_-") else 0x20 for c in range(256)
)
_PROVIDER_RUN_OF = b"a" * _PROVIDER_RUN


def provider_literal_at(text: str, hits: Iterable[tuple[str, int]]) -> bool:
    """Does one of the literals a provider expression needs (`AKC`, `AP` and a hex digit,
    `sq0csp-`) stand in `text`? `hits`: a literal pass over `text` lower-cased keeping offsets
    that looked for `PROVIDER_HINTS` (other literals may be listed)."""
    for word, at in hits:
        if word in _PROVIDER_HINT_SET:
            if word == "akc":
                if text.startswith("AKC", at):
                    return True
            elif word == "sq0csp-":
                if text.startswith(word, at):
                    return True
            elif text.startswith("AP", at) and text[at + 2] in _UPPER_HEX:
                return True
    return False


def no_provider_line(text: str, literal: bool) -> bool:
    """True when no provider expression can match in `text` (`literal`: `provider_literal_at`
    of a pass over it): ASCII text, the expressions those the gate was read for, and neither
    their literals nor 24 of their characters in a row in it. False says nothing."""
    if literal or not text.isascii() or _provider_gate() is None:
        return False
    return _PROVIDER_RUN_OF not in text.encode("ascii").translate(_TOKEN_AS_A)


@lru_cache(maxsize=1)
def _provider_gate() -> Any:
    """The search for what every provider expression needs; None when an expression is not one
    read for it (then the finder reads every text)."""
    expressions = _provider_expressions()
    if not expressions or any(_digest(e) not in _PROVIDER_GATED for e in expressions):
        return None
    import re2

    return re2.compile(_PROVIDER_GATE)


_LOOK_AHEAD = re.compile(r"\(\?[!=][^()]*\)")


@lru_cache(maxsize=8192)
def _entropy(value: str) -> float:
    # Cached: an episode's quoted strings are measured when it is planned, again when each text
    # holding them is scanned, and again by the second scan.
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


#: A quoted string the entropy plugins read: (where its quote is, where its value starts and
#: ends, whether its entropy passes our gate, whether it passes the plugins' own limit).
_Quoted = tuple[int, int, int, bool, bool]


def _quoted_runs(text: str) -> list[_Quoted]:
    out: list[_Quoted] = []
    # Two expressions, each with a literal first character, scan faster than one with a class.
    for pattern, quote in ((_ENTROPY_DOUBLE, '"'), (_ENTROPY_SINGLE, "'")):
        if quote not in text:
            continue
        for m in pattern.finditer(text):
            value = m.group(1)
            entropy = _entropy(value)
            if _HEX.issuperset(value):
                gate, limit = _HEX_GATE, _HEX_LIMIT
            else:
                gate, limit = _BASE64_GATE, _BASE64_LIMIT
            if entropy > gate:
                out.append((m.start(), m.start(1), m.end(1), True, entropy > limit))
    return out


def lower_keeping_offsets(text: str) -> str:
    """Lower case, one character for one, so that an offset in the result is the same offset in
    `text`. `İ`, the one character whose lower case is two (`i̇`), becomes `i`, as a
    case-insensitive expression reads it."""
    lower = text.lower()
    if len(lower) == len(text):
        return lower
    return "".join(c.lower()[0] for c in text)


def _without_placeholders(lower: str) -> str:
    """Lower-cased text with each secret placeholder blanked (same length, so offsets hold).
    A redacted line would otherwise go to detect-secrets again only for the `SECRET` of its
    placeholder: a hit can only start there, inside the placeholder, and such hits are dropped."""
    if "<secret:" not in lower:
        return lower
    return _PLACEHOLDER_LOWER.sub(lambda m: " " * len(m.group()), lower)


def _filetype_name(hint: str) -> str:
    dot = hint.rfind(".")
    suffix = hint[dot:].lower() if dot >= 0 else ""
    if suffix in _CONFIG_SUFFIXES or not suffix:
        # Free text (prompts, test output, commands) is scanned as configuration: values need
        # no quotes there, which is how people paste secrets into prose.
        return "x.yaml"
    return "x" + suffix


class DetectSecrets:
    """The plugins of detect-secrets (all but the public-IP one: IPs are identity, scrubbed
    elsewhere), loaded on first use."""

    def __init__(self, cache_size: int = 200_000) -> None:
        self._plugins: list[Any] | None = None
        self._gates: list[str | None] = []
        self._is_indirect_reference: Callable[[str], bool] = lambda line: False
        self._needs = _Needs(())
        self._readers: list[_Reader | None] = []
        self._cache: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {}
        self._cache_size = cache_size
        self.lines_scanned = 0
        self.cache_hits = 0

    def load(self) -> list[Any]:
        """Import detect-secrets and set up its plugins (0.1-0.3 s; done on first use otherwise)."""
        if self._plugins is None:
            from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
            from detect_secrets.filters import heuristic

            mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
            self._plugins = [
                cls() for name, cls in sorted(mapping.items()) if name not in _LEFT_OUT
            ]
            self._heuristic = heuristic
            self._gates = _plugin_gates(self._plugins)
            self._needs = _Needs(_expressions(self._plugins))
            self._readers = [
                _keyword_reader(p, self._needs) or _regex_reader(p, self._needs)
                for p in self._plugins
            ]
            self._is_indirect_reference = _indirect_reference_filter(heuristic)
        return self._plugins

    def _is_false_positive(self, secret: str, line: str, plugin: Any) -> bool:
        h = self._heuristic
        return bool(
            h.is_templated_secret(secret)
            or h.is_prefixed_with_dollar_sign(secret)
            or h.is_sequential_string(secret)
            or h.is_potential_uuid(secret)
            or h.is_likely_id_string(secret, line, plugin)
            or h.is_not_alphanumeric_string(secret)
            or _PLACEHOLDER.search(secret) is not None
        )

    def scan_line(self, line: str, hint: str) -> tuple[tuple[str, str], ...]:
        """(kind, value) pairs detect-secrets finds in one line."""
        key = (_filetype_name(hint), line)
        found = self._cache.get(key)
        if found is not None:
            self.cache_hits += 1
            return found
        plugins = self.load()
        self.lines_scanned += 1
        # Placeholders stay in the line (blanking them would make the next word look like a
        # value); hits inside them are dropped by the caller.
        # The keyword plugin (the slowest, ~40 us a line) runs only on a line holding one of
        # its words; the entropy plugins only on a line with a quote (their expression finds
        # quoted strings only).
        can = {
            _KEYWORD_GATE: _KEYWORD.search(line.lower()) is not None,
            _QUOTE_GATE: "'" in line or '"' in line,
            None: True,
        }
        if self._is_indirect_reference(line):
            result: tuple[tuple[str, str], ...] = ()
        else:
            mask = self._needs.of(line)
            hits: list[tuple[str, str]] = []
            for plugin, gate, read in zip(plugins, self._gates, self._readers, strict=True):
                if not can[gate]:
                    continue
                if gate == _QUOTE_GATE:
                    values = _high_entropy_values(plugin, line)
                elif read is not None:
                    values = read(key[0], line, mask)
                else:
                    values = _analyzed(plugin, key[0], line)
                for value in values:
                    if value and not self._is_false_positive(value, line, plugin):
                        kind = (
                            _KIND.get(plugin.secret_type)
                            or re.sub(r"\W+", "_", plugin.secret_type).lower()
                        )
                        hits.append((kind, value))
            result = tuple(hits)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[key] = result
        return result

    def find(
        self, text: str, hint: str, lines: tuple[str, ...] | None = None
    ) -> list[tuple[int, int, str]]:
        """(start, end, kind) spans in `text`, each widened to the whole token it sits in.
        `lines`: `detect_lines` of texts joined by newlines, this one among them, when known:
        the lines of this text to read are those of them it holds as whole lines."""
        spans: list[tuple[int, int, str]] = []
        if lines is None:
            quoted = _quoted_runs(text)
            places = _candidate_lines(text, quoted)
        else:
            places, quoted = _places(text, lines)
        for start, end in places:
            line = text[start:end]
            for kind, value in self.scan_line(line.rstrip("\r"), hint):
                if kind not in _OWN_VALUES:
                    # A provider expression (Artifactory's) matches the space, quote or `=`
                    # before and after its token: they are not the token's.
                    value = value.strip(_AROUND_A_TOKEN) or value
                at = line.find(value)
                while at >= 0:
                    a, b = _widen(line, at, at + len(value))
                    spans.append((start + a, start + b, kind))
                    at = line.find(value, at + len(value))
        # detect-secrets reads some lines so that a quoted string escapes its entropy plugins
        # (seen: `=0( x = "<40 hex digits>" ]`); a quoted string over the plugins' own limits is
        # a secret whatever surrounds it.
        spans.extend((a, b, "high_entropy") for _, a, b, _, over in quoted if over)
        return [s for s in spans if not (s[2] == "high_entropy" and _is_digest(text, s[0], s[1]))]


# A digest is named as one: a hex value of a key called so (`sha256 = "..."`, `"hash": "..."`),
# or a lock file's `sha512-<base64>`. The entropy plugins cannot tell it from a secret.
_DIGEST_KEY = re.compile(
    r"(?i)(?:sha\d*|md5|hash|digest|checksum|integrity|etag|commit|revision|rev)[\"']?\s*[:=]"
    r"\s*[\"']?$"
)
_DIGEST_PREFIX = ("sha512-", "sha384-", "sha256-", "sha1-", "md5-")


def _is_digest(text: str, start: int, end: int) -> bool:
    value = text[start:end].strip("\"'")
    if value.startswith(_DIGEST_PREFIX) or text.endswith(_DIGEST_PREFIX, max(0, start - 8), start):
        return True
    if not _HEX.issuperset(value):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return _DIGEST_KEY.search(text, line_start, start) is not None


def _places(text: str, lines: tuple[str, ...]) -> tuple[list[tuple[int, int]], list[_Quoted]]:
    """Where `text` holds one of `lines` as a whole line (whether a line is a candidate depends
    on its content alone), and the quoted runs of those lines."""
    wanted = set(lines)
    places = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        if line in wanted:
            places.append((start, end))
        start = end + 1
    quoted = [
        (q + start, a + start, b + start, gate, over)
        for start, end in places
        for q, a, b, gate, over in _quoted_runs(text[start:end])
    ]
    return places, quoted


def _analyzed(plugin: Any, filename: str, line: str) -> list[str]:
    """What a plugin's own `analyze_line` reports (for a plugin no reader stands in for)."""
    from detect_secrets.util.code_snippet import get_code_snippet

    found = plugin.analyze_line(
        filename=filename, line=line, line_number=1, context=get_code_snippet([line], 1)
    )
    return [secret.secret_value or "" for secret in found]


_KEYWORD_GATE, _QUOTE_GATE = "keyword", "quote"


def _expressions(plugins: list[Any]) -> list[re.Pattern[str]]:
    """The expressions of the plugins that `_NEEDS` may name."""
    from detect_secrets.plugins import keyword

    found = [getattr(keyword, name) for name in dir(keyword) if name.endswith("_REGEX")]
    for plugin in plugins:
        found.extend(getattr(plugin, "denylist", ()) or ())
    return [e for e in found if isinstance(e, re.Pattern)]


def _plugin_gates(plugins: list[Any]) -> list[str | None]:
    """For each plugin, what a line must have for it to find anything (None: no gate)."""
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    def gate(plugin: Any) -> str | None:
        if type(plugin).__name__ == "KeywordDetector":
            return _KEYWORD_GATE
        if isinstance(plugin, HighEntropyStringsPlugin) and _reads_quoted_strings(plugin):
            return _QUOTE_GATE
        return None

    return [gate(plugin) for plugin in plugins]


def _reads_quoted_strings(plugin: Any) -> bool:
    """Is this entropy plugin's expression the quoted-string one `_high_entropy_values` stands in
    for? Its `analyze_line` (quoted strings only, kept when their entropy is over the limit) was
    read at detect-secrets 1.5; the dependency is pinned below 2 for that."""
    expected = rf"""([\'"])([{re.escape(plugin.charset)}]+)(\1)"""
    return bool(plugin.regex.pattern == expected)


# Our own entropy is the plugins' own (the Shannon entropy of the string's characters) up to
# rounding, except that the hex plugin lowers it for a string of decimal digits only. So theirs,
# 10x slower, is computed only within this margin of the limit, or for such a string.
_ENTROPY_MARGIN = 0.01


def _high_entropy_values(plugin: Any, line: str) -> list[str]:
    """What an entropy plugin's `analyze_line` reports for a line (quoted strings over its
    limit), without building its result objects or measuring most strings again."""
    limit = plugin.entropy_limit
    out: list[str] = []
    for _, value, _ in plugin.regex.findall(line):
        if value in out:
            continue
        ours = _entropy(value)
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
_NEEDS: dict[str, tuple[tuple[str, ...], ...]] = {
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


def _digest(expression: re.Pattern[str]) -> str:
    return hashlib.sha256(expression.pattern.encode()).hexdigest()[:12]


class _Needs:
    """Which of the strings that `_NEEDS` names a line holds, as bits; and for each expression,
    the bits of its groups (two: a line may match when it meets both). Every line has bit 0,
    the one group of an expression `_NEEDS` does not list."""

    def __init__(self, expressions: Iterable[re.Pattern[str]]) -> None:
        # (string, read in lower case) -> bit; bit 0 is every line's.
        self._bits: dict[tuple[str, bool], int] = {("", False): 1}
        self._groups: dict[re.Pattern[str], tuple[int, int]] = {}
        for expression in expressions:
            need = _NEEDS.get(_digest(expression))
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


#: What a plugin reports for a line (its file name, the line, the line's `_Needs` mask).
_Reader = Callable[[str, str, int], list[str]]


def _keyword_reader(plugin: Any, needs: _Needs) -> _Reader | None:
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


def _regex_reader(plugin: Any, needs: _Needs) -> _Reader | None:
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
_INDIRECT = r"([^\v=!:]*)\s*(:=?|[!=]{1,3})\s*([\w.-]+[\[\(][^\v]*[\]\)])"
_INDIRECT_CORE = re.compile(r"(:=?|[!=]{1,3})\s*([\w.-]+[\[\(][^\v]*[\]\)])")


def _indirect_reference_filter(heuristic: Any) -> Callable[[str], bool]:
    if heuristic._get_indirect_reference_regex().pattern != _INDIRECT:
        return heuristic.is_indirect_reference

    def is_indirect_reference(line: str) -> bool:
        # The library's own limit (its expression backtracks badly on long lines).
        return len(line) <= 1000 and _INDIRECT_CORE.search(line) is not None

    return is_indirect_reference


def _line_at(text: str, at: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return start, len(text) if end < 0 else end


def _candidate_lines(
    text: str,
    quoted: list[_Quoted] | None = None,
    lower: str | None = None,
    hits: Sequence[tuple[str, int]] | None = None,
) -> list[tuple[int, int]]:
    """Lines holding one of the keyword plugin's words, or a quoted run the entropy plugins
    could flag, found without splitting the text into lines. What the caller knows already
    may be given: `quoted`, `lower`, `hits` (see `detect_lines`)."""
    lines: set[tuple[int, int]] = set()
    blank = _without_placeholders(lower_keeping_offsets(text) if lower is None else lower)
    if hits is None:
        hits = [(word, at) for word in DETECT_ANCHORS for at in occurrences(blank, word)]
    read: set[int] = set()  # starts of the lines already read
    for word, at in hits:
        # An anchor inside a placeholder was blanked: not a word of the line.
        if word not in _DETECT_ANCHOR_SET or not blank.startswith(word, at):
            continue
        start, end = _line_at(blank, at)
        if start not in read:
            read.add(start)
            if _KEYWORD.search(blank, start, end):
                lines.add((start, end))
    for q in _quoted_runs(text) if quoted is None else quoted:
        lines.add(_line_at(text, q[0]))
    return sorted(lines)


def _widen(line: str, start: int, end: int) -> tuple[int, int]:
    for m in _TOKEN_CHARS.finditer(line):
        if m.start() <= start < m.end():
            return min(start, m.start()), max(end, m.end())
    return start, end
