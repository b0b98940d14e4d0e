"""Our shortcuts through detect-secrets report what its plugins report.

`DetectSecrets` does not call its plugins' `analyze_line` on every line: it skips expressions a
line cannot match and measures entropy only near the limit. These tests run the plugins
themselves beside the shortcuts, on generated lines of every shape they read and on one or more
secrets each provider plugin finds.
"""

from __future__ import annotations

import random
import string

import pytest

from sync.anonymize.secrets import detect_secrets_readers as readers
from sync.anonymize.secrets.detect_secrets_engine import DetectSecrets

KEY_WORDS = ("password", "api_key", "secret", "PWD", "db_pass", "Contraseña", "private_key")
OPERATORS = (
    "=", ":", ":=", "==", "!=", "=>", " = ", ": ", "!==", "===", "(", ".assign(", "!!", ";",
    "[]=", "[25] = @", " ",
)  # fmt: skip
QUOTES = ("'", '"', "`", "")
FILES = ("x.py", "x.yaml", "x.go", "x.c", "x.cpp", "x.js", "x.txt", "x.cs", "x.m", "x.java")


def generated_lines(count: int, seed: int = 5) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    value_chars = string.ascii_letters + string.digits + "_-!;:=+/"
    lines = []
    for _ in range(count):
        quote = rng.choice(QUOTES)
        value = "".join(rng.choice(value_chars) for _ in range(rng.randint(1, 24)))
        line = (
            rng.choice(("", "  ", "x.", "my_", '"abc" == ', "'v' != ", "if ("))
            + rng.choice(KEY_WORDS)
            + rng.choice(OPERATORS)
            + quote
            + value
            + quote
            + rng.choice(("", ";", ")", quote + ";", ", x", " # c", ") {"))
        )
        lines.append((rng.choice(FILES), line))
    return lines


def plugin_values(plugin: object, filename: str, line: str) -> list[str]:
    found = plugin.analyze_line(filename=filename, line=line, line_number=1)  # type: ignore[attr-defined]
    return sorted(s.secret_value for s in found if s.secret_value)


@pytest.fixture(scope="module")
def plugins() -> dict[str, object]:
    return {type(p).__name__: p for p in DetectSecrets().load()}


def reader(plugin: object) -> tuple[readers.Reader, readers.Needs]:
    needs = readers.Needs(readers.expressions_of([plugin]))
    read = readers.keyword_reader(plugin, needs) or readers.regex_reader(plugin, needs)
    assert read is not None
    return read, needs


def test_keyword_reader_reports_what_the_keyword_plugin_reports(plugins: dict) -> None:
    plugin = plugins["KeywordDetector"]
    read, needs = reader(plugin)
    lines = generated_lines(4000)
    differ = [
        (f, line)
        for f, line in lines
        if sorted(read(f, line, needs.of(line))) != plugin_values(plugin, f, line)
    ]
    assert differ == []
    # The generated lines reach every expression, matched and not.
    assert sum(bool(read(f, line, needs.of(line))) for f, line in lines) > 1000
    assert sum(not read(f, line, needs.of(line)) for f, line in lines) > 500


def test_an_expression_changed_upstream_runs_on_every_line(
    plugins: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A digest that no longer matches means the expression is no longer the one read: what it
    # needs is unknown, so nothing is skipped (here: the `;` the last one needs, wrongly kept
    # under an old digest and replaced by `#`).
    from detect_secrets.plugins import keyword

    semicolon = readers.digest(keyword.FOLLOWED_BY_QUOTES_AND_SEMICOLON_REGEX)
    needs = dict(readers.NEEDS)
    needs["000000000000"] = (("#",),)
    del needs[semicolon]
    monkeypatch.setattr(readers, "NEEDS", needs)
    plugin = plugins["KeywordDetector"]
    read, line_needs = reader(plugin)
    line = 'private_key "hunter2";'
    found = read("x.py", line, line_needs.of(line))
    assert found == plugin_values(plugin, "x.py", line) == ["hunter2"]


def assert_every_need_is_listed(plugins: dict) -> None:
    expressions = readers.expressions_of(list(plugins.values()))
    assert {readers.digest(e) for e in expressions} >= set(readers.NEEDS)


HEX = "0123456789abcdef"


def provider_lines(seed: int = 11) -> list[str]:
    """Secrets each provider plugin finds, in several spellings and surroundings."""
    rng = random.Random(seed)

    def run(chars: str, n: int) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    lower36 = string.ascii_lowercase + string.digits
    word = string.ascii_letters + string.digits + "_-"
    secrets = [
        f'x = "AKC{run(string.ascii_letters, 20)}"',
        f"token: AP3{run(string.ascii_letters + string.digits, 12)} ",
        f'cloudant_password = "{run(HEX, 64)}"',
        f"cl_key: {run(string.ascii_lowercase, 24)}",
        f"clou-api-token => '{run(HEX, 64)}'",
        f"https://admin:{run(HEX, 64)}@acct-1.cloudant.com/db",
        f"url = https://admin:{run(string.ascii_lowercase, 24)}@acct.cloudant.com",
        f'ibm_cos_hmac_secret_access_key = "{run(HEX, 48)}"',
        f"cos-secret-key: {run(HEX, 48)}",
        f"ibm_cloud_iam_api_key: {run(word, 44)}",
        f'"iam_token" = "{run(word, 44)}"',
        f"mc = {run(lower36, 32)}-us12",
        f"softlayer_api_key = {run(lower36, 64)}",
        f"sl-pwd: '{run(lower36, 64)}'",
        f"https://api.softlayer.com/soap/v3.1/{run(lower36, 64)}",
        f"sq = sq0csp-{run(word, 43)}",
        f"MTk{run(word, 21)}.{run(word, 6)}.{run(word, 27)}",
    ]
    out = []
    for line in secrets:
        out += [line, line.upper(), f"  {line};", f"ſ {line}", line.replace("_", "-")]
    # And near misses: the words without the shapes, the shapes without the words.
    out += [f"key = {run(lower36, 64)}", f"sl = {run(HEX, 10)}", "AP = 1", "-us1", "cl: ok"]
    return out


def test_provider_readers_report_what_the_provider_plugins_report(plugins: dict) -> None:
    assert_every_need_is_listed(plugins)
    lines = provider_lines() + [line for _, line in generated_lines(1000)]
    checked = 0
    for name, plugin in plugins.items():
        if not getattr(plugin, "denylist", None):
            continue
        read, needs = reader(plugin)
        differ = [
            line
            for line in lines
            if sorted(read("x.py", line, needs.of(line))) != plugin_values(plugin, "x.py", line)
        ]
        assert differ == [], name
        # Each provider's own secrets are among the lines, found both ways.
        assert any(plugin_values(plugin, "x.py", line) for line in lines), name
        checked += 1
    assert checked >= 8


def test_entropy_shortcut_reports_what_the_entropy_plugins_report(plugins: dict) -> None:
    rng = random.Random(9)
    charset = string.ascii_letters + string.digits + "+/=-_."
    lines = []
    for _ in range(3000):
        body = "".join(rng.choice(charset) for _ in range(rng.randint(6, 60)))
        hexes = "".join(rng.choice("0123456789abcdef"[: rng.randint(6, 16)]) for _ in range(40))
        quote = rng.choice("'\"")
        lines.append(f"x = {quote}{body}{quote}; y = {quote}{hexes[: rng.randint(8, 40)]}{quote}")
    for name in ("Base64HighEntropyString", "HexHighEntropyString"):
        plugin = plugins[name]
        assert readers.reads_quoted_strings(plugin)
        differ = [
            line
            for line in lines
            if sorted(readers.high_entropy_values(plugin, line))
            != plugin_values(plugin, "x.py", line)
        ]
        assert differ == []
        assert any(readers.high_entropy_values(plugin, line) for line in lines)


def test_scan_line_with_the_plugins_own_reading_finds_the_same() -> None:
    # Where no stand-in reads for a plugin (one changed upstream), its own `analyze_line` runs.
    fast, slow = DetectSecrets(), DetectSecrets()
    fast.load()
    slow.load()
    slow._readers = [None] * len(slow._readers)
    lines = provider_lines() + [line for _, line in generated_lines(800)]
    found = 0
    for hint in ("x.py", "", "x.go"):
        for line in lines:
            assert sorted(fast.scan_line(line, hint)) == sorted(slow.scan_line(line, hint)), line
            found += bool(fast.scan_line(line, hint))
    assert found > 500
