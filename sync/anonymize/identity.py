"""Scrubbing who and where from text: user names, home directories, host names, e-mail and IP
addresses, and the workspace's own absolute path.

What counts as this user's names is given (see `Identity`); finding them on the machine is the
shell's job. Generic forms (any home directory, any address) are recognised whoever they name.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sync.anonymize.secrets.literals import literal_positions, occurrences

__all__ = ["COMMON_ACCOUNTS", "HINTS", "Identity", "IdentityPlan", "IdentityScrubber"]

#: Account names too common to scrub as words (a user called `root` would otherwise turn every
#: "root" in the code into a marker). Their home directories are still scrubbed.
COMMON_ACCOUNTS = frozenset(
    {
        "root", "admin", "administrator", "user", "users", "ubuntu", "debian", "runner", "ec2-user",
        "vagrant", "nobody", "www-data", "git", "postgres", "node", "app", "dev", "test", "guest",
        "docker", "build", "ci", "local", "localhost", "home", "default",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Identity:
    """Names that identify the user or the machine, to be removed wherever they appear."""

    usernames: tuple[str, ...] = ()
    hostnames: tuple[str, ...] = ()
    #: Other words to remove: a real name, a company name, ... (`[sync] scrub = [...]`).
    extra: tuple[str, ...] = ()


# Each expression starts with a literal, so the engine's prefix search skips through text fast;
# left edges are checked on the (few) matches.
_EMAIL_DOMAIN = re.compile(r"@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}(?![A-Za-z0-9\-])")
_EMAIL_LOCAL = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._%+-")
_IPV4_HINT = re.compile(r"\.\d{1,3}\.\d{1,3}\.\d")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]|[A-Za-z])")
_IPV6_FULL_HINT = re.compile(r":[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:")
_IPV6 = re.compile(
    r"(?<![0-9A-Fa-f:])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![0-9A-Fa-f:])"
    r"|(?<![0-9A-Za-z:])(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4}"
    r"(?![0-9A-Za-z:])"
)
_HOME_UNIX = re.compile(r"/(?:home|Users|var/home)/[^/\s\"'`<>:;,)\]]+|/root(?=[/\s\"'`]|$)")
_HOME_WINDOWS = re.compile(
    r"[A-Za-z]:[\\/]+(?:Users|Documents and Settings)[\\/]+[^\\/\s\"'`<>:;,)\]]+"
)
_HOME_ANCHORS = ("/home/", "/Users/", "/root", "Users\\", "Users/", "Documents and Settings")
#: What the plan looks for in an episode's text, in one pass.
_find_hints = literal_positions((*_HOME_ANCHORS, "@", "::"))
#: The same in lower case: what another literal pass over the lower-cased text must look for
#: to stand in for that one (see `IdentityScrubber.plan_from`).
HINTS = tuple(dict.fromkeys(h.lower() for h in (*_HOME_ANCHORS, "@", "::")))
_HOME_HINTS = frozenset(a.lower() for a in _HOME_ANCHORS)
_WORKSPACE = "<workspace>"
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


def _maybe_ipv6(text: str, double_colons: Iterable[int] | None = None) -> bool:
    """A `::` with a digit next to it, or a run of full groups. `std::io` and `a::b` are not.
    `double_colons`: where each `::` stands, when known."""
    for at in occurrences(text, "::") if double_colons is None else double_colons:
        if any(map(str.isdigit, text[max(0, at - 4) : at + 6])):
            return True
    return _IPV6_FULL_HINT.search(text) is not None


def _home(m: re.Match[str]) -> str:
    start = m.start()
    if start > 0 and m.string[start - 1] in _PATH_CHARS:
        return m.group()  # the tail of a longer path or URL (example.com/home/...), not a home
    return "~"


def _emails(text: str) -> str:
    parts: list[str] = []
    at = 0
    for m in _EMAIL_DOMAIN.finditer(text):
        start = m.start()
        while start > at and text[start - 1] in _EMAIL_LOCAL:
            start -= 1
        if start == m.start():
            continue  # `@decorator.name`: nothing before the @
        parts.append(text[at:start])
        parts.append("<email>")
        at = m.end()
    if not parts:
        return text
    parts.append(text[at:])
    return "".join(parts)


def _keep_ip(text: str) -> bool:
    """Loopback, unspecified and documentation-free versions: addresses that name no one."""
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return True  # not an address after all (a version number such as 1.2.300.4)
    return ip.is_loopback or ip.is_unspecified


def _ipv6_is_real(text: str) -> bool:
    # Code is full of `a::b` paths; only forms with a digit in a group are taken as addresses.
    return any(ch.isdigit() for ch in text) and text.count(":") >= 2


class IdentityScrubber:
    def __init__(self, identity: Identity) -> None:
        words = [
            w
            for w in (*identity.usernames, *identity.hostnames, *identity.extra)
            if w and len(w) >= 3 and w.lower() not in COMMON_ACCOUNTS
        ]
        # Longest first, so that `host.example.org` goes before `host`.
        words = sorted({w.lower() for w in words}, key=len, reverse=True)
        self._word_lower = tuple(words)
        self._markers = {w.lower(): "<host>" for w in identity.hostnames}
        for w in identity.usernames:
            self._markers[w.lower()] = "<user>"
        #: A word that could stand in the workspace marker, or across its edge: then the
        #: marker must be in the text the plan reads.
        self._word_in_marker = any(w in _WORKSPACE or "<" in w or ">" in w for w in words)
        self._words = (
            re.compile(
                r"(?<![A-Za-z0-9])(?:"
                + "|".join(re.escape(w) for w in words)
                + r")(?![A-Za-z0-9])",
                re.IGNORECASE,
            )
            if words
            else None
        )

    def _marker(self, m: re.Match[str]) -> str:
        return self._markers.get(m.group().lower(), "<user>")

    def plan(self, text: str, roots: Iterable[str] = ()) -> IdentityPlan:
        """Which steps can change anything in `text` (all of an episode's text at once)."""
        lower = text.lower() if self._words is not None else ""
        return self._plan_of(text, lower, _find_hints(text), _HOME_ANCHORS, roots)

    def plan_from(
        self,
        text: str,
        lower: str,
        hits: Sequence[tuple[str, int]],
        roots: Iterable[str] = (),
    ) -> IdentityPlan:
        """What `plan` gives for `text` with each of `roots` replaced by the workspace marker,
        read from a literal pass already made over `lower` (`lower_keeping_offsets(text)`) that
        looked for `HINTS` among other words (`hits`: each literal found and where it starts).

        Read before the replacement and in lower case, a step is planned wherever it would be
        planned after it, and sometimes where it would not: the marker holds no hint, digit,
        `.`, `:` or `@`, so what the replaced text holds was in the text already. That is
        enough, as `scrub` replaces the roots in each text and checks it before each step.
        Where that does not hold (a root of one character is not replaced in the texts, a name
        the marker could hold, a lower case that is not character for character), the text is
        replaced and read as `plan` reads it."""
        roots = tuple(roots)
        if not text.isascii() or self._word_in_marker or any(len(r) < 2 for r in roots if r):
            replaced = text
            for root in roots:
                if root:
                    replaced = replaced.replace(root, _WORKSPACE)
            return self.plan(replaced, roots)
        return self._plan_of(text, lower, hits, _HOME_HINTS, roots)

    def _plan_of(
        self,
        text: str,
        lower: str,
        hits: Sequence[tuple[str, int]],
        home_hints: Iterable[str],
        roots: Iterable[str],
    ) -> IdentityPlan:
        """The plan for `text` from a literal pass's `hits` (as `_find_hints` spells them, or
        lower-cased: `home_hints` in the same case)."""
        present = {word for word, _ in hits}
        double_colons = [at for word, at in hits if word == "::"] if "::" in present else []
        return IdentityPlan(
            roots=tuple(r for r in roots if r and len(r) > 1),
            home=not present.isdisjoint(home_hints),
            email="@" in present,
            ipv4=_IPV4_HINT.search(text) is not None,
            ipv6=_maybe_ipv6(text, double_colons),
            words=self._words is not None and any(w in lower for w in self._word_lower),
        )

    def scrub(self, text: str, roots: Iterable[str] = (), plan: IdentityPlan | None = None) -> str:
        """`plan` says which steps can apply at all; each step still checks this text cheaply
        before running its expression."""
        if not text:
            return text
        if plan is None:
            plan = self.plan(text, roots)
        for root in plan.roots:
            if root in text:
                text = text.replace(root, "<workspace>")
        if plan.home and any(a in text for a in _HOME_ANCHORS):
            text = _HOME_UNIX.sub(_home, text)
            if "Users" in text or "Documents and Settings" in text:
                text = _HOME_WINDOWS.sub("~", text)
        if plan.email and "@" in text:
            text = _emails(text)
        if plan.ipv4 and _IPV4_HINT.search(text):
            text = _IPV4.sub(lambda m: m.group() if _keep_ip(m.group()) else "<ip>", text)
        if plan.ipv6 and _maybe_ipv6(text):
            text = _IPV6.sub(
                lambda m: "<ip>" if _ipv6_is_real(m.group()) and not _keep_ip(m.group()) else
                m.group(),
                text,
            )  # fmt: skip
        if plan.words and self._words is not None:
            lower = text.lower()
            if any(w in lower for w in self._word_lower):
                text = self._words.sub(self._marker, text)
        return text


class IdentityPlan(NamedTuple):
    """Which scrubbing steps can change anything in a body of text (see `IdentityScrubber.plan`)."""

    roots: tuple[str, ...] = ()
    home: bool = False
    email: bool = False
    ipv4: bool = False
    ipv6: bool = False
    words: bool = False
