"""Our shortcuts through detect-secrets report what its plugins report.

`DetectSecrets` does not call the keyword and entropy plugins' `analyze_line` on every line: it
skips expressions a line cannot match and measures entropy only near the limit. These tests run
the plugins themselves beside the shortcuts, on generated lines of every shape they read.
"""

from __future__ import annotations

import random
import string

import pytest

from sync.anonymize import detect
from sync.anonymize.detect import DetectSecrets

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


def test_keyword_reader_reports_what_the_keyword_plugin_reports(plugins: dict) -> None:
    plugin = plugins["KeywordDetector"]
    read = detect._keyword_reader(plugin)
    assert read is not None
    lines = generated_lines(4000)
    differ = [
        (f, line) for f, line in lines if sorted(read(f, line)) != plugin_values(plugin, f, line)
    ]
    assert differ == []
    # The generated lines reach every expression, matched and not.
    assert sum(bool(read(f, line)) for f, line in lines) > 1000
    assert sum(not read(f, line) for f, line in lines) > 500


def test_an_expression_changed_upstream_runs_on_every_line(
    plugins: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A digest that no longer matches means the expression is no longer the one read: what it
    # needs is unknown, so nothing is skipped (here: the `;` the last one needs, wrongly dropped).
    needs = dict(detect._KEYWORD_NEEDS)
    name = "FOLLOWED_BY_QUOTES_AND_SEMICOLON_REGEX"
    needs[name] = ("000000000000", (("#",),))
    monkeypatch.setattr(detect, "_KEYWORD_NEEDS", needs)
    plugin = plugins["KeywordDetector"]
    read = detect._keyword_reader(plugin)
    assert read is not None
    line = 'private_key "hunter2";'
    assert read("x.py", line) == plugin_values(plugin, "x.py", line) == ["hunter2"]


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
        assert detect._reads_quoted_strings(plugin)
        differ = [
            line
            for line in lines
            if sorted(detect._high_entropy_values(plugin, line))
            != plugin_values(plugin, "x.py", line)
        ]
        assert differ == []
        assert any(detect._high_entropy_values(plugin, line) for line in lines)
