"""The anonymizer's fast paths answer as the plain searches they replace, on the labelled corpus'
texts (secrets of every kind in every place) and its negative lines: the user-name test tried at
the literal pass' user words, re2 searches without the module's wrapper, gitleaks' stop words
found by one automaton, a scanner asked the same text twice (its plan kept, its clean runs
passed at once), gitleaks' plan and its lines found from the literal pass (a key word's line
searched only with an operator and a long enough value after it), a text passed by the rules
whose lines it does not hold, the gate before detect-secrets' provider expressions (and its
literals read from the scanner's pass), a text without literals or key words planned without
the steps they call for, long runs found without an expression, the decoding of runs skipped
where no printable text can come out, the identity plan read from the scanner's pass, the
second scan's scanner sharing the first one's automaton, and checkpoints merged into their
template."""

from __future__ import annotations

import base64
import binascii
import random
import re
import string
from collections.abc import Iterator
from typing import Any

import pytest

from sync.anonymize import Anonymizer, Identity
from sync.anonymize.identity import HINTS, IdentityScrubber
from sync.anonymize.pipeline import _CHECKPOINT_FIELDS, _checkpoint, _episode_texts
from sync.anonymize.secrets import NO_PLAN, SecretScanner, runs
from sync.anonymize.secrets import detect_secrets_lines as detect
from sync.anonymize.secrets.context import _USER_KEY, has_user_name
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets
from sync.anonymize.secrets.detect_secrets_lines import provider_lines
from sync.anonymize.secrets.gitleaks import GitleaksPlan, GitleaksRules
from sync.anonymize.secrets.literals import lower_keeping_offsets
from sync.anonymize.secrets.our_rules import OurPlan
from sync.anonymize.secrets.re2_bytes import found, found_in_text
from tests.support.secrets.labelled_corpus import make_corpus, negative_lines
from tests.support.synthetic_episodes import make_episode

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
    hits = 0
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
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
    # A text found clean with one hint (a file's name), then asked with others.
    for hint in ("x.py", "", "settings.yaml", "id_rsa"):
        for text in texts:
            assert seen.find(text, hint) == SecretScanner().find(text, hint), (hint, text)
    assert seen._clean_alone


@pytest.fixture(scope="module")
def episodes() -> list[dict[str, Any]]:
    corpus, _ = make_corpus()
    rng = random.Random(11)
    return corpus + [make_episode(rng, i) for i in range(300)]


def _line_spans(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for line in text.split("\n"):
        yield start, start + len(line)
        start += len(line) + 1


def test_gitleaks_plans_as_each_rule_searched_on_the_lines_of_its_key_words(
    texts: list[str], episodes: list[dict[str, Any]]
) -> None:
    rules = GitleaksRules()
    scanner = SecretScanner()
    # Key words with an operator and a value of each length around the least (10), after it
    # on the line, before it, or on the next line.
    values = [v[:n] for v in ("Xk29fQ7bLm4Np8Qr", "ab+/cd+/ef+/gh==") for n in (7, 8, 10, 12, 16)]
    shapes = [
        f"{key}{op}{value}{end}"
        for key in ("token", "api_key", "AUTH_TOKEN", "password ", "my_secret_access", "x.Password")
        for op in (" = ", ": ", " => ", " ||= ", ' = "', "? ", ", '", ":=", "=\n")
        for value in values
        for end in ("", '"', " ;", ";", "\\n", "\\r", "`", "'", ")", "[0]", "=", "===")
    ]
    shapes += [f"{v} = token_value" for v in values] + ["if token_count > 83:", "token a.b.c.d.e.f"]
    # Blanks, quotes and `=` where the operator and the value meet; a continuation of 20.
    shapes += [
        "token \t= \t'" + "Xk29fQ7bLm4Np8Qr" + "'",
        "api_key ====" + "=" * 12,
        "secret_" + "x" * 20 + " : Xk29fQ7bLm4Np8Qr",
        "secret_" + "x" * 21 + " : Xk29fQ7bLm4Np8Qr",
        'password "" := "Xk29fQ7b"',
        "access_token\n= Xk29fQ7bLm4Np8Qr",
    ]
    # Rules whose matches start at a key word: where a word runs on before it, and where not.
    jwt = "ey" + "Jh1bG" * 3 + "ci.ey" + "J4dW" * 4 + "J.SflKxwRJSM"  # each part the least
    vault = "s." + "Ab3dEf6hIj9kLm2nOp5qRs8t"
    for before in ("", " ", "(", "x", "_", "\n", "Bearer "):
        shapes += [f"{before}{jwt}", f"{before}{vault} ", f"{before}SK{'0a1B' * 8}"]
    shapes += ["the key they keep", "items.append(x)", "task_SK0a1b", "hvs." + "A" * 95]
    # Outside ASCII, ignoring case, re2 reads the Kelvin sign as `k` and the long s as `s`.
    shapes += [f"é token {vault[:12]}{c}{vault[13:]} done" for c in ("\u212a", "\u017f", "k")]
    shapes += [f"é {jwt}", "é api_key = Xk29fQ7bLm4Np8Q\u212a"]
    kept = non_ascii = 0
    for text in [*texts, *shapes, *("\n".join(_episode_texts(e)) for e in episodes)]:
        try:
            data = text.encode()
        except UnicodeEncodeError:
            continue  # a lone surrogate: re2 reads what `_encodable` makes of it
        lower, hits = scanner.literal_pass(text)
        expected = []
        for rule in rules.rules:
            if rule.keywords and not any(w in lower for w in rule.keywords):
                continue
            # On str outside ASCII: the expression is then searched on the line's text.
            if not rule.line_bound:
                hit = rule.pattern.search(text) is not None
            else:
                hit = any(
                    any(w in lower[a:b] for w in rule.keywords)
                    and (not rule.family or any(w in lower[a:b] for w in rule.family))
                    and rule.pattern.search(text[a:b]) is not None
                    for a, b in _line_spans(text)
                )
            if hit:
                expected.append(rule.id)
        planned = rules.matching_rules(text, hits, data, {w for w, _ in hits}, lower)
        assert sorted(r.id for r in planned) == sorted(expected), text[:80]
        assert planned == rules.matching_rules(text, hits, data)
        kept += bool(planned)
        non_ascii += bool(planned) and not text.isascii()
    assert kept > 100 and non_ascii >= 4


def _every_line(part: Any, every: tuple[str, ...]) -> Any:
    """An engine's plan with every line of a text let through."""
    if isinstance(part, OurPlan):
        return part._replace(keyword_lines=every)
    if isinstance(part, GitleaksPlan):
        return part._replace(lines=every)
    return part


def test_a_text_holding_none_of_the_lines_a_rule_matched_in_its_episode_skips_the_rule(
    episodes: list[dict[str, Any]],
) -> None:
    scanner = SecretScanner(detect_secrets=DetectSecrets())
    surrogate = "key_\ud800 = 'Xk29fQ7bLm4Np8Qr2St6'\napi_token: Xk29fQ7bLm4Np8Qr2St6Uv"
    gated = 0
    for e in [*episodes, {"prompt": surrogate, "proposals": [], "test_runs": []}]:
        texts = _episode_texts(e)
        plan = scanner.plan("\n".join(texts))
        for text in texts:
            # Every line of the text let through: each rule is tried as before.
            every = tuple(text.split("\n"))
            ungated = plan._replace(parts=tuple(_every_line(p, every) for p in plan.parts))
            for hint in ("", "x.py", "main.tf"):
                assert scanner.find(text, hint, plan) == scanner.find(text, hint, ungated), text
            ours = [p for p in plan.parts if isinstance(p, OurPlan)]
            leaks = [p for p in plan.parts if isinstance(p, GitleaksPlan)]
            lines = [
                *(x for p in ours for x in p.keyword_lines),
                *(x for p in leaks for x in p.lines),
            ]
            gated += bool(any(p.keywords for p in ours) or leaks) and not any(
                line in text for line in lines
            )
    assert gated > 100


def test_a_text_surely_clean_is_one_the_second_scans_scanner_finds_nothing_in(
    texts: list[str], episodes: list[dict[str, Any]]
) -> None:
    narrow = Anonymizer(b"k" * 32).texts.narrow
    scrubbed = IdentityScrubber(Identity(usernames=("alice",), hostnames=("devbox",)))
    prompts = [e["prompt"] for e in episodes if e.get("prompt")]
    candidates = [*texts, *prompts, *(scrubbed.scrub(t, ("/ws",)) for t in [*texts, *prompts])]
    candidates += [s + " AP6xY2bLm4Np8Qr2" for s in prompts[:20]]
    candidates += [
        "x " + "Ab1_-" * 5 + " y",
        "plain words",
        "é" * 30,
        'say "Xk29fQ7bLm4Np8Qr2St6U"',
    ]
    candidates += ["the digest '0a1b2c3d4e5f' here"]
    clean = 0
    for text in candidates:
        if narrow.surely_clean(text):
            assert narrow.plan(text).empty and narrow.find(text) == [], text
            clean += 1
    assert clean > 300 and clean < len(candidates) - 300


def test_gitleaks_finds_on_the_lines_of_the_literal_pass_what_it_finds_on_its_own(
    texts: list[str],
) -> None:
    rules = GitleaksRules()
    scanner = SecretScanner()
    line_bound = [r for r in rules.rules if r.line_bound]
    found_any = 0
    for text in texts:
        _, hits = scanner.literal_pass(text)
        alone = list(rules.spans(text, line_bound))
        assert list(rules.spans(text, line_bound, "", hits)) == alone, text[:80]
        found_any += bool(alone)
    assert found_any > 20


def _provider_lines_ungated(text: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    with monkeypatch.context() as m:
        m.setattr(detect, "provider_gate", lambda: None)
        return provider_lines(text)


def _provider_shapes() -> list[str]:
    rng = random.Random(3)
    alphabet = string.ascii_letters + string.digits + "_-+/"
    return [
        "AKC" + "".join(rng.choice(alphabet) for _ in range(12)),
        "key AP6" + "".join(rng.choice(alphabet) for _ in range(9)),
        "key APD" + "".join(rng.choice(alphabet) for _ in range(9)),
        "=ApB" + "".join(rng.choice(alphabet) for _ in range(9)) + " and AKc" + "x" * 12,
        "sq0csp-" + "".join(rng.choice(alphabet + "\\") for _ in range(43)),
        "".join(rng.choice("abcdef0123456789") for _ in range(32)) + "-us12",
        "x " + "".join(rng.choice(alphabet) for _ in range(23)) + " y",
    ]


def test_the_provider_gate_lets_through_every_line_the_expressions_match(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert detect.provider_gate() is not None  # the expressions are those it was read for
    scanner = SecretScanner(detect_secrets=DetectSecrets())
    matched = 0
    for text in [*texts, *_provider_shapes()]:
        data = text.encode("utf-8", "surrogatepass")
        expected = _provider_lines_ungated(text, monkeypatch)
        assert provider_lines(text, data) == expected, text[:80]
        found_runs = runs.long_runs(data)
        assert provider_lines(text, data, found_runs) == expected, text[:80]
        # The literals as the scanner's one pass finds them, in place of searching for each.
        literal = detect.provider_literal_at(text, scanner.literal_pass(text)[1])
        assert provider_lines(text, data, found_runs, literal) == expected, text[:80]
        assert provider_lines(text, data, None, literal) == expected, text[:80]
        matched += bool(expected)
    assert matched > 20


def _detect_lines_plainly(text: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    found = dict.fromkeys(text[a:b] for a, b in detect.candidate_lines(text))
    found.update(dict.fromkeys(_provider_lines_ungated(text, monkeypatch)))
    return tuple(found)


def test_texts_without_literals_or_key_words_are_planned_as_the_full_plan_plans_them(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    narrow = SecretScanner(detect_secrets=DetectSecrets(), wide=False)
    # The same scanner made to take its full path: its pass also finds a literal none reads.
    full = SecretScanner(detect_secrets=DetectSecrets(), wide=False)
    full._literal_hits = lambda lower: [*narrow._literal_hits(lower), ("", 0)]
    quoted = ['say "Xk29fQ7bLm4Np8Qr2St6Uv0Wx" to it', "it's 'deadbeef00112233' here"]
    without_literals = without_key_words = 0
    for text in [*texts, *_provider_shapes(), *quoted]:
        lower, hits = narrow.literal_pass(text)
        if not hits:
            assert narrow.plan(text) == full.plan(text), text[:80]
            without_literals += 1
        if not any(word in detect.DETECT_ANCHORS for word, _ in hits):
            data = text.encode("utf-8", "surrogatepass")
            literal = detect.provider_literal_at(text, hits)
            expected = _detect_lines_plainly(text, monkeypatch)
            assert detect.detect_lines(text, lower, (), data, None, literal) == expected, text
            without_key_words += 1
    assert without_literals > 50 and without_key_words > 200


def _decoded_plainly(value: str) -> list[str]:
    """`runs._decoded` without its shortcut: every decoding tried."""
    out: list[str] = []
    core = value.rstrip("=")
    if len(core) % 4 != 1:
        padded = core + "=" * (-len(core) % 4)
        for alphabet, decode in (
            (runs._B64, base64.b64decode),
            (runs._B64URL, base64.urlsafe_b64decode),
        ):
            if alphabet.fullmatch(core):
                try:
                    text = runs._printable(decode(padded))
                except (binascii.Error, ValueError):
                    text = None
                if text is not None:
                    out.append(text)
                    break
    if len(core) % 2 == 0 and runs._HEXISH.fullmatch(core) and "-" not in core:
        try:
            text = runs._printable(bytes.fromhex(core))
        except ValueError:
            text = None
        if text is not None:
            out.append(text)
    return out


def test_long_runs_are_the_matches_of_their_expression(texts: list[str]) -> None:
    run = re.compile(rb"[A-Za-z0-9+/_\-]{20,}")
    rng = random.Random(5)
    alphabet = [b"a", b"Z", b"0", b"+", b"/", b"_", b"-", b" ", b".", b"\n", "é".encode()]
    made = [b"".join(rng.choice(alphabet[:7] if rng.random() < 0.8 else alphabet) for _ in range(n))
            for n in range(0, 90)]  # fmt: skip
    found_any = 0
    for data in [*(t.encode("utf-8", "surrogatepass") for t in texts), *made, b"a" * 20, b"a" * 19]:
        expected = {m.group() for m in run.finditer(data)}
        assert runs.long_runs(data) == expected, data[:80]
        found_any += bool(expected)
    assert found_any > 100


def test_runs_that_cannot_decode_to_printable_text_are_not_decoded(texts: list[str]) -> None:
    values = [r.decode() for t in texts for r in runs.long_runs(t.encode("utf-8", "replace"))]
    # Encoded printable text of every length, in both alphabets, padded or not.
    rng = random.Random(9)
    for n in range(12, 60):
        raw = bytes(rng.randrange(32, 127) for _ in range(n))
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            values += [encode(raw).decode(), encode(raw).decode().rstrip("=")]
    decoded = 0
    for value in values:
        assert runs._decoded(value) == _decoded_plainly(value), value
        decoded += bool(_decoded_plainly(value))
    assert decoded > 80


def test_the_identity_plan_from_the_scanners_pass_scrubs_as_the_plan_of_the_replaced_text(
    episodes: list[dict[str, Any]],
) -> None:
    cases = [
        (Identity(usernames=("alice", "dev"), hostnames=("devbox",)), None),
        # A name the workspace marker holds; a root of one character; text that is not ASCII.
        (Identity(usernames=("workspace",)), None),
        (Identity(usernames=("alice",)), "/"),
        (Identity(usernames=("alice",)), "/home/alice/wörk"),
    ]
    extra = (
        "mail alice@example.com from 10.2.3.4 or fe80::1:2 on devbox, ~ is /home/alice and "
        "C:\\Users\\alice; see /home/alice/work/acme/src and DEVBOX"
    )
    scanner = SecretScanner(also=HINTS)
    scrubbed = 0
    for identity, root_override in cases:
        scrubber = IdentityScrubber(identity)
        for episode in episodes[:120]:
            root = root_override if root_override is not None else episode.get("workspace") or ""
            roots = (root,) if root else ()
            texts = [*_episode_texts(episode), extra]
            blob = "\n".join(texts)
            lower, hits = scanner.literal_pass(blob)
            fast = scrubber.plan_from(blob, lower, hits, roots)
            plain = scrubber.plan(blob.replace(root, "<workspace>") if root else blob, roots)
            for text in texts:
                expected = scrubber.scrub(text, roots, plain)
                assert scrubber.scrub(text, roots, fast) == expected, text[:80]
                scrubbed += expected != text
    assert scrubbed > 100


def test_the_second_scans_scanner_answers_with_the_first_ones_pass_as_with_its_own(
    texts: list[str],
) -> None:
    anonymizer = Anonymizer(b"k" * 32)
    shared = anonymizer.texts.narrow
    own = SecretScanner(detect_secrets=DetectSecrets(), wide=False)
    assert shared._literal_hits is anonymizer.scanner._literal_hits
    for text in texts:
        assert shared.plan(text) == own.plan(text), text[:80]
        assert shared.find(text, "x.py") == own.find(text, "x.py"), text[:80]


def test_checkpoints_merged_into_the_template_are_those_read_field_by_field() -> None:
    full = {k: i for i, k in enumerate(_CHECKPOINT_FIELDS)}
    older = {k: v for k, v in full.items() if k not in ("reason", "rules_version", "late_seconds")}
    shuffled = dict(reversed(list(full.items())))
    other = {**older, "extra": 1}
    sparse = {"window": "2m"}
    for c in (full, older, shuffled, other, sparse, {}):
        expected = {k: c.get(k) for k in _CHECKPOINT_FIELDS}
        got = _checkpoint(c)
        assert got == expected and list(got) == list(expected)
        assert got is not c


def test_allow_list_expressions_answer_without_the_wrapper_and_joined_as_each_in_turn(
    texts: list[str],
) -> None:
    rules = GitleaksRules()
    subjects = [w for t in texts for w in t.encode("utf-8", "replace").decode().split()]
    subjects += ["true", "NULL", "zzzz", "$1", "${HOME}", "{{ .Values.x }}", "%PATH%", "%s"]
    subjects += ["${{ secrets.TOKEN }}", "@FOO@", "/Users/Bob/x y", "/home/a/b", "\u017fecret"]
    allowed = 0
    for subject in subjects:
        expected = any(r.search(subject) for r in rules._global_regexes)
        assert found_in_text(rules._global_regex, subject) is expected, subject
        allowed += expected
        for rule in rules.rules:
            for allow in rule.allow:
                for r in allow.regexes:
                    assert found_in_text(r, subject) is (r.search(subject) is not None)
    assert allowed > 10
