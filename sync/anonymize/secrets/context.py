"""Secrets told apart by what stands near them in the same episode, not by their own shape.

- AWS: a secret access key is 40 characters of base64 with no prefix; next to an access key id
  (anywhere in the same episode: prose, a hunk, a command) such a run is the secret half.
- A password beside a user name: `user: deploy` then `password: x7Gq...` in a config block,
  `user alice password hunter22` in prose, `mysql -u root -pS3cret`, `curl -u user:pass`.
- A private key split over hunks or fields: once an episode holds a `PRIVATE KEY-----` marker,
  the base64 body lines of every text are key material, also in JSON's escaped form.

The episode-wide facts are found once over all of an episode's text (the engine's plan, read
from the scanner's one literal pass); `find` then reads one text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from sync.anonymize.secrets.engine import Body, Literals, Span, prepared
from sync.anonymize.secrets.our_rules import Rule

__all__ = ["Context", "ContextEngine", "find_in_context", "has_user_name"]

_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
_PEM_MARK = "PRIVATE KEY-----"
# Body lines of a PEM block: raw, or inside a JSON string (`\n` escapes).
_PEM_LINES = re.compile(r"(?m)^[ \t\"']*([A-Za-z0-9+/=]{40,100})[ \t\"',]*\r?$")
_PEM_ESCAPED = re.compile(
    r"(?:(?<=\\n)|(?<=[\"']))[A-Za-z0-9+/=]{16,100}(?:\\n[A-Za-z0-9+/=]{4,100})*(?=\\n)"
)
# The tail of a block whose BEGIN was in another text: short lines too, up to the END line.
_PEM_TAIL = re.compile(
    r"(?:^|(?<=\n)|(?<=\\n)|(?<=[\"']))((?:[A-Za-z0-9+/=]{4,100}(?:\r?\n|\\n))+)"
    r"(?=-----END[ A-Z0-9]*PRIVATE KEY)"
)

_USER_KEY = re.compile(
    r"(?i)(?<![a-z0-9])(?:user(?:_?name)?|login|uid|usr|db_?user|account)[\"']?\s*(?:[:=]|\s)\s*"
    r"[\"']?[\w.@+\-]{2,}"
)
_PASSWORD_VALUE = re.compile(
    r"(?i)(?<![a-z0-9])(?:pass(?:word|wd|wort|phrase|code)?|pwd)[a-z0-9_]*[\"']?"
    r"(?:\s*[:=]\s*|\s+is\s+|\s+)[\"']?([^\s\"'`,;<>{}()\[\]]{6,})"
)
_COMMAND_PASSWORD = re.compile(
    r"(?<!\S)(?:--(?:password|passwd|pass|pwd|token|secret|api-key|apikey|auth-token)(?:=|\s+)"
    r"[\"']?([^\s\"'-][^\s\"']{5,})"
    r"|-p([^\s\"'-][^\s\"']{5,})(?=\s|$)"
    r"|(?:-u|--user)\s+[\"']?[^\s:\"']+:([^\s@\"']{4,}))"
)
_NOT_A_VALUE = re.compile(
    r"(?i)(?:[$%]|\{\{|os\.|env|getenv|none$|null$|true$|false$|required|optional|field|prompt|"
    r"reset|hash|changed?|policy|manager|input|length|strength|should|must|\*+$|x+$|<)"
)


class Context(NamedTuple):
    """What an episode holds that changes how each of its texts is read."""

    aws_key_id: bool
    private_key: bool
    #: A user name and a password word both stand somewhere in the episode.
    user_name: bool
    #: A command-line flag that carries a credential may stand in it.
    command: bool

    @property
    def empty(self) -> bool:
        return not (self.aws_key_id or self.private_key or self.user_name or self.command)


def has_user_name(blob: str, words_at: Iterable[int] | None = None) -> bool:
    """Does a user name stand as a key's value somewhere (`user: deploy`, `login=ops`)?
    `words_at`: where each of the key's words (`user`, `login`, `uid`, `usr`, `account`) stands
    in the lower-cased `blob`, when known. In ASCII every match starts at one of them or 2-3
    characters before `user` (`db_user`), so only there is the key tried: searched from every
    place, its case-blind start makes the search cost ~45 us on 1.6 KB."""
    if words_at is None or not blob.isascii():
        return _USER_KEY.search(blob) is not None
    match = _USER_KEY.match
    return any(
        match(blob, start) is not None
        for at in words_at
        for start in (at, at - 2, at - 3)
        if start >= 0
    )


def _mixed(value: str) -> bool:
    return any(c.isupper() for c in value) and any(c.islower() for c in value)


def find_in_context(text: str, context: Context) -> Iterator[Span]:
    """Each secret `text` holds given its episode's `context`."""
    if context.aws_key_id:
        for m in _AWS_SECRET.finditer(text):
            value = m.group()
            if _mixed(value) and any(c.isdigit() for c in value):
                yield Span(m.start(), m.end(), "aws_secret_key")
    if context.private_key:
        for m in _PEM_LINES.finditer(text):
            yield Span(m.start(1), m.end(1), "private_key")
        if "\\n" in text:
            for m in _PEM_ESCAPED.finditer(text):
                yield Span(m.start(), m.end(), "private_key")
        if "-----END" in text:
            for m in _PEM_TAIL.finditer(text):
                yield Span(m.start(1), m.end(1), "private_key")
    if context.command:
        mysql = "mysql" in text
        for m in _COMMAND_PASSWORD.finditer(text):
            g = next(i for i in (1, 2, 3) if m.group(i))
            if g == 2 and not mysql:
                continue  # `-p` carries a password for mysql's tools; elsewhere it is a flag
            if not _NOT_A_VALUE.match(m.group(g)):
                yield Span(m.start(g), m.end(g), "password")
    if context.user_name and ("pass" in text.lower() or "pwd" in text.lower()):
        for m in _PASSWORD_VALUE.finditer(text):
            value = m.group(1)
            if _NOT_A_VALUE.match(value) or value.isalpha() and value.islower():
                continue
            yield Span(m.start(1), m.end(1), "password")


# Literal words whose presence (in lower case) turns on one of the context readers.
_COMMAND_WORDS = (
    "--pass", "--pwd", "--token", "--secret", "--api-key", "--apikey", "--auth-token",
    "mysql", "-u ", "--user ",
)  # fmt: skip
_USER_WORDS = ("user", "login", "uid", "usr", "account")
_USER_WORD_SET = frozenset(_USER_WORDS)
_PASSWORD_WORDS = ("pass", "pwd")
_PEM_WORD = "private key-----"


class ContextEngine:
    """The engine: what an episode holds (an AWS key id, a PEM marker, a user name beside a
    password word, a credential flag) read from the literal pass, then each text read for it."""

    fallback = False
    reads_long_runs = False

    def __init__(self, aws_key_ids: Sequence[Rule]) -> None:
        """`aws_key_ids`: the rules that find an access key id (its secret half is then found
        beside it), each searched where one of its probes stands."""
        self._aws = tuple((rule, frozenset(p.lower() for p in rule.probes)) for rule in aws_key_ids)
        self._aws_words = frozenset(p for _, probes in self._aws for p in probes)
        self.words = (
            frozenset((*_COMMAND_WORDS, *_USER_WORDS, *_PASSWORD_WORDS, _PEM_WORD))
            | self._aws_words
        )

    def plan(self, body: Body) -> Context | None:
        present = body.present
        context = Context(
            not present.isdisjoint(self._aws_words)
            and any(
                not present.isdisjoint(p) and body.found(rule.pattern) for rule, p in self._aws
            ),
            _PEM_WORD in present,
            not present.isdisjoint(_USER_WORDS)
            and not present.isdisjoint(_PASSWORD_WORDS)
            and has_user_name(body.text, [at for word, at in body.hits if word in _USER_WORD_SET]),
            not present.isdisjoint(_COMMAND_WORDS),
        )
        return None if context.empty else context

    def find(
        self,
        text: str,
        hint: str = "",
        plan: Context | None = None,
        literals: Literals | None = None,
    ) -> list[Span]:
        if plan is None or literals is None:
            plan, literals = prepared(self, text, plan, literals)
        if plan is None:
            return []
        return list(find_in_context(text, plan))

    def reads_hint(self, text: str, plan: Context) -> bool:
        return False

    def silent_without_literals(self, text: str) -> bool:
        return True
