"""The anonymizer's fast paths answer as the plain searches they replace, on the labelled corpus'
texts (secrets of every kind in every place) and its negative lines: the user-name test tried at
the literal pass' user words, re2 searches without the module's wrapper, gitleaks' stop words
found by one automaton, and a scanner asked the same text twice (its plan kept, its clean runs
passed at once)."""

from __future__ import annotations

import re

import pytest
import re2

from sync.anonymize.context import _USER_KEY, has_user_name
from sync.anonymize.detect import lower_keeping_offsets
from sync.anonymize.gitleaks import GitleaksRules
from sync.anonymize.pipeline import _episode_texts
from sync.anonymize.re2_bytes import found, runs
from sync.anonymize.secrets import NO_PLAN, SecretScanner
from tests.secret_corpus.corpus import make_corpus, negative_lines

_USER_WORDS = ("user", "login", "uid", "usr", "account")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    episodes, _ = make_corpus()
    out = [t for e in episodes for t in _episode_texts(e)]
    out += negative_lines()
    # Shapes the corpus may not hold: a user key at the start, after `db_` or `db`, upper case.
    out += ["user: deploy", "DB_USER=ops\npassword=Xk29fQ7", "dbuser: ops", "ACCOUNT alice"]
    return out


def test_a_user_name_is_found_at_the_user_words_as_by_searching_everywhere(
    texts: list[str],
) -> None:
    checked = 0
    for text in texts:
        lower = lower_keeping_offsets(text)
        at = [m.start() for w in _USER_WORDS for m in re.finditer(re.escape(w), lower)]
        expected = _USER_KEY.search(text) is not None
        assert has_user_name(text, at) is expected, text
        checked += expected
    assert checked >= 5  # the corpus does hold user names


def test_re2_without_its_wrapper_finds_what_the_wrapper_finds(texts: list[str]) -> None:
    rules = GitleaksRules()
    run = re2.compile(rb"[A-Za-z0-9+/_\-]{20,}")
    hits = 0
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        assert runs(run, data) == {m.group() for m in run.finditer(data)}
        for rule in rules.rules:
            expected = rule.pattern_bytes.search(data) is not None
            assert found(rule.pattern_bytes, data) is expected
            hits += expected
        middle = len(data) // 2
        for rule in rules.rules[:20]:
            bounded = rule.pattern_bytes.search(data, 0, middle) is not None
            assert found(rule.pattern_bytes, data, 0, middle) is bounded
    assert hits > 100


def test_stop_words_found_by_the_automaton_are_those_a_substring_test_finds(
    texts: list[str],
) -> None:
    allows = [a for r in GitleaksRules().rules for a in r.allow if a.stopwords]
    assert allows and all(a.has_stopword is not None for a in allows)
    words = [w for t in texts for w in re.findall(r"[\w.\-]{4,}", t.lower())]
    held = 0
    for allow in allows:
        for word in words:
            expected = any(s in word for s in allow.stopwords)
            assert allow.has_stopword is not None
            assert allow.has_stopword(word) is expected, word
            held += expected
    assert held > 0


def test_a_scanner_asked_again_answers_as_a_fresh_one(texts: list[str]) -> None:
    seen = SecretScanner()
    for text in texts:
        seen.find(text)
    empty = 0
    for text in texts:
        fresh = SecretScanner()
        assert seen.plan(text) == fresh.plan(text)
        assert seen.find(text) == fresh.find(text), text
        empty += seen.plan(text) is NO_PLAN
    assert empty > 0
