"""gitleaks' rule set as its own TOML (gitleaks.toml, package data), read with `tomllib`.

The file is upstream's config/gitleaks.toml as it is, under a header naming the commit it was
taken from (`update_gitleaks.py` writes both). It is read on first use, once a process: only
anonymizing needs it.

What is kept of each rule: its expression, key words (in lower case, as gitleaks compares them),
secret group, entropy floor, path, and the allow-lists that can let a secret pass (their
conditions, targets, expressions and stop words; an allow-list of paths alone cannot, since an
episode's texts are not files of a repository). Rules that only name a file (`path` without
`regex`) are left out: an episode's file names are scanned as text anyway. A rule whose
expression google-re2 cannot compile (`not_re2`) is not run.
"""

from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from importlib.resources import files
from typing import Any, NamedTuple

__all__ = ["GitleaksConfig", "gitleaks_config", "not_re2", "read_config"]

_KEPT_ALLOWLIST_KEYS = ("condition", "regexTarget", "regexes", "stopwords")
_COMMIT = re.compile(r"^# commit ([0-9a-f]{40})\.$", re.MULTILINE)


class GitleaksConfig(NamedTuple):
    #: The upstream commit the file was taken from (its header), or "" when it names none.
    commit: str
    #: Each rule with an expression: id, regex, keywords, secret_group, entropy, and path and
    #: allowlists when it has them.
    rules: list[dict[str, Any]]
    #: The whole set's allow-list: its expressions and stop words.
    global_regexes: list[str]
    global_stopwords: list[str]


def read_config(text: str) -> GitleaksConfig:
    """The rules of a gitleaks.toml, as the detector reads them."""
    config = tomllib.loads(text)
    rules: list[dict[str, Any]] = []
    for rule in config.get("rules", []):
        if "regex" not in rule:
            continue
        out: dict[str, Any] = {
            "id": rule["id"],
            "regex": rule["regex"],
            "keywords": [k.lower() for k in rule.get("keywords", [])],
            "secret_group": int(rule.get("secretGroup", 0)),
            "entropy": float(rule.get("entropy", 0.0)),
        }
        if "path" in rule:
            out["path"] = rule["path"]
        allow = [
            {k: a[k] for k in _KEPT_ALLOWLIST_KEYS if k in a}
            for a in rule.get("allowlists", [])
            if "paths" not in a or "regexes" in a or "stopwords" in a
        ]
        if allow:
            out["allowlists"] = allow
        rules.append(out)
    glob = config.get("allowlist", {})
    commit = _COMMIT.search(text)
    return GitleaksConfig(
        commit.group(1) if commit else "",
        rules,
        list(glob.get("regexes", [])),
        list(glob.get("stopwords", [])),
    )


def not_re2(config: GitleaksConfig) -> dict[str, str]:
    """Rule id -> why google-re2 cannot compile its expression (the detector leaves it out)."""
    import re2

    failed: dict[str, str] = {}
    for rule in config.rules:
        try:
            re2.compile(rule["regex"])
        except Exception as exc:  # re2.error: the binding's own exception type
            failed[rule["id"]] = str(exc)
    return failed


@lru_cache(maxsize=1)
def gitleaks_config() -> GitleaksConfig:
    """The vendored rule set (read once a process)."""
    text = files("sync.anonymize.rules").joinpath("gitleaks.toml").read_text(encoding="utf-8")
    return read_config(text)
