# ruff: noqa: E501 (generated data: one line per format reads best)
"""A labelled corpus: secrets of 40+ kinds, each placed in prose, code, test output, a command
and a path, inside episodes; plus true negatives (digests, UUIDs, base64 images, minified code,
lock files, ordinary identifiers) to measure false positives.

Every value is generated from a seeded random source in its provider's real format (prefix,
length, alphabet, and the CRC32 check digits GitHub and npm tokens carry), so nothing here was
copied from the rules that find them. Multi-part cases (a key pair written in prose, a private
key split over two hunks, a JSON service-account key) are episodes of their own.
"""

from __future__ import annotations

import base64
import json
import random
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from tests.support.synthetic_episodes import make_episode

__all__ = ["KINDS", "PLACES", "Labelled", "make_corpus", "negative_lines"]

_ALNUM = string.ascii_letters + string.digits
_UP = string.ascii_uppercase + string.digits
_LOWNUM = string.ascii_lowercase + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"
_BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase

PLACES = ("prose", "code", "test_output", "command", "path")


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _mixed(rng: random.Random, alphabet: str, n: int) -> str:
    """Random, with at least two upper, two lower and two digits when the alphabet has them."""
    while True:
        v = _r(rng, alphabet, n)
        if not any(c.isalpha() for c in alphabet) or (
            sum(c.isupper() for c in v) >= 2 * any(c.isupper() for c in alphabet)
            and sum(c.islower() for c in v) >= 2 * any(c.islower() for c in alphabet)
            and sum(c.isdigit() for c in v) >= 2
        ):
            return v


def _base62(n: int, width: int) -> str:
    out = ""
    while n:
        n, d = divmod(n, 62)
        out = _BASE62[d] + out
    return out.rjust(width, "0")


def _crc_token(prefix: str, body: str) -> str:
    """GitHub's and npm's format: 30 random base62 characters and 6 of CRC32 check digits."""
    return prefix + body + _base62(zlib.crc32(body.encode()), 6)


def _jwt(rng: random.Random) -> str:
    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")

    head = part({"alg": "HS256", "typ": "JWT"})
    body = part(
        {"sub": str(rng.randint(1, 10**9)), "exp": rng.randint(1_700_000_000, 1_900_000_000)}
    )
    return f"{head}.{body}.{_r(rng, _URLSAFE, 43)}"


def _pem(rng: random.Random, label: str = "RSA PRIVATE KEY") -> str:
    lines = [_r(rng, _B64, 64) for _ in range(8)] + [_r(rng, _B64, 20) + "=="]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


#: kind -> generator. A value is what must never reach the collector.
KINDS: dict[str, Callable[[random.Random], str]] = {
    "aws_access_key": lambda r: "AKIA" + _mixed(r, _UP, 16),
    "github_pat_classic": lambda r: _crc_token("ghp_", _r(r, _ALNUM, 30)),
    "github_oauth": lambda r: _crc_token("gho_", _r(r, _ALNUM, 30)),
    "github_app": lambda r: _crc_token("ghs_", _r(r, _ALNUM, 30)),
    "github_fine_grained": lambda r: "github_pat_11" + _r(r, _UP, 20) + "_" + _r(r, _ALNUM, 59),
    "gitlab_pat": lambda r: "glpat-" + _mixed(r, _URLSAFE, 20),
    "slack_bot": lambda r: f"xoxb-{r.randint(10**11, 10**12)}-{r.randint(10**12, 10**13)}-"
    + _r(r, _ALNUM, 24),
    "slack_webhook": lambda r: "https://hooks.slack.com/services/T" + _r(r, _UP, 8) + "/B"
    + _r(r, _UP, 10) + "/" + _r(r, _ALNUM, 24),
    "stripe_secret": lambda r: "sk_live_" + _r(r, _ALNUM, 99)[: r.choice((24, 99))],
    "stripe_restricted": lambda r: "rk_live_" + _r(r, _ALNUM, 24),
    "openai_project": lambda r: "sk-proj-" + _r(r, _URLSAFE, 74) + "T3BlbkFJ" + _r(r, _URLSAFE, 74),
    "anthropic": lambda r: "sk-ant-api03-" + _r(r, _URLSAFE, 93) + "AA",
    "google_api_key": lambda r: "AIza" + _r(r, _URLSAFE, 35),
    "google_oauth_secret": lambda r: "GOCSPX-" + _r(r, _URLSAFE, 28),
    "jwt": _jwt,
    "npm": lambda r: _crc_token("npm_", _r(r, _ALNUM, 30)),
    "pypi": lambda r: "pypi-AgEIcHlwaS5vcmc" + _r(r, _URLSAFE, 70),
    "huggingface": lambda r: "hf_" + _r(r, string.ascii_letters, 34),
    "sendgrid": lambda r: "SG." + _r(r, _URLSAFE, 22) + "." + _r(r, _URLSAFE, 43),
    "twilio_api_key": lambda r: "SK" + _r(r, _HEX, 32),
    "discord_webhook": lambda r: "https://discord.com/api/webhooks/"
    + str(r.randint(10**17, 10**19)) + "/" + _r(r, _URLSAFE, 68),
    "digitalocean": lambda r: "dop_v1_" + _r(r, _HEX, 64),
    "shopify": lambda r: "shpat_" + _r(r, _HEX, 32),
    "databricks": lambda r: "dapi" + _r(r, _HEX, 32),
    "telegram_bot": lambda r: f"{r.randint(10**8, 10**9)}:AA" + _r(r, _URLSAFE, 33),
    "discord_bot": lambda r: r.choice("MNO") + _r(r, _URLSAFE, 23) + "." + _r(r, _URLSAFE, 6)
    + "." + _r(r, _URLSAFE, 27),
    "mailchimp": lambda r: _r(r, _HEX, 32) + f"-us{r.randint(1, 21)}",
    "square_oauth": lambda r: "sq0csp-" + _r(r, _URLSAFE, 43),
    "linear": lambda r: "lin_api_" + _r(r, _ALNUM, 40),
    "postman": lambda r: "PMAK-" + _r(r, _HEX, 24) + "-" + _r(r, _HEX, 34),
    "grafana_service_account": lambda r: "glsa_" + _r(r, _ALNUM, 32) + "_" + _r(r, _HEX, 8),
    "vault_service_token": lambda r: "hvs." + _r(r, _URLSAFE, 90),
    "age_secret_key": lambda r: "AGE-SECRET-KEY-1" + _r(r, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58),
    "doppler": lambda r: "dp.pt." + _r(r, _ALNUM, 43),
    "dockerhub_pat": lambda r: "dckr_pat_" + _r(r, _URLSAFE, 27),
    "pulumi": lambda r: "pul-" + _r(r, _HEX, 40),
    "planetscale": lambda r: "pscale_tkn_" + _r(r, _URLSAFE, 43),
    "new_relic_user_key": lambda r: "NRAK-" + _r(r, _UP, 27),
    "flyio": lambda r: "fo1_" + _r(r, _URLSAFE, 43),
    "atlassian": lambda r: "ATATT3" + _r(r, _URLSAFE, 186),
    "sentry_user_token": lambda r: "sntryu_" + _r(r, _HEX, 64),
    "alibaba_access_key": lambda r: "LTAI" + _r(r, _ALNUM, 20),
    "private_key": _pem,
    "postgres_url_password": lambda r: "postgres://app:" + _mixed(r, _ALNUM, 18) + "@db.internal:5432/shop",
    "high_entropy_bare": lambda r: _mixed(r, _ALNUM, 40),
    "base64_encoded_token": lambda r: base64.b64encode(
        _crc_token("ghp_", _r(r, _ALNUM, 30)).encode()
    ).decode(),
    "hex_encoded_token": lambda r: ("sk_live_" + _r(r, _ALNUM, 24)).encode().hex(),
    "url_encoded_credentials": lambda r: quote("https://ci:" + _mixed(r, _ALNUM, 16) + "@git.example.com/r", safe=""),
}  # fmt: skip


#: The part of a value that must not appear in the stored bytes (a URL's password, a key's body).
def probes(kind: str, value: str) -> list[str]:
    if kind.startswith(("private_key", "service_account_key")) and kind != "service_account_key_id":
        return value.splitlines()[1:-1]  # every body line, wherever the block was cut
    if kind == "postgres_url_password":
        return [value.split(":")[2].split("@")[0]]
    return [value]


def _place(kind: str, value: str, place: str, rng: random.Random) -> str:
    if place == "prose":
        return rng.choice(
            [
                f"Can you check why {value} stopped working on staging?",
                f"the new one is {value} (rotated yesterday)",
                f"I pasted {value} into the config but the deploy still fails",
            ]
        )
    if place == "code":
        name = rng.choice(["client", "settings", "conf"])
        return rng.choice(
            [
                f'{name}.credential = "{value}"\n',
                f"CREDENTIAL = '{value}'\n",
                f"const creds = {{ value: `{value}` }};\n",
                f"    init({value!r})\n",
            ]
        )
    if place == "test_output":
        return f"E   AssertionError: expected {value} to be rejected"
    if place == "command":
        return rng.choice(
            [
                f"curl -H 'X-Auth: {value}' https://api.example.com/v1/ping",
                f"./deploy.sh {value} --region eu-west-1",
                f"echo {value} | gh auth login --with-token",
            ]
        )
    return f"tests/fixtures/{value}/response.json"


@dataclass(frozen=True)
class Labelled:
    kind: str
    value: str
    place: str

    @property
    def probes(self) -> list[str]:
        return probes(self.kind, self.value)


def _empty_episode(rng: random.Random, n: int, root: str) -> dict[str, Any]:
    e = make_episode(rng, 700_000 + n, root=root)
    e["proposals"] = e["proposals"][:1]
    e["test_runs"] = []
    return e


def _test_run(e: dict[str, Any], k: int, command: str, failing: list[str]) -> dict[str, Any]:
    return {
        "id": f"{e['id']}-r{k}", "command": command, "name": None, "source": "wrapper",
        "exit_code": 1, "passed": 1, "failed": 1, "errors": 0, "skipped": 0,
        "failing_ids": failing, "started_at": e["started_at"], "duration_s": 0.2,
    }  # fmt: skip


def make_corpus(
    seed: int = 17, per_kind: int = 2, root: str = "/home/alice/work/acme"
) -> tuple[list[dict[str, Any]], list[Labelled]]:
    """Episodes and every secret in them: each kind in each place (`per_kind` times), one
    secret an episode, plus the multi-part episodes."""
    rng = random.Random(seed)
    episodes: list[dict[str, Any]] = []
    labelled: list[Labelled] = []
    n = 0
    for _ in range(per_kind):
        for kind, make in KINDS.items():
            for place in PLACES:
                if place == "path" and kind in (
                    "private_key",
                    "slack_webhook",
                    "discord_webhook",
                    "postgres_url_password",
                    "url_encoded_credentials",
                ):
                    continue  # not a file name anyone writes
                value = make(rng)
                e = _empty_episode(rng, n, root)
                n += 1
                text = _place(kind, value, place, rng)
                if place == "prose":
                    e["prompt"] = (e["prompt"] or "") + "\n" + text
                elif place == "code":
                    e["proposals"][0]["hunks"][0]["new_text"] += text
                elif place == "test_output":
                    e["test_runs"].append(
                        _test_run(
                            e,
                            n,
                            "pytest -q tests/test_auth.py",
                            [f"tests/test_auth.py::test_token - {text}"],
                        )
                    )
                elif place == "command":
                    e["test_runs"].append(_test_run(e, n, text, []))
                else:
                    p = dict(e["proposals"][0])
                    p["id"] = f"{e['id']}-p"
                    p["file"] = text
                    p["hunks"] = [
                        {"old_text": "", "new_text": '{"ok": true}\n', "status": "tracking"}
                    ]
                    e["proposals"].append(p)
                episodes.append(e)
                labelled.append(Labelled(kind, value, place))
        episodes_, labelled_ = _multi_part(rng, n, root)
        n += len(episodes_)
        episodes += episodes_
        labelled += labelled_
    return episodes, labelled


def _multi_part(
    rng: random.Random, n: int, root: str
) -> tuple[list[dict[str, Any]], list[Labelled]]:
    episodes: list[dict[str, Any]] = []
    labelled: list[Labelled] = []
    # 1. An AWS key pair in prose: the id, and the secret half beside it.
    e = _empty_episode(rng, n, root)
    key_id, secret = "AKIA" + _mixed(rng, _UP, 16), _mixed(rng, _B64, 40)
    e["prompt"] = f"use key {key_id} with secret {secret} for the backup bucket"
    episodes.append(e)
    labelled += [
        Labelled("aws_access_key", key_id, "prose"),
        Labelled("aws_secret_pair", secret, "prose"),
    ]
    # 2. The same pair, the id in a hunk and the secret in a command.
    e = _empty_episode(rng, n + 1, root)
    key_id, secret = "AKIA" + _mixed(rng, _UP, 16), _mixed(rng, _B64, 40)
    e["proposals"][0]["hunks"][0]["new_text"] += f"ACCESS_ID = '{key_id}'\n"
    e["test_runs"].append(_test_run(e, 1, f"./sync-bucket {secret} s3://backups", []))
    episodes.append(e)
    labelled += [
        Labelled("aws_access_key", key_id, "code"),
        Labelled("aws_secret_pair", secret, "command"),
    ]
    # 3. A private key split over two hunks.
    e = _empty_episode(rng, n + 2, root)
    pem = _pem(rng, "PRIVATE KEY").splitlines()
    p = e["proposals"][0]
    p["hunks"] = [
        {"old_text": "", "new_text": "\n".join(pem[:5]) + "\n", "status": "tracking"},
        {"old_text": "", "new_text": "\n".join(pem[5:]) + "\n", "status": "tracking"},
    ]
    episodes.append(e)
    labelled.append(Labelled("private_key_split", "\n".join(pem), "code"))
    # 4. A JSON service-account key, its private key split over two hunks.
    e = _empty_episode(rng, n + 3, root)
    body = _pem(rng, "PRIVATE KEY")
    key_json = json.dumps({
        "type": "service_account", "project_id": "acme-prod",
        "private_key_id": _r(rng, _HEX, 40), "private_key": body + "\n",
        "client_email": "ci@acme-prod.iam.gserviceaccount.com", "client_id": str(rng.randint(10**20, 10**21)),
    }, indent=2)  # fmt: skip
    half = key_json.index("\\n", len(key_json) // 2)
    e["proposals"][0]["file"] = "deploy/service-account.json"
    e["proposals"][0]["hunks"] = [
        {"old_text": "", "new_text": key_json[:half], "status": "tracking"},
        {"old_text": "", "new_text": key_json[half:], "status": "tracking"},
    ]
    episodes.append(e)
    labelled.append(Labelled("service_account_key", body, "code"))
    labelled.append(
        Labelled("service_account_key_id", json.loads(key_json)["private_key_id"], "code")
    )
    # 5. A password beside a user name in a config block, and in a URL.
    e = _empty_episode(rng, n + 4, root)
    pw1, pw2 = _mixed(rng, _ALNUM, 14) + "!", _mixed(rng, _ALNUM, 16)
    e["proposals"][0]["file"] = "config/database.yml"
    e["proposals"][0]["hunks"][0]["new_text"] = (
        f"production:\n  host: db.internal\n  username: deploy\n  password: {pw1}\n"
    )
    e["prompt"] = f"connect with mysql -u admin -p{pw2} -h db.internal"
    episodes.append(e)
    labelled += [
        Labelled("config_password", pw1, "code"),
        Labelled("command_password", pw2, "prose"),
    ]
    return episodes, labelled


def _b64_png(rng: random.Random) -> str:
    data = b"\x89PNG\r\n\x1a\n" + bytes(rng.randrange(256) for _ in range(60))
    return base64.b64encode(data).decode()


def negative_lines(seed: int = 5, n: int = 400) -> list[str]:
    """Lines of code and text that hold no secret, in kinds that fool scanners."""
    rng = random.Random(seed)
    makers: list[Callable[[], str]] = [
        lambda: f"commit {_r(rng, _HEX, 40)}",
        lambda: f'sha256 = "{_r(rng, _HEX, 64)}"',
        lambda: (
            f"    id = uuid.UUID('{_r(rng, _HEX, 8)}-{_r(rng, _HEX, 4)}-4{_r(rng, _HEX, 3)}-a{_r(rng, _HEX, 3)}-{_r(rng, _HEX, 12)}')"
        ),
        lambda: f'<img src="data:image/png;base64,{_b64_png(rng)}">',
        lambda: (
            f'      "integrity": "sha512-{base64.b64encode(bytes(rng.randrange(256) for _ in range(64))).decode()}",'
        ),
        lambda: (
            f"github.com/pkg/errors v0.9.1 h1:{base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode()}"
        ),
        lambda: f'    {{file = "pkg-1.0.tar.gz", hash = "sha256:{_r(rng, _HEX, 64)}"}},',
        lambda: (
            "function(e,t){var n=e.length,r=t||0;for(var i=0;i<n;i++)r+=e.charCodeAt(i);return r}"
        ),
        lambda: "!function(a,b){'use strict';var c=a.document,d=Object.getPrototypeOf,e=[].slice}",
        lambda: (
            f"def {rng.choice(['test_login_with_expired_password_returns_401', 'validate_api_key_format', 'refresh_access_token_when_expired'])}():"
        ),
        lambda: (
            f"class {rng.choice(['AbstractSingletonProxyFactoryBean', 'HttpClientConnectionManager2', 'OAuth2AuthorizationCodeGrantFilter'])}:"
        ),
        lambda: "    password = request.form['password']",
        lambda: "    token = os.environ.get('GITHUB_TOKEN')",
        lambda: "export API_KEY=${API_KEY:?set it first}",
        lambda: f"    assert response.status_code == {rng.choice([200, 401, 403])}",
        lambda: (
            f"  {rng.choice(['react-dom', 'lodash', '@types/node'])}@^{rng.randint(1, 18)}.{rng.randint(0, 9)}.{rng.randint(0, 20)}:"
        ),
        lambda: (
            f"tests/unit/test_{rng.choice(['auth', 'billing', 'orders'])}_{rng.choice(['service', 'handler'])}.py::test_{rng.choice(['refresh', 'rotate', 'revoke'])}_token PASSED"
        ),
        lambda: f"docker pull ghcr.io/acme/api@sha256:{_r(rng, _HEX, 64)}",
        lambda: f"    version: {rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}",
        lambda: "the password field must not be empty; show the password strength meter",
        lambda: f"Build {_r(rng, _HEX, 7)} finished in {rng.randint(1, 300)}s",
        lambda: (
            f"const SELECTOR = '#{rng.choice(['main', 'nav'])} > .item:nth-child({rng.randint(1, 9)})';"
        ),
        lambda: (
            f"https://github.com/acme/api/blob/{_r(rng, _HEX, 40)}/src/server.py#L{rng.randint(1, 400)}"
        ),
        lambda: f"    user_id = {rng.randint(1, 10**6)}  # the session's user",
    ]
    return [rng.choice(makers)() for _ in range(n)]
