"""The engine boundary: each engine alone takes a text and gives its spans, and the scanner's
answer is its engines' answers merged (the plan over a body is a shortcut, never a change)."""

from __future__ import annotations

import pytest

from sync.anonymize.pipeline import _episode_texts
from sync.anonymize.secrets import SecretScanner, Span
from sync.anonymize.secrets.context import ContextEngine
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets
from sync.anonymize.secrets.engine import SecretEngine
from sync.anonymize.secrets.gitleaks import gitleaks_rules
from sync.anonymize.secrets.our_rules import RULES, OurRules
from sync.anonymize.secrets.redaction import inside_placeholder
from sync.anonymize.secrets.runs import UnquotedRuns
from sync.anonymize.secrets.scanner import _merge
from tests.support.secrets.labelled_corpus import make_corpus, negative_lines

GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AGE = "AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58]
DISCORD = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"
AWS_ID, AWS_SECRET = "AKIAQ3EGRZLM4TXYV7PA", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY8XAMPLEKEY"
RANDOM40 = "V64wd4JjjUYgcYKk4kuzTJVNu37J4IJkOw348Oii"


def _values(engine: SecretEngine, text: str, hint: str = "") -> list[str]:
    return sorted({text[s.start : s.end] for s in engine.find(text, hint)})


def test_each_engine_alone_takes_a_text_and_gives_its_spans() -> None:
    aws = [r for r in RULES if r.kind == "aws_access_key"]
    cases: list[tuple[SecretEngine, str, str]] = [
        (OurRules(), f"export GH={GITHUB} now", GITHUB),
        (gitleaks_rules(), f"use {AGE} here", AGE),
        (DetectSecrets(), f"please use {DISCORD} today", DISCORD),
        (ContextEngine(aws), f"id {AWS_ID}\nand the other half {AWS_SECRET} ok", AWS_SECRET),
        (UnquotedRuns(lambda decoded: None), f"use {RANDOM40} for staging", RANDOM40),
    ]
    for engine, text, secret in cases:
        assert secret in _values(engine, text), type(engine).__name__
        assert engine.find("nothing to see here, just words", "x.py") == []
        assert all(isinstance(s, Span) for s in engine.find(text))


@pytest.fixture(scope="module")
def texts() -> list[str]:
    episodes, _ = make_corpus()
    return [t for e in episodes for t in _episode_texts(e)] + negative_lines()


def _merged(scanner: SecretScanner, text: str, hint: str) -> list[Span]:
    """The scanner's answer made of its engines' answers for `text` alone."""
    spans: list[Span] = []
    fallback: list[Span] = []
    for engine in scanner.engines:
        (fallback if engine.fallback else spans).extend(engine.find(text, hint))
    ruled = sorted(spans)
    spans += [s for s in fallback if not any(a < s.end and s.start < b for a, b, _ in ruled)]
    return _merge([s for s in spans if not inside_placeholder(text, s.start, s.end)])


def test_the_scanner_gives_what_its_engines_give_merged(texts: list[str]) -> None:
    scanner = SecretScanner(detect_secrets=DetectSecrets())
    assert len(scanner.engines) == 5
    found = 0
    for hint in ("", "x.py"):
        for text in texts:
            expected = _merged(scanner, text, hint)
            assert scanner.find(text, hint) == expected, (hint, text[:80])
            # Planned over a body holding it (another text beside), as an episode's texts are.
            body = f"{text}\nsome other text of the episode"
            assert scanner.find(text, hint, scanner.plan(body)) == expected, (hint, text[:80])
            found += bool(expected)
    assert found > 800
