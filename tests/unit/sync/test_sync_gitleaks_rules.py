"""gitleaks' rule set shipped as its own TOML (package data), read with tomllib."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path

import re2

from sync.anonymize.rules.gitleaks_config import gitleaks_config, not_re2, read_config
from sync.anonymize.rules.update_gitleaks import vendored
from sync.anonymize.secrets.gitleaks import GitleaksRules

ROOT = Path(__file__).resolve().parents[3]
#: Rules with an expression at the vendored commit (upstream's 222, less one that names only a
#: file): a refresh that changes the count changes this figure, on purpose.
RULES_AT_THE_VENDORED_COMMIT = 221


def test_the_vendored_rules_cite_their_source_and_licence() -> None:
    text = files("sync.anonymize.rules").joinpath("gitleaks.toml").read_text(encoding="utf-8")
    head = text[:400]
    assert "https://github.com/gitleaks/gitleaks" in head and "MIT" in head
    config = gitleaks_config()
    assert len(config.commit) == 40 and config.commit in head


def test_the_toml_loads_into_the_expected_rules_each_compiling_in_re2() -> None:
    config = gitleaks_config()
    assert len(config.rules) == RULES_AT_THE_VENDORED_COMMIT
    assert len({r["id"] for r in config.rules}) == len(config.rules)
    assert not_re2(config) == {}
    for rule in config.rules:
        re2.compile(rule["regex"])
        for allow in rule.get("allowlists", ()):
            for expression in allow.get("regexes", ()):
                re2.compile(expression)
    assert config.global_regexes and config.global_stopwords
    compiled = GitleaksRules()
    assert len(compiled.rules) == RULES_AT_THE_VENDORED_COMMIT and compiled.not_re2 == {}


def test_the_toml_is_declared_as_package_data() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    data = pyproject["tool"]["setuptools"]["package-data"]
    assert "gitleaks.toml" in data["sync.anonymize.rules"]


DEMO = """
[allowlist]
regexes = ['''^x+$''']
stopwords = ["example"]
[[rules]]
id = "demo-token"
regex = '''demo_[a-z0-9]{20}'''
keywords = ["Demo_"]
entropy = 3.0
secretGroup = 1
[[rules.allowlists]]
paths = ['''\\.md$''']
[[rules.allowlists]]
regexTarget = "line"
regexes = ['''fixture''']
[[rules]]
id = "look-behind"
regex = '''(?<=k)abc'''
[[rules]]
id = "path-only"
path = '''\\.p12$'''
"""


def test_the_reader_keeps_what_the_detector_reads_and_re2_failures_are_listed() -> None:
    config = read_config(vendored(DEMO, "0" * 40))
    assert config.commit == "0" * 40
    assert [r["id"] for r in config.rules] == ["demo-token", "look-behind"]
    demo = config.rules[0]
    assert demo["keywords"] == ["demo_"] and demo["entropy"] == 3.0 and demo["secret_group"] == 1
    # An allow-list of paths alone cannot let an episode's text pass: it is not kept.
    assert demo["allowlists"] == [{"regexTarget": "line", "regexes": ["fixture"]}]
    assert (config.global_regexes, config.global_stopwords) == (["^x+$"], ["example"])
    assert list(not_re2(config)) == ["look-behind"]
    compiled = GitleaksRules(config)
    assert [r.id for r in compiled.rules] == ["demo-token"]
    assert list(compiled.not_re2) == ["look-behind"]
