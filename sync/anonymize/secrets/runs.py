"""Unquoted tokens: high entropy in prose, and secrets hidden by an encoding.

detect-secrets measures entropy only inside quotes; people paste tokens bare ("use
Xk29fQ... for staging"). Every run of token characters of 16+ in an episode is looked at once,
over the whole episode (found in its UTF-8 bytes, ~4 us for 1.6 KB):

- a run of 20+ that mixes cases and digits is a secret when its Shannon entropy, relative to the
  most a string of its length can have, reaches `ENTROPY_RATIO` (see the README, "What is
  scrubbed", for how the figure was chosen from the labelled corpus); hex-only runs (digests,
  UUIDs, commit ids) and runs that lock files and data URIs carry are left to the other rules;
- a run that decodes (base64, hex, percent-encoding) to printable text is decoded and the text
  scanned again; a secret in it makes the encoded run a secret.

A run once judged is judged the same everywhere: the plan carries the values, and each text is
searched for them. A run's span is kept only where no other engine found a secret: a rule names
the kind better, and a run may be longer than the token a rule found in it (`junit-ghp_...`).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
import string
from collections.abc import Callable, Iterator
from urllib.parse import unquote

from sync.anonymize.secrets.engine import Body, Literals, Span, prepared
from sync.anonymize.secrets.entropy import shannon_entropy

__all__ = [
    "ENTROPY_RATIO",
    "MIN_LENGTH",
    "TokenJudge",
    "UnquotedRuns",
    "entropy_ratio",
    "is_random_looking",
    "long_runs",
]

#: Shortest run the entropy measure reads (random base62 of 20 has ~4.0 bits of 4.32 possible).
MIN_LENGTH = 20
#: Entropy over log2(length) a mixed run must reach (chosen from the corpus, see the README).
ENTROPY_RATIO = 0.78
_MIN_DECODED = 16

# Runs of 20+ are found with every byte of the class made an `a` and every other a space: each
# run of 20 `a`s is then one substring search away, and no object is made of a shorter word
# (splitting would make one of every word; re2, called once a run, is read from memory).
_RUN_AS_A = bytes(
    0x61 if chr(c).isascii() and (chr(c).isalnum() or chr(c) in "+/_-") else 0x20
    for c in range(256)
)
_SHORTEST_RUN = b"a" * MIN_LENGTH
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_PERCENT_RUN = re.compile(r"[^\s\"'<>`]*%[0-9A-Fa-f]{2}[^\s\"'<>`]*")
_HEXISH = re.compile(r"[0-9a-fA-F\-]+")
_B64 = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_B64URL = re.compile(r"[A-Za-z0-9_\-]+={0,2}")
_PRINTABLE_BYTES = bytes([*range(32, 127), 9, 10, 13])
#: The base64 (and base64url) digits worth under 32.
_LOW_DIGITS = frozenset(string.ascii_uppercase + "abcdef")
# What lock files and data URIs put before a digest or a blob: never a secret.
_DIGEST_MARKS = ("sha512-", "sha384-", "sha256-", "sha1-", "md5-", "h1:", "sha256:", "sha512:")
_DATA_URI = ";base64,"
_MARKS = tuple(m.encode() for m in (*_DIGEST_MARKS, _DATA_URI))
_USER_PASSWORD = re.compile(r"[\w.@+\-]{1,64}:[^\s:]{6,}")


def long_runs(data: bytes) -> set[bytes]:
    """Each run of 20 or more of `[A-Za-z0-9+/_-]` in `data` (whole: none can be longer)."""
    marked = data.translate(_RUN_AS_A)
    out: set[bytes] = set()
    # Searched from a space (or the start), the first 20 `a`s found start a run.
    at = marked.find(_SHORTEST_RUN)
    while at >= 0:
        end = marked.find(b" ", at + MIN_LENGTH)
        if end < 0:
            out.add(data[at:])
            break
        out.add(data[at:end])
        at = marked.find(_SHORTEST_RUN, end)
    return out


def entropy_ratio(value: str) -> float:
    """Shannon entropy of `value`'s characters over the most a string of its length can have."""
    n = len(value)
    if n < 2:
        return 0.0
    return shannon_entropy(value) / math.log2(min(n, 64))


def is_random_looking(value: str, ratio: float = ENTROPY_RATIO) -> bool:
    """A run of 20+ token characters that mixes lower case, upper case and digits, is not all
    hex, and whose entropy ratio reaches `ratio`."""
    core = value.rstrip("=")
    # Cheapest tests first: most runs are paths and identifiers, in one case or without digits.
    if len(core) < MIN_LENGTH or core.lower() == core:
        return False
    digit = len(core) - len(core.translate(_NO_DIGITS))
    if digit < 2 or _HEXISH.fullmatch(core):
        return False
    lower = core.upper() != core
    upper = sum(map(str.isupper, core))
    # All three classes, or upper case and digits both plenty (`NRAK-7N9T3E58U15MZ...`); lower
    # case and digits alone is how ids and digests with a suffix look (`1a8394ed080ab02c-r461`).
    if not (lower or upper >= 4 and digit >= 4):
        return False
    if entropy_ratio(core) < ratio:
        return False
    # A long identifier spells words: its runs of letters are long. Random text switches class
    # every two or three characters.
    classes = core.translate(_CLASS_OF)
    switches = sum(1 for a, b in zip(classes, classes[1:], strict=False) if a != b)
    return switches >= len(core) / 4


_NO_DIGITS = str.maketrans("", "", string.digits)
_CLASS_OF = str.maketrans(
    {
        **{c: "a" for c in string.ascii_lowercase},
        **{c: "A" for c in string.ascii_uppercase},
        **{c: "0" for c in string.digits},
    }
)


def _after_digest_mark(data: bytes, raw: bytes) -> bool:
    """Does every occurrence of the run follow what lock files put before a digest, or a data
    URI's `;base64,` (an image, a font: binary, and judged high entropy only by its shape)?"""
    at = data.find(raw)
    while at >= 0:
        before = data[max(0, at - 8) : at]
        if not any(before.endswith(mark) for mark in _MARKS):
            return False
        at = data.find(raw, at + 1)
    return True


def _path_like(value: str) -> bool:
    """A run with `/` between word-like parts (`home/alice/tmp/x`) is a path, judged by part."""
    parts = value.split("/")
    return len(parts) > 1 and any(p.isalpha() and (p.islower() or len(p) < 4) for p in parts)


def _printable(data: bytes) -> str | None:
    if len(data) < _MIN_DECODED:
        return None
    if data.translate(None, _PRINTABLE_BYTES):
        return None
    return data.decode("ascii")


def _decoded(value: str) -> list[str]:
    """The printable texts `value` decodes to, as base64, base64url or hex."""
    out: list[str] = []
    core = value.rstrip("=")
    # Every fourth digit starts a decoded byte (its top six bits): one of 32 or over makes the
    # byte 0x80 or over, which no printable text holds. Most runs (paths, identifiers) fail
    # here, at a tenth of the cost of decoding them.
    if len(core) % 4 != 1 and _LOW_DIGITS.issuperset(core[::4]):
        padded = core + "=" * (-len(core) % 4)
        for alphabet, decode in ((_B64, base64.b64decode), (_B64URL, base64.urlsafe_b64decode)):
            if alphabet.fullmatch(core):
                try:
                    text = _printable(decode(padded))
                except (binascii.Error, ValueError):
                    text = None
                if text is not None:
                    out.append(text)
                    break
    if len(core) % 2 == 0 and _HEXISH.fullmatch(core) and "-" not in core:
        try:
            text = _printable(bytes.fromhex(core))
        except ValueError:
            text = None
        if text is not None:
            out.append(text)
    return out


#: Scans a decoded text: the kind of the first secret in it, or None.
Scan = Callable[[str], "str | None"]


class TokenJudge:
    """Judges an episode's unquoted runs once; `scan` reads decoded text (the whole scanner)."""

    def __init__(self, scan: Scan, ratio: float = ENTROPY_RATIO) -> None:
        self._scan = scan
        self.ratio = ratio
        self._cache: dict[str, str | None] = {}
        #: Runs judged no secret, whole and by part (paths recur across an episode's texts and
        #: episodes): the same bytes are judged the same, so they are passed at once.
        self._clean: set[bytes] = set()

    def plan(
        self, blob: str, data: bytes | None = None, found_runs: set[bytes] | None = None
    ) -> dict[str, str]:
        """Value -> kind, for each run of `blob` found to be a secret. `data`: its UTF-8
        (surrogates passed) and `found_runs`: its `long_runs`, when the caller has them."""
        found: dict[str, str] = {}
        data = blob.encode("utf-8", "surrogatepass") if data is None else data
        cache = self._cache
        clean = self._clean
        if len(clean) > 100_000:
            clean.clear()
        # 20 characters is also the shortest base64 that decodes to `_MIN_DECODED` bytes.
        for raw in long_runs(data) if found_runs is None else found_runs:
            if raw in clean:
                continue
            value = raw.decode("ascii")
            if value.startswith(_DIGEST_MARKS):
                clean.add(raw)
                continue  # `sha512-<base64>` in a lock file
            kind = cache[value] if value in cache else self._judge(value)
            if kind is not None:
                if kind == "high_entropy" and _after_digest_mark(data, raw):
                    continue
                found[value] = kind
            elif "/" in value:
                # A path: its parts are judged on their own (`/tmp/<token>.log`).
                secret_part = False
                for part in value.split("/"):
                    if len(part) >= MIN_LENGTH:
                        kind = cache[part] if part in cache else self._judge(part)
                        if kind is not None:
                            found[part] = kind
                            secret_part = True
                if not secret_part:
                    clean.add(raw)
            else:
                clean.add(raw)
        if "%" in blob and _PERCENT.search(blob) is not None:
            for m in _PERCENT_RUN.finditer(blob):
                value = m.group()
                decoded = unquote(value)
                if decoded != value and len(decoded) >= 8:
                    kind = self._scan(decoded)
                    if kind is not None:
                        found[value] = kind
        return found

    def _judge(self, value: str) -> str | None:
        kind: str | None = None
        for text in _decoded(value):
            kind = self._scan(text)
            if kind is None and _USER_PASSWORD.fullmatch(text.strip()):
                kind = "basic_auth"
            if kind is not None:
                kind = "encoded_" + kind.removeprefix("encoded_")
                break
        if kind is None and is_random_looking(value, self.ratio) and not _path_like(value):
            kind = "high_entropy"
        if len(self._cache) > 100_000:
            self._cache.clear()
        self._cache[value] = kind
        return kind


#: A judged run: (value, kind).
RunsPlan = tuple[tuple[str, str], ...]


class UnquotedRuns:
    """The engine: an episode's unquoted runs judged once (entropy, decoding), then searched for
    in each text. `scan`: the kind of the first secret in a decoded text (the whole scanner)."""

    words: frozenset[str] = frozenset()
    fallback = True
    reads_long_runs = True

    def __init__(self, scan: Scan) -> None:
        self.judge = TokenJudge(scan)

    def plan(self, body: Body) -> RunsPlan | None:
        if body.decoding:
            return None  # a decoded run's text: its own runs are not decoded again
        return tuple(self.judge.plan(body.text, body.data, body.long_runs).items()) or None

    def find(
        self,
        text: str,
        hint: str = "",
        plan: RunsPlan | None = None,
        literals: Literals | None = None,
    ) -> list[Span]:
        if plan is None or literals is None:
            plan, literals = prepared(self, text, plan, literals)
        if plan is None:
            return []
        return [span for value, kind in plan for span in _run_spans(text, value, kind)]

    def reads_hint(self, text: str, plan: RunsPlan) -> bool:
        return False

    def silent_without_literals(self, text: str) -> bool:
        return False


_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


def _run_spans(text: str, value: str, kind: str) -> Iterator[Span]:
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
            yield Span(at, stop, kind)
        at = text.find(value, end)
