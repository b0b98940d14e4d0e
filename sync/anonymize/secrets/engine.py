"""The one interface every secret detector answers to: text in, spans out.

An engine (our rules, gitleaks' rules, detect-secrets, unquoted runs, the episode's context)
finds secrets in a text: `engine.find(text, hint)` gives its spans, in no particular order and
possibly overlapping (the scanner merges them). That is all a caller needs.

The rest of the interface is what keeps throughput: an episode's texts are many and short, and
most hold no secret. So the scanner reads the body of an episode (its texts joined by newlines)
once, finding every engine's `words` in one literal pass (an Aho-Corasick automaton), and asks
each engine for a plan over that `Body`: what in the body it could match, or None when it can
match nowhere in it. Then each text is read only by the engines whose plan is not None, with
that plan; a text's own literal pass (`Literals`) is made at most once, for the engines that
need it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple, Protocol

from sync.anonymize.secrets.literals import literal_positions, lower_keeping_offsets

__all__ = ["Body", "Hits", "Literals", "SecretEngine", "Span", "prepared"]

#: Each literal found and where it starts (in the lower-cased text).
Hits = Sequence[tuple[str, int]]


_WORD = itemgetter(0)


class Span(NamedTuple):
    """A secret's place in a text, and its kind (`github_token`, `password`...)."""

    start: int
    end: int
    kind: str


class Body:
    """A body of text as every engine's plan reads it: the text, lower-cased keeping offsets, and
    each literal of the scanner's one pass in it."""

    __slots__ = ("_found", "data", "decoding", "hits", "long_runs", "lower", "present", "text")

    def __init__(self, text: str, lower: str, hits: Hits, decoding: bool = False) -> None:
        self.text = text
        self.lower = lower
        self.hits = hits
        #: The literals of `hits`.
        self.present = set(map(_WORD, hits))
        #: The text is one a run decoded to (its own runs are not decoded again).
        self.decoding = decoding
        #: Each run of 20 or more of `[A-Za-z0-9+/_-]` in `data`, when an engine reading them
        #: is planned (`runs.long_runs`); None: not looked for.
        self.long_runs: set[bytes] | None = None
        #: The text's UTF-8 (lone surrogates passed).
        self.data = text.encode("utf-8", "surrogatepass")
        self._found: dict[re.Pattern[str], bool] | None = None

    def found(self, pattern: re.Pattern[str]) -> bool:
        """Does `pattern` match somewhere in the text? Asked once a body, whoever asks."""
        if self._found is None:
            self._found = {}
        known = self._found.get(pattern)
        if known is None:
            known = self._found[pattern] = pattern.search(self.text) is not None
        return known


#: A text's literal pass: the text lower-cased keeping offsets, and each literal of the pass in
#: it with where it starts.
Literals = Callable[[str], tuple[str, list[tuple[str, int]]]]


class SecretEngine(Protocol):
    """A detector behind the boundary. `plan`, `reads_hint` and the `plan` and `literals`
    arguments of `find` are for the scanner, which batches an episode's texts; `find(text, hint)`
    alone plans the text on its own."""

    #: Literals (lower case) the plan reads from the one pass over a body.
    words: frozenset[str]
    #: Its spans are kept only where no other engine found a secret (a better-named one).
    fallback: bool
    #: Its plan reads `Body.long_runs`: the scanner finds them before planning.
    reads_long_runs: bool

    def plan(self, body: Body) -> Any:
        """What the engine can match in `body`; None when it can match nowhere in it (nor in
        any text of which `body` is made)."""
        ...

    def find(
        self, text: str, hint: str = "", plan: Any = None, literals: Literals | None = None
    ) -> list[Span]:
        """The secrets in `text`. `hint`: a file name (some detectors read by file type), or
        empty for free text. `plan`: the engine's plan of a body `text` is part of (None: the
        text is planned on its own); `literals`: the text's literal pass, shared between engines
        (made on first use)."""
        ...

    def reads_hint(self, text: str, plan: Any) -> bool:
        """Whether `find`'s answer for `text` with `plan` may depend on the hint (then the
        scanner does not remember the text clean for every hint)."""
        ...

    def silent_without_literals(self, text: str) -> bool:
        """True when, none of `words` standing in `text`, the engine surely finds nothing in it.
        False says nothing."""
        ...


@lru_cache(maxsize=16)
def _literal_pass_of(words: frozenset[str]) -> Callable[[str], list[tuple[str, int]]]:
    return literal_positions(sorted(words))


def _alone(engine: SecretEngine, text: str) -> Body:
    lower = lower_keeping_offsets(text)
    return Body(text, lower, _literal_pass_of(engine.words)(lower))


def prepared(
    engine: SecretEngine, text: str, plan: Any, literals: Literals | None
) -> tuple[Any, Literals]:
    """The plan and literal pass `find` reads: those given, or made for `text` alone with the
    engine's own words (the plan None when the engine can match nowhere in it)."""
    body = _alone(engine, text)
    if plan is None:
        plan = engine.plan(body)
    if literals is None:
        found = (body.lower, list(body.hits))
        literals = lambda _: found  # noqa: E731 (one text's)
    return plan, literals
