"""detect-secrets as an engine: its plugins, run only on the lines that could hold what they
find (`lines`), through stand-ins for their own reading where those were checked (`readers`),
and cached by line content. detect-secrets is imported on first use (0.15-0.5 s), never on the
hook path.

Its heuristic filters (templated values, indirect references, UUIDs, sequential strings...) are
applied as `detect-secrets scan` applies them; a hit is widened to the whole token it sits in,
because some plugins report only a prefix (the GitHub plugin reports `ghp`). What of the
library beyond its documented use this relies on is listed in `internals`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from sync.anonymize.secrets.detect_secrets_internals import KINDS, LEFT_OUT
from sync.anonymize.secrets.detect_secrets_lines import (
    DETECT_ANCHORS,
    HEX,
    KEYWORD,
    PROVIDER_HINTS,
    detect_lines,
    no_provider_line,
    places,
    provider_literal_at,
)
from sync.anonymize.secrets.detect_secrets_readers import (
    KEYWORD_GATE,
    QUOTE_GATE,
    Needs,
    Reader,
    analyzed,
    expressions_of,
    high_entropy_values,
    indirect_reference_filter,
    keyword_reader,
    plugin_gates,
    regex_reader,
)
from sync.anonymize.secrets.engine import Body, Literals, Span, prepared

__all__ = ["DetectSecrets"]

# What a token is made of, for widening a hit; `=` is left out, so that `KEY=value` widens to
# `value` only.
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/_\-.~]+")
# Our placeholders and identity markers: detect-secrets must not see them as values.
_PLACEHOLDER = re.compile(r"<SECRET:[a-z0-9_]+:[0-9a-f]{8}>|<(?:email|ip|user|host|workspace)>")

#: Kinds whose plugins report the value alone (the others' expressions may take in what stands
#: around a token, `_AROUND_A_TOKEN`).
_OWN_VALUES = frozenset(KINDS.values())
_AROUND_A_TOKEN = " \t\r\n\"'=:"

_DETECT_WORDS = frozenset(DETECT_ANCHORS)
_PROVIDER_WORDS = frozenset(PROVIDER_HINTS)

# Representative file names per detect-secrets file type, so the cache is keyed by type, not name.
_CONFIG_SUFFIXES = {".yaml", ".yml", ".ini", ".cfg", ".conf", ".properties", ".toml", ".env"}


def _filetype_name(hint: str) -> str:
    dot = hint.rfind(".")
    suffix = hint[dot:].lower() if dot >= 0 else ""
    if suffix in _CONFIG_SUFFIXES or not suffix:
        # Free text (prompts, test output, commands) is scanned as configuration: values need
        # no quotes there, which is how people paste secrets into prose.
        return "x.yaml"
    return "x" + suffix


class DetectSecrets:
    """The plugins of detect-secrets (all but those `internals.LEFT_OUT` names), loaded on first
    use, and the engine that runs them."""

    words = frozenset((*DETECT_ANCHORS, *PROVIDER_HINTS))
    fallback = False
    reads_long_runs = False

    def __init__(self, cache_size: int = 200_000) -> None:
        self._plugins: list[Any] | None = None
        self._gates: list[str | None] = []
        self._is_indirect_reference: Callable[[str], bool] = lambda line: False
        self._needs = Needs(())
        self._readers: list[Reader | None] = []
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
            self._plugins = [cls() for name, cls in sorted(mapping.items()) if name not in LEFT_OUT]
            self._heuristic = heuristic
            self._gates = plugin_gates(self._plugins)
            self._needs = Needs(expressions_of(self._plugins))
            self._readers = [
                keyword_reader(p, self._needs) or regex_reader(p, self._needs)
                for p in self._plugins
            ]
            self._is_indirect_reference = indirect_reference_filter(heuristic)
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
            KEYWORD_GATE: KEYWORD.search(line.lower()) is not None,
            QUOTE_GATE: "'" in line or '"' in line,
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
                if gate == QUOTE_GATE:
                    values = high_entropy_values(plugin, line)
                elif read is not None:
                    values = read(key[0], line, mask)
                else:
                    values = analyzed(plugin, key[0], line)
                for value in values:
                    if value and not self._is_false_positive(value, line, plugin):
                        kind = (
                            KINDS.get(plugin.secret_type)
                            or re.sub(r"\W+", "_", plugin.secret_type).lower()
                        )
                        hits.append((kind, value))
            result = tuple(hits)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[key] = result
        return result

    # -- the engine ----------------------------------------------------------------------------

    def plan(self, body: Body) -> tuple[str, ...] | None:
        """The lines of `body` detect-secrets must read (see `lines.detect_lines`)."""
        present = body.present
        hits = body.hits
        lines = detect_lines(
            body.text,
            body.lower,
            # Without one of its key words, only the text's quoted and provider runs are read.
            () if present.isdisjoint(_DETECT_WORDS) else hits,
            body.data,
            body.long_runs,
            not present.isdisjoint(_PROVIDER_WORDS) and provider_literal_at(body.text, hits),
        )
        return lines or None

    def find(
        self,
        text: str,
        hint: str = "",
        plan: tuple[str, ...] | None = None,
        literals: Literals | None = None,
    ) -> list[Span]:
        if plan is None or literals is None:
            plan, literals = prepared(self, text, plan, literals)
        if plan is None or not any(line in text for line in plan):
            return []
        return [Span(*s) for s in self.spans(text, hint, plan)]

    def reads_hint(self, text: str, plan: tuple[str, ...]) -> bool:
        # Its plugins read by file type, on the lines of the plan the text holds.
        return any(line in text for line in plan)

    def silent_without_literals(self, text: str) -> bool:
        # Without a key word, only a quoted string or a provider expression calls for a line.
        return "'" not in text and '"' not in text and no_provider_line(text, False)

    def spans(self, text: str, hint: str, lines: tuple[str, ...]) -> list[tuple[int, int, str]]:
        """(start, end, kind) spans in `text`, each widened to the whole token it sits in.
        `lines`: `detect_lines` of texts joined by newlines, this one among them: the lines of
        this text to read are those of them it holds as whole lines."""
        spans: list[tuple[int, int, str]] = []
        where, quoted = places(text, lines)
        for start, end in where:
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
    if not HEX.issuperset(value):
        return False
    line_start = text.rfind("\n", 0, start) + 1
    return _DIGEST_KEY.search(text, line_start, start) is not None


def _widen(line: str, start: int, end: int) -> tuple[int, int]:
    for m in _TOKEN_CHARS.finditer(line):
        if m.start() <= start < m.end():
            return min(start, m.start()), max(end, m.end())
    return start, end
