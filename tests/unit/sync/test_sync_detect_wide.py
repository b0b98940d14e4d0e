"""The detectors added to our own rules: gitleaks' rules read as data, detect-secrets' provider
plugins on every line, unquoted runs (entropy, decoding) and the episode's context."""

from __future__ import annotations

import base64
import random
import re

import pytest

from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy
from sync.anonymize.secrets import SecretScanner
from sync.anonymize.secrets.detect_secrets_lines import provider_lines
from sync.anonymize.secrets.gitleaks import GitleaksRules
from sync.anonymize.secrets.runs import is_random_looking
from tests.support.synthetic_episodes import make_episode

SLACK = "xoxb-123456789012-1234567890123-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"
RANDOM40 = "V64wd4JjjUYgcYKk4kuzTJVNu37J4IJkOw348Oii"


@pytest.fixture(scope="module")
def scanner() -> SecretScanner:
    return SecretScanner(detect_secrets=None)


def _found(scanner: SecretScanner, text: str) -> list[str]:
    return [text[f.start : f.end] for f in scanner.find(text)]


def test_gitleaks_rules_find_providers_our_rules_do_not_know() -> None:
    rules = GitleaksRules()
    cases = {
        "age-secret-key": "AGE-SECRET-KEY-1" + "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2,
        "doppler-api-token": "dp.pt." + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0u1V",
        "linear-api-key": "lin_api_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0",
    }
    for rule_id, secret in cases.items():
        text = f"use {secret} here"
        hits = [(w, text.lower().find(w)) for w in rules.keywords if w in text.lower()]
        planned = rules.matching_rules(text, hits, text.encode())
        assert rule_id in {r.id for r in planned}, rule_id
        assert any(text[a:b].startswith(secret[:20]) for a, b, _ in rules.spans(text, planned))


def test_gitleaks_allow_lists_are_applied() -> None:
    rules = GitleaksRules()
    # The set's global stop word: a value spelling the alphabet is an example.
    text = 'api_key = "abcdefghijklmnopqrstuvwxyz"'
    hits = [(w, text.lower().find(w)) for w in rules.keywords if w in text.lower()]
    planned = rules.matching_rules(text, hits, text.encode())
    assert list(rules.spans(text, planned)) == []


def test_detect_secrets_provider_plugins_read_every_line_they_match() -> None:
    discord = "MTk4NjIyNDgzNDcxOTI1MjQ4.Cl2FMQ.ZnCjm1XVW7vRze4b7Cq4se7kKWs"
    mailchimp = "0123456789abcdef0123456789abcdef-us12"
    text = f"fine line\nplease use {discord} today\nand {mailchimp} too\nlast"
    assert provider_lines(text) == [f"please use {discord} today", f"and {mailchimp} too"]
    found = Anonymizer(b"k" * 32).scanner.find(text)
    assert {text[f.start : f.end] for f in found} >= {discord, mailchimp}


def test_a_provider_token_starting_a_line_is_read_on_its_own_line() -> None:
    # Artifactory's expressions open with `(?:\s|=|:|"|^)`: the newline before a token at a
    # line's start is in their match, and the line the token is on is the one to read.
    token = "AP6xY2bLm4Np8Qr2"
    assert provider_lines(f"first text\n{token} more") == [f"{token} more"]
    episode = make_episode(random.Random(1), 0, root="/ws")
    episode["proposals"][0]["hunks"][0]["new_text"] = f"{token} more\n"
    projected = Anonymizer(b"k" * 32).project(episode, WorkspacePolicy(Level.REDACTED))
    assert projected.quarantine == ()
    assert projected.serialized is not None and token not in projected.serialized
    new_text = projected.episode["proposals"][0]["hunks"][0]["new_text"]  # type: ignore[index]
    # The space after the token is not the token's: it stays.
    assert re.fullmatch(r"<SECRET:artifactory_credentials:[0-9a-f]{8}> more\n", new_text)


@pytest.mark.parametrize(
    "value",
    [
        RANDOM40,
        "Xk29fQ8zLm3VbN7cR4tY1wE6",
        "NRAK7N9T3E58U15MZ99YHR9KIJZZ5HG",
    ],
)
def test_random_looking_runs(value: str) -> None:
    assert is_random_looking(value)


@pytest.mark.parametrize(
    "value",
    [
        "AbstractSingletonProxyFactoryBean",
        "test_login_with_expired_password_returns_401",
        "0123456789abcdef0123456789abcdef01234567",  # a commit id
        "1a8394ed080ab02c-r461",
        "MESSAGE_PAGE_API_KEY_FOR_TESTS",
        "HttpClientConnectionManager2",
    ],
)
def test_ordinary_runs(value: str) -> None:
    assert not is_random_looking(value)


def test_unquoted_high_entropy_in_prose(scanner: SecretScanner) -> None:
    text = f"use {RANDOM40} for staging, thanks"
    assert _found(scanner, text) == [RANDOM40]


def test_lock_file_digests_and_data_uris_are_not_secrets(scanner: SecretScanner) -> None:
    digest = base64.b64encode(bytes(range(40, 104))).decode()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(200, 250))).decode()
    assert _found(scanner, f'"integrity": "sha512-{digest}",') == []
    assert _found(scanner, f"github.com/x/y v1.0.0 h1:{digest}") == []
    assert _found(scanner, f'<img src="data:image/png;base64,{png}">') == []


@pytest.mark.parametrize(
    "encode",
    [
        lambda s: base64.b64encode(s.encode()).decode(),
        lambda s: s.encode().hex(),
        lambda s: "https%3A%2F%2Fci%3A" + s.split("_")[-1] + "%40git.example.com",
    ],
)
def test_encoded_secrets_are_decoded_and_found(scanner: SecretScanner, encode: object) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    encoded = encode(secret)  # type: ignore[operator]
    text = f"the fixture holds {encoded} as is"
    assert _found(scanner, text) == [encoded]


def _redacted(episode_texts: dict[str, str]) -> str:
    episode = {
        "schema": "agent-capture/episode@1",
        "id": "e1",
        "agent": "claude-code",
        "workspace": "/w",
        "prompt": episode_texts.get("prompt"),
        "proposals": [
            {
                "id": "p1",
                "file": episode_texts.get("file", "src/app.py"),
                "hunks": [
                    {"old_text": "", "new_text": text, "status": "tracking"}
                    for key, text in sorted(episode_texts.items())
                    if key.startswith("hunk")
                ],
            }
        ],
        "test_runs": [],
    }
    projection = Anonymizer(b"k" * 32, Identity()).project(episode, WorkspacePolicy(Level.REDACTED))
    assert projection.quarantine == ()
    return projection.serialized or ""


def test_the_secret_half_of_an_aws_pair_is_found_beside_its_key_id() -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCY8XAMPLEKEY"
    sent = _redacted(
        {"hunk1": "ACCESS_ID = 'AKIAQ3EGRZLM4TXYV7PA'\n", "prompt": f"with secret {secret} ok"}
    )
    assert secret not in sent and "AKIAQ3EGRZLM4TXYV7PA" not in sent
    assert "<SECRET:aws_secret_key:" in sent  # found as the pair's secret half
    # Without a key id in the episode, the same run is judged on its own (high entropy here).
    alone = _redacted({"prompt": f"with secret {secret} ok"})
    assert secret not in alone and "<SECRET:aws_secret_key:" not in alone


def test_a_private_key_split_over_two_hunks_goes_whole() -> None:
    body = [
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7" + "a" * 12,
        "Zq8v3Lw9Rt2yAbc77QxY1Zq8v3Lw9Rt2yAbc77QxY1Zq8v3Lw9Rt2yAbc77QxY1",
        "Hx4Kp9Lm2Nq7Rs1Tv6Wy3Za8Bc5De0Fg4Hi9Jk2Lm7No1Pq6Rs3Tu8Vw5Xy0Za",
        "q1W2e3R4t5Y6==",
    ]
    first = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(body[:2]) + "\n"
    second = "\n".join(body[2:]) + "\n-----END PRIVATE KEY-----\n"
    sent = _redacted({"hunk1": first, "hunk2": second})
    assert [line for line in body if line in sent] == []


def test_a_password_beside_a_user_name_and_on_a_command_line() -> None:
    sent = _redacted(
        {
            "file": "config/database.yml",
            "hunk1": "production:\n  username: deploy\n  password: Zq8v3Lw9Rt2y!\n",
            "prompt": "run mysql -u admin -pS3cretPassw0rd -h db and curl -u ops:Hunter22x",
        }
    )
    for secret in ("Zq8v3Lw9Rt2y!", "S3cretPassw0rd", "Hunter22x"):
        assert secret not in sent
    assert "deploy" in sent  # the user name is not a secret
