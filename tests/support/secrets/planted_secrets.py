"""A generated corpus of planted secrets: realistic values of many kinds, placed in code, prompts,
test output, file names and commit messages of episodes.

Every value is random (seeded), in the real format of its provider, so the detectors cannot
have been tuned to these strings; `PLANTED` lists what a leak search looks for.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sync.anonymize.secrets.entropy import shannon_entropy
from tests.support.synthetic_episodes import make_episode

__all__ = ["KINDS", "Planted", "make_corpus"]

_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"
_B64 = string.ascii_letters + string.digits + "+/"


def _r(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _high_entropy_b64(rng: random.Random) -> str:
    while True:
        value = _r(rng, _B64, 44)
        if shannon_entropy(value) > 4.8:
            return value


def _jwt(rng: random.Random) -> str:
    def part(obj: str) -> str:
        return base64.urlsafe_b64encode(obj.encode()).decode().rstrip("=")

    header = part('{"alg":"HS256","typ":"JWT"}')
    payload = part(f'{{"sub":"{rng.randint(1, 10**9)}","name":"{_r(rng, _ALNUM, 8)}"}}')
    return f"{header}.{payload}.{_r(rng, _ALNUM + '-_', 43)}"


def _private_key(rng: random.Random) -> str:
    lines = [_r(rng, _B64, 64) for _ in range(6)]
    return (
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    )


#: kind -> generator of a value. The value is what must never reach the collector.
KINDS: dict[str, Callable[[random.Random], str]] = {
    "aws_access_key": lambda r: "AKIA" + _r(r, _UPPER, 16),
    "aws_secret_key": lambda r: _r(r, _B64, 40),
    "github_token": lambda r: "ghp_" + _r(r, _ALNUM, 36),
    "github_pat": lambda r: "github_pat_" + _r(r, _ALNUM, 22) + "_" + _r(r, _ALNUM, 59),
    "gitlab_token": lambda r: "glpat-" + _r(r, _ALNUM + "-_", 20),
    "slack_token": lambda r: f"xoxb-{r.randint(10**10, 10**11)}-{r.randint(10**10, 10**11)}-"
    + _r(r, _ALNUM, 24),
    "slack_webhook": lambda r: "https://hooks.slack.com/services/T"
    + _r(r, _UPPER, 8) + "/B" + _r(r, _UPPER, 10) + "/" + _r(r, _ALNUM, 24),
    "stripe_key": lambda r: "sk_live_" + _r(r, _ALNUM, 24),
    "openai_key": lambda r: "sk-proj-" + _r(r, _ALNUM + "-_", 48),
    "openai_legacy_key": lambda r: "sk-" + _r(r, _ALNUM, 20) + "T3BlbkFJ" + _r(r, _ALNUM, 20),
    "anthropic_key": lambda r: "sk-ant-api03-" + _r(r, _ALNUM + "-_", 93) + "AA",
    "google_api_key": lambda r: "AIza" + _r(r, _ALNUM + "-_", 35),
    "google_oauth_secret": lambda r: "GOCSPX-" + _r(r, _ALNUM + "-_", 28),
    "jwt": _jwt,
    "private_key": _private_key,
    "db_password": lambda r: _r(r, _ALNUM, 14) + "!" + _r(r, _ALNUM, 3),
    "password": lambda r: _r(r, _ALNUM, 16),
    "npm_token": lambda r: "npm_" + _r(r, _ALNUM, 36),
    "huggingface_token": lambda r: "hf_" + _r(r, _ALNUM, 34),
    "sendgrid_key": lambda r: "SG." + _r(r, _ALNUM + "-_", 22) + "." + _r(r, _ALNUM + "-_", 43),
    "high_entropy_string": _high_entropy_b64,
    "hex_secret": lambda r: _r(r, _HEX, 40),
}  # fmt: skip

#: Kinds whose value can be a file name.
_FILE_NAME_KINDS = (
    "aws_access_key", "github_token", "gitlab_token", "stripe_key", "openai_key",
    "google_api_key", "npm_token", "huggingface_token", "slack_token",
)  # fmt: skip


def _in_code(kind: str, value: str, rng: random.Random) -> str:
    """A line (or block) of code holding the value the way code holds such things."""
    if kind == "private_key":
        return f'KEY = """{value}"""\n'
    if kind == "aws_secret_key":
        return f'aws_secret_access_key = "{value}"\n'
    if kind == "db_password":
        return f'DATABASE_URL = "postgres://app:{value}@db.internal:5432/shop"\n'
    if kind == "password":
        return rng.choice(
            [f'password = "{value}"\n', f'    "db_password": "{value}",\n', f"PASSWORD={value}\n"]
        )
    if kind == "high_entropy_string":
        return f'signing_blob = "{value}"\n'
    if kind == "hex_secret":
        return f"client_secret: '{value}'\n"
    return rng.choice(
        [
            f'TOKEN = "{value}"\n',
            f"const client = new Client('{value}');\n",
            f'headers = {{"X-Api": "{value}"}}\n',
            f"    auth=({value!r}),\n",
        ]
    )


def _in_prose(kind: str, value: str, rng: random.Random) -> str:
    if kind == "aws_secret_key":
        return f"set AWS_SECRET_ACCESS_KEY={value} before running"
    if kind == "db_password":
        return f"connect with postgresql://admin:{value}@10.1.2.3/prod please"
    if kind == "password":
        return f"the password: {value}"
    if kind in ("high_entropy_string", "hex_secret"):
        return f'the signing secret is "{value}"'
    return rng.choice([f"use {value} for this", f"token={value}", f"key is {value}, thanks"])


@dataclass(frozen=True)
class Planted:
    kind: str
    value: str
    place: str  # code, prompt, test_output, file_name, commit_message


def make_corpus(seed: int = 7, episodes: int = 80) -> tuple[list[dict[str, Any]], list[Planted]]:
    """Episodes (episode@1 dicts, settled) and every secret planted in them. Each episode holds
    several secrets, spread over every kind and every place."""
    rng = random.Random(seed)
    kinds = list(KINDS)
    planted: list[Planted] = []
    out = []
    k = 0
    for n in range(episodes):
        e = make_episode(rng, 900_000 + n, root="/home/alice/work/acme")
        places = ["code", "prompt", "test_output", "file_name", "commit_message"]
        prompt_bits = [e["prompt"]]
        for place in places:
            kind = kinds[k % len(kinds)]
            k += 1
            if place == "file_name" and kind not in _FILE_NAME_KINDS:
                kind = _FILE_NAME_KINDS[k % len(_FILE_NAME_KINDS)]
            value = KINDS[kind](rng)
            planted.append(Planted(kind, value, place))
            p = e["proposals"][0]
            if place == "code":
                h = p["hunks"][0]
                h["new_text"] += _in_code(kind, value, rng)
            elif place == "prompt":
                prompt_bits.append(_in_prose(kind, value, rng))
            elif place == "test_output":
                e["test_runs"].append(
                    {
                        "id": f"{e['id']}-r{k}",
                        "command": f"pytest -q tests/test_auth.py -k {kind}",
                        "name": f"test_auth ({_in_prose(kind, value, rng)})",
                        "source": "wrapper",
                        "exit_code": 1,
                        "passed": 3,
                        "failed": 1,
                        "errors": 0,
                        "skipped": 0,
                        "failing_ids": [
                            f"tests/test_auth.py::test_login[{value}]",
                            f"tests/test_auth.py::test_env - AssertionError: {value} != None",
                        ],
                        "started_at": e["started_at"],
                        "duration_s": 0.5,
                    }
                )
            elif place == "file_name":
                p2 = dict(p)
                p2["id"] = f"{e['id']}-p{k}"
                p2["file"] = f"tests/fixtures/{value}.json"
                p2["hunks"] = [{"old_text": "", "new_text": '{"ok": true}\n', "status": "tracking"}]
                e["proposals"].append(p2)
            else:  # commit message: in the agent's git command and in the message file
                message = f"fix auth: rotate {_in_prose(kind, value, rng)}"
                e["test_runs"].append(
                    {
                        "id": f"{e['id']}-r{k}",
                        "command": f'git commit -am "{message}" && pytest -q',
                        "name": None,
                        "source": "hook",
                        "exit_code": 0,
                        "passed": 10,
                        "failed": 0,
                        "errors": 0,
                        "skipped": 0,
                        "failing_ids": [],
                        "started_at": e["started_at"],
                        "duration_s": 1.5,
                    }
                )
                p3 = dict(p)
                p3["id"] = f"{e['id']}-m{k}"
                p3["file"] = ".git/COMMIT_EDITMSG"
                p3["hunks"] = [{"old_text": "", "new_text": message + "\n", "status": "tracking"}]
                e["proposals"].append(p3)
        e["prompt"] = "\n".join(prompt_bits)
        out.append(e)
    return out, planted
