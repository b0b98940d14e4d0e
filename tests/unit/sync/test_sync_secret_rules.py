"""Our own secret rules: for each, text it must find (and exactly which part is the secret) and
text it must leave alone. Run without detect-secrets, so that each case shows the rule itself."""

from __future__ import annotations

import random
import re
import string

import pytest

from sync.anonymize.secrets import SecretScanner, our_rules
from sync.anonymize.secrets.our_rules import RULES, literal_prefix

AWS = "AKIAQ3EGRZLM4TXYV7PA"
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PAT = "github_pat_11ABCDEFG0123456789abc_" + "x" * 20 + "Y" * 39
GLPAT = "glpat-Zx8Yw7Vu6Ts5Rq4Po3Nm"
XOXB = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx"
HOOK = "https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMNOP/q1w2e3r4t5y6u7i8o9p0a1s2"
STRIPE = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6n"
OPENAI_OLD = "sk-" + "Ab3dEf6hIj9kLm2nOp5q" + "T3BlbkFJ" + "Rs8tUv1wXy4zAb7dEf0h"
ANTHROPIC = "sk-ant-api03-" + "Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2cBa1" * 2 + "AAAA"
GOOGLE = "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
GOCSPX = "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"
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
KEY_BLOCK = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
    "AAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIG\n-----END OPENSSH PRIVATE KEY-----"
)
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12345678"
SENDGRID = "SG." + "ngeVfQFYQlKU0ufo8x5d1A" + "." + "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
TWILIO = "SK" + "0123456789abcdef0123456789abcdef"
DO = "dop_v1_" + "0123456789abcdef" * 4
SHOPIFY = "shpat_" + "0123456789abcdef0123456789abcdef"
DISCORD = (
    "https://discord.com/api/webhooks/1234567890123456789/"
    + "Ab1_Cd2-Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5Ef6Gh7Ij8Kl9Mn0Op1Q"
)
TWILIO_AUTH = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"
DATADOG = "3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e"
HEROKU = "4d6c3a1e-8b2f-4f7a-9c1d-2e3f4a5b6c7d"
DATABRICKS = "dapi" + "0123456789abcdef0123456789abcdef"
AZURE = "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6QUJDREVGR0hJSktMTU4="
TELEGRAM = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

# (kind, text, the secret the rule must report)
MUST_MATCH = [
    ("aws_access_key", f"aws_access_key_id = {AWS}", AWS),
    ("aws_access_key", f"backup_{AWS}.json", AWS),
    ("aws_access_key", "ASIA" + AWS[4:] + " is a session key", "ASIA" + AWS[4:]),
    ("aws_secret_key", f'aws_secret_access_key = "{AWS_SECRET}"', AWS_SECRET),
    ("aws_secret_key", f"AWS_SECRET_ACCESS_KEY: {AWS_SECRET}", AWS_SECRET),
    ("github_token", f"token: {GHP}", GHP),
    ("github_token", f"git clone https://x:{GHP}@github.com/o/r", GHP),
    ("github_token", f"export GH_TOKEN={PAT}", PAT),
    ("gitlab_token", f"PRIVATE-TOKEN: {GLPAT}", GLPAT),
    ("gitlab_token", "GR1348941" + "a" * 20, "GR1348941" + "a" * 20),
    ("slack_token", f"SLACK_BOT_TOKEN={XOXB}", XOXB),
    ("slack_webhook", f"post to {HOOK} on failure", HOOK),
    ("new_relic_key", "the key NRAK-7N9T3E58U15MZ99YHR9KIJZZ5HG rotated", None),
    ("dockerhub_token", "docker login -p dckr_pat_3NVsSqopr9NYOLX39LtuUa_xcXk", None),
    ("stripe_key", f"stripe.api_key = '{STRIPE}'", STRIPE),
    ("stripe_key", "whsec_" + "a1B2" * 8, "whsec_" + "a1B2" * 8),
    ("openai_key", f"OPENAI_API_KEY={OPENAI}", OPENAI),
    ("openai_key", f"client = OpenAI(api_key='{OPENAI_OLD}')", OPENAI_OLD),
    ("anthropic_key", f"x-api-key: {ANTHROPIC}", ANTHROPIC),
    ("google_api_key", f"?key={GOOGLE}&q=1", GOOGLE),
    ("google_oauth", f"client_secret={GOCSPX}", GOCSPX),
    ("google_oauth", "ya29.a0AfH6SMBx3m-AbCdEfGhIjKlMnOp", "ya29.a0AfH6SMBx3m-AbCdEfGhIjKlMnOp"),
    ("jwt", f"Cookie: session={JWT}; Path=/", JWT),
    ("private_key", f"key = '''{KEY_BLOCK}'''", KEY_BLOCK),
    ("private_key", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC", None),
    ("url_credentials", "postgres://app:s3cr3t-Pa55@db.internal:5432/shop", "app:s3cr3t-Pa55"),
    ("url_credentials", "redis://:hunter2hunter2@cache:6379/0", ":hunter2hunter2"),
    ("url_credentials", f"https://{GHP}@github.com/o/r.git", GHP),
    ("npm_token", f"//registry.npmjs.org/:_authToken={NPM}", NPM),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + "B" * 60, "pypi-AgEIcHlwaS5vcmc" + "B" * 60),
    ("huggingface_token", f"HF_TOKEN={HF}", HF),
    ("sendgrid_key", f"SENDGRID_API_KEY={SENDGRID}", SENDGRID),
    ("twilio_key", f"twilio key {TWILIO}", TWILIO),
    ("discord_webhook", f'WEBHOOK = "{DISCORD}"', DISCORD),
    (
        "aws_access_key",
        'key = "AKIAQ3EGRZLM" +\n    "4TXYV7PA"\n',
        'AKIAQ3EGRZLM" +\n    "4TXYV7PA',
    ),
    (
        "twilio_auth_token",
        f"Our Twilio account is set up; the auth token is {TWILIO_AUTH} so keep it safe.",
        TWILIO_AUTH,
    ),
    ("datadog_key", f"The Datadog API key is {DATADOG} for the agent.", DATADOG),
    ("heroku_api_key", f"Set the Heroku API key to {HEROKU} before deploying.", HEROKU),
    ("digitalocean_token", f"DIGITALOCEAN_TOKEN={DO}", DO),
    ("shopify_token", f"X-Shopify-Access-Token: {SHOPIFY}", SHOPIFY),
    ("databricks_token", f"token {DATABRICKS}", DATABRICKS),
    ("azure_storage_key", f"AccountName=acme;AccountKey={AZURE};EndpointSuffix=x", AZURE),
    ("telegram_bot_token", f"bot{TELEGRAM}/getMe".replace("bot", "bot "), TELEGRAM),
    ("authorization_header", "Authorization: Bearer abcdef0123456789xyz", "abcdef0123456789xyz"),
    ("authorization_header", "curl -H 'authorization: basic dXNlcjpwYXNzd29yZA=='", None),
    ("password", 'password = "Tr0ub4dor&3x"', "Tr0ub4dor&3x"),
    ("password", '{"db_password": "correct-horse-battery"}', "correct-horse-battery"),
    ("password", "clientSecret: 'x9y8z7w6v5u4'", "x9y8z7w6v5u4"),
    ("password", "if token == 'abcd1234efgh':", "abcd1234efgh"),
    ("password", "DB_PASSWORD=hunter22hunter", "hunter22hunter"),
    ("password", "export GITHUB_TOKEN=abcdef123456", "abcdef123456"),
]

# (kind, text): the rule must not fire on these.
MUST_NOT_MATCH = [
    ("aws_access_key", "AKIA is the prefix of AWS access key ids"),
    ("aws_access_key", "XAKIAQ3EGRZLM4TXYV7PA"),  # part of a longer word
    ("aws_access_key", "AKIAQ3EGRZLM4TXYV7PAX"),  # too long
    ("aws_secret_key", 'aws_secret_access_key = os.environ["AWS_SECRET_ACCESS_KEY"]'),
    ("github_token", "ghp_short"),
    ("github_token", "the ghp_ prefix marks a personal access token"),
    ("gitlab_token", "glpat-short"),
    ("slack_token", "xoxb- is a bot token prefix"),
    ("slack_webhook", "https://hooks.slack.com/ is where webhooks live"),
    ("stripe_key", "pk_live_4eC39HqLyjWDarjtT1zdp7dc"),  # publishable, not secret
    ("stripe_key", "mask_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("openai_key", "sk-learn is not scikit"),
    ("openai_key", "task-proj-abc"),
    ("anthropic_key", "sk-ant- prefix"),
    ("google_api_key", "AIza is how Google keys start"),
    ("jwt", 'eyJ is base64 for {"'),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9"),  # a header alone
    ("private_key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOC\n"),
    ("private_key", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE\n"),
    ("url_credentials", "https://example.com/path?x=1"),
    ("url_credentials", "ssh://git@github.com/o/r.git"),
    ("url_credentials", "mailto:someone@example.com"),
    ("npm_token", "npm_config_cache"),
    ("huggingface_token", "hf_hub_download(repo_id)"),
    ("sendgrid_key", "SG.load()"),
    ("new_relic_key", "NRAK-short"),
    ("dockerhub_token", "dckr_pat_ is Docker Hub's prefix"),
    ("twilio_key", "SKU0123456789abcdef0123456789abcdef"),
    ("discord_webhook", "see https://discord.com/api/webhooks/ for the docs"),
    ("twilio_auth_token", "twilio docs: a 32-digit hex token goes in TWILIO_AUTH_TOKEN"),
    ("twilio_auth_token", "Twilio SID AC9f8e7d6c5b4a39281706f5e4d3c2b1a0 is an identifier"),
    ("datadog_key", "datadog: commit 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e1b3d5f7a9c2e0 was bad"),
    ("heroku_api_key", "heroku app id is not a key: run heroku apps:info"),
    ("telegram_bot_token", "12:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"),  # no bot id digits
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc"),  # the prefix alone
    ("google_oauth", "GOCSPX-short"),
    ("google_oauth", "ya29.short"),
    ("digitalocean_token", "dop_v1_0123"),
    ("shopify_token", "shpat_ is the prefix"),
    ("databricks_token", "dapi_version = 3"),
    ("azure_storage_key", "AccountKey=;EndpointSuffix=core.windows.net"),
    ("authorization_header", "Authorization: Bearer"),
    ("authorization_header", "bearer short"),
    ("password", "password = get_password()"),
    ("password", 'password = ""'),
    ("password", "if not password:"),
    ("password", 'password = "<SECRET:password:0a1b2c3d>"'),
    ("password", 'tokenizer = "bert-base-uncased"'),
    ("password", 'max_tokens = "4096"'),
    ("password", "secret = os.environ['SECRET']"),
    ("password", 'password = "${DB_PASSWORD}"'),
    ("password", "PWD=$(pwd)"),
    ("password", "DB_PASSWORD=short"),
    ("password", 'keyboard = "qwerty-layout"'),
]


def _found(text: str, kind: str) -> list[str]:
    """What the rules of this kind alone find (merging with other kinds' hits aside)."""
    scanner = SecretScanner(rules=[r for r in RULES if r.kind == kind], wide=False)
    return [text[f.start : f.end] for f in scanner.find(text)]


@pytest.mark.parametrize(("kind", "text", "secret"), MUST_MATCH)
def test_rule_finds_its_secret(kind: str, text: str, secret: str | None) -> None:
    found = _found(text, kind)
    assert found, f"{kind} missed in {text!r}"
    if secret is not None:
        assert secret in found
    else:
        assert all(text.find(f) >= 0 for f in found)


@pytest.mark.parametrize(("kind", "text"), MUST_NOT_MATCH)
def test_rule_leaves_innocent_text_alone(kind: str, text: str) -> None:
    assert _found(text, kind) == []


def test_every_rule_has_cases_both_ways() -> None:
    kinds = {r.kind for r in RULES}
    assert kinds == {k for k, _, _ in MUST_MATCH}
    assert kinds == {k for k, _ in MUST_NOT_MATCH}


def test_required_providers_are_covered() -> None:
    kinds = {r.kind for r in RULES}
    for needed in (
        "aws_access_key", "github_token", "gitlab_token", "slack_token", "stripe_key",
        "openai_key", "anthropic_key", "google_api_key", "jwt", "private_key", "url_credentials",
    ):  # fmt: skip
        assert needed in kinds


def test_token_rules_start_with_a_literal() -> None:
    # The speed of the scan rests on this: a literal prefix lets the engine skip through text.
    for rule in RULES:
        if not rule.keyword:
            assert all(len(p) >= 2 for p in rule.probes), rule.kind
    assert literal_prefix(r"ya29\.[0-9]+") == "ya29."
    assert literal_prefix(r"abc?d") == "ab"


def test_a_finding_inside_a_placeholder_is_ignored() -> None:
    text = f"x = '<SECRET:github_token:0a1b2c3d>' and {GHP}"
    assert _found(text, "github_token") == [GHP]


KEY_WORDS = (
    "password", "passwd", "passwort", "passphrase", "pwd", "secret", "token", "api_key",
    "apikey", "access_key", "accesskey", "secret_key", "private_key", "privatekey",
    "client_secret", "clientsecret", "auth_token", "access_token", "refresh_token",
    "refreshtoken", "bearer_token", "api_token",
)  # fmt: skip


@pytest.mark.parametrize("word", KEY_WORDS)
def test_a_key_word_far_into_a_line_is_found(word: str) -> None:
    # The keyword rules are tried at each anchor: what they find far into a line is what they
    # find at its start.
    scanner = SecretScanner(detect_secrets=None)
    quoted = f'total = compute(alpha, beta, gamma) or 0; {word} = "Zq8v3Lw9Rt2y"'
    assert [quoted[f.start : f.end] for f in scanner.find(quoted)] == ["Zq8v3Lw9Rt2y"]
    if not word.endswith(("phrase", "passwort")):  # not key words of the shell-style rule
        shell = f"total=1 count=2; export {word.upper()}=Zq8v3Lw9Rt2y"
        assert [shell[f.start : f.end] for f in scanner.find(shell)] == ["Zq8v3Lw9Rt2y"]


@pytest.mark.parametrize(
    "text",
    [
        "İ\ntoken = 'hunter22x'",
        "İİİİİİİİ\nTOKEN=hunter22x",
        "Fix the İstanbul locale bug: PRİVATE_KEY='hunter22x'",
    ],
)
def test_a_character_whose_lower_case_is_longer_moves_no_line(text: str) -> None:
    # `İ` lower-cases to two characters: the lines found in the lower-cased text must still be
    # the lines of the text.
    found = SecretScanner(detect_secrets=None).find(text)
    assert [text[f.start : f.end] for f in found] == ["hunter22x"]


#: The key words as plainly written (a match may start before the anchor: `api_key`, `auth_token`).
PLAIN_KEY_WORDS = (
    r"pass(?:word|wd|wort|phrase)|pwd|secret|token|(?:api|access|secret|private)_?key|apikey|"
    r"client_?secret|(?:auth|access|refresh|bearer|api)_?token"
)
PLAIN_SHELL_KEY_WORDS = r"PASSWORD|PASSWD|PWD|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY"


def generated_assignments(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    near_misses = ("monkey", "keypass", "passage", "tokens", "secretary", "key", "pass", "apikeys")
    words = KEY_WORDS + near_misses
    lines = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 3)):
            word = rng.choice(words)
            word = rng.choice((word, word.upper(), word.title()))
            value = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(8))
            quote = rng.choice(("'", '"', ""))
            op = rng.choice(("=", " = ", ": ", ":=", "=>", "==", "!=", " ", "("))
            prefix = rng.choice(("", "x.", "my_", "self.", "export ", "os.environ['", "db_"))
            parts.append(f"{prefix}{word}{rng.choice(('', '_x', '.y'))}{op}{quote}{value}{quote}")
        lines.append(rng.choice(("; ", ", ", " ")).join(parts))
    return lines


@pytest.mark.parametrize(
    ("on_lower", "anchored", "plain", "matching"),
    [
        (True, our_rules._KEYWORDS, PLAIN_KEY_WORDS, 1000),
        # Shell style needs upper case, `=` and no quote: fewer generated lines have it.
        (False, our_rules._SHELL_KEYWORDS, PLAIN_SHELL_KEY_WORDS, 50),
    ],
)
def test_keyword_rules_tried_at_their_anchors_find_what_the_plain_expression_finds(
    on_lower: bool, anchored: str, plain: str, matching: int
) -> None:
    # The keyword rules are tried only where an anchor stands; written with the key words plain
    # and searched along each whole line, they find the same secrets.
    rule = next(
        r for r in RULES if r.keyword and r.on_lower == on_lower and anchored in r.pattern.pattern
    )
    reference = re.compile(rule.pattern.pattern.replace(anchored, plain, 1))
    assert reference.pattern != rule.pattern.pattern
    scanner = SecretScanner(rules=[rule], wide=False)
    found_any = 0
    for line in generated_assignments(6000):
        subject = line.lower() if rule.on_lower else line
        expected = [m.span(rule.group) for m in reference.finditer(subject)]
        assert [(f.start, f.end) for f in scanner.find(line)] == expected, line
        found_any += bool(expected)
    assert found_any > matching
