"""Which lines detect-secrets must read: few, since its plugins are slow.

Measured on this project's machine: its plugins scan about 3,000 lines/s together (the keyword
detector alone 12,000 lines/s), while an episode carries tens of lines and the pipeline must
anonymize thousands of episodes a second. So a line goes to detect-secrets only when it could
hold what it finds: one of the keywords its keyword plugin looks for (its own list), a long
quoted run of letters and digits that its entropy plugins could flag, or what one of its
provider expressions needs. Most lines of code hold none of them. Over an episode's texts joined
by newlines, these are found once (`detect_lines`), and each text then reads only its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

from sync.anonymize.secrets.detect_secrets_internals import LEFT_OUT
from sync.anonymize.secrets.detect_secrets_readers import digest
from sync.anonymize.secrets.entropy import shannon_entropy
from sync.anonymize.secrets.literals import lower_keeping_offsets, occurrences
from sync.anonymize.secrets.re2_bytes import found as re2_found

__all__ = [
    "DETECT_ANCHORS",
    "HEX",
    "KEYWORD",
    "PROVIDER_HINTS",
    "Quoted",
    "candidate_lines",
    "detect_lines",
    "no_provider_line",
    "places",
    "provider_gate",
    "provider_lines",
    "provider_literal_at",
    "quoted_runs",
]

# The keyword plugin's own list (detect_secrets.plugins.keyword.DENYLIST), as one expression.
KEYWORD = re.compile(
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
HEX = frozenset("0123456789abcdefABCDEF")
# The secret placeholder in lower-cased text: its `secret` is ours, not a key word of the line.
_PLACEHOLDER_LOWER = re.compile(r"<secret:[a-z0-9_]+:[0-9a-f]{8}>")


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
    """The lines of `text` detect-secrets must read (their content). Over all of an
    episode's texts joined by newlines, these are the candidate lines of each of its texts:
    a text holding none of them needs no detect-secrets. `lower`: `lower_keeping_offsets(text)`
    and `hits`: where each of `DETECT_ANCHORS` stands in it (others may be listed too), when
    the caller found them already; `data`: its UTF-8 (surrogates passed), and `long_runs`:
    each run of 20 or more of `[A-Za-z0-9+/_-]` in it (`runs.long_runs`), likewise; and
    `provider_literal`: `provider_literal_at` of a literal pass that looked for `PROVIDER_HINTS`."""
    if not hits and hits is not None and "'" not in text and '"' not in text:
        # No key word and no quote: only a provider expression can call for a line.
        return tuple(provider_lines(text, data, long_runs, provider_literal))
    spans = candidate_lines(text, None, lower, hits)
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
    gate = provider_gate()
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
        if name in LEFT_OUT:
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


# What every provider expression needs, read at detect-secrets 1.5 (keyed as `readers.NEEDS`):
# one of the literals `AKC` and `AP` (Artifactory) or `sq0csp-` (Square), or else 24 characters
# or more of `[A-Za-z0-9_-]` in a row (each other expression's value: Cloudant's 24 letters or
# 64 hex digits, Discord's 24-26 first characters, IBM's 44 and 48, Mailchimp's 32 and `-us1`,
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
    if literal or not text.isascii() or provider_gate() is None:
        return False
    return _PROVIDER_RUN_OF not in text.encode("ascii").translate(_TOKEN_AS_A)


@lru_cache(maxsize=1)
def provider_gate() -> Any:
    """The search for what every provider expression needs; None when an expression is not one
    read for it (then the finder reads every text)."""
    expressions = _provider_expressions()
    if not expressions or any(digest(e) not in _PROVIDER_GATED for e in expressions):
        return None
    import re2

    return re2.compile(_PROVIDER_GATE)


_LOOK_AHEAD = re.compile(r"\(\?[!=][^()]*\)")


#: A quoted string the entropy plugins read: (where its quote is, where its value starts and
#: ends, whether its entropy passes our gate, whether it passes the plugins' own limit).
Quoted = tuple[int, int, int, bool, bool]


def quoted_runs(text: str) -> list[Quoted]:
    out: list[Quoted] = []
    # Two expressions, each with a literal first character, scan faster than one with a class.
    for pattern, quote in ((_ENTROPY_DOUBLE, '"'), (_ENTROPY_SINGLE, "'")):
        if quote not in text:
            continue
        for m in pattern.finditer(text):
            value = m.group(1)
            entropy = shannon_entropy(value)
            if HEX.issuperset(value):
                gate, limit = _HEX_GATE, _HEX_LIMIT
            else:
                gate, limit = _BASE64_GATE, _BASE64_LIMIT
            if entropy > gate:
                out.append((m.start(), m.start(1), m.end(1), True, entropy > limit))
    return out


def _without_placeholders(lower: str) -> str:
    """Lower-cased text with each secret placeholder blanked (same length, so offsets hold).
    A redacted line would otherwise go to detect-secrets again only for the `SECRET` of its
    placeholder: a hit can only start there, inside the placeholder, and such hits are dropped."""
    if "<secret:" not in lower:
        return lower
    return _PLACEHOLDER_LOWER.sub(lambda m: " " * len(m.group()), lower)


def places(text: str, lines: tuple[str, ...]) -> tuple[list[tuple[int, int]], list[Quoted]]:
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
        for q, a, b, gate, over in quoted_runs(text[start:end])
    ]
    return places, quoted


def _line_at(text: str, at: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return start, len(text) if end < 0 else end


def candidate_lines(
    text: str,
    quoted: list[Quoted] | None = None,
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
            if KEYWORD.search(blank, start, end):
                lines.add((start, end))
    for q in quoted_runs(text) if quoted is None else quoted:
        lines.add(_line_at(text, q[0]))
    return sorted(lines)
