"""The contract with detect-secrets: every private name, attribute, signature and expression the
adapter relies on (sync/anonymize/secrets/detect_secrets_internals.py) is there in the
installed version. An upgrade that changes one fails here, naming the version and what changed."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from sync.anonymize.secrets import detect_secrets_internals as internals
from sync.anonymize.secrets import detect_secrets_readers as readers
from sync.anonymize.secrets.detect_secrets_contract import broken, installed
from sync.anonymize.secrets.detect_secrets_internals import RELIED_ON

#: The adapter: the secrets package's `detect_secrets_*` modules.
ADAPTER = sorted(Path(internals.__file__).parent.glob("detect_secrets_*.py"))
SYNC = Path(internals.__file__).parents[2]


def test_the_installed_detect_secrets_offers_all_the_adapter_relies_on() -> None:
    problems = broken()
    assert not problems, "detect-secrets changed under the adapter:\n" + "\n".join(problems)


def _detect_secrets_names(path: Path) -> set[str]:
    """Each `detect_secrets...` name a module imports, and each attribute it reads on a
    detect-secrets module it imported (`heuristic.is_potential_uuid`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    modules: dict[str, str] = {}  # local name -> detect-secrets module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("detect_secrets"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                names.add(full)
                modules[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("detect_secrets") for a in node.names), path
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            names.add(f"{modules[node.value.id]}.{node.attr}")
    return names


def test_every_detect_secrets_name_the_code_uses_is_in_the_contract() -> None:
    covered = {r.module for r in RELIED_ON}
    for r in RELIED_ON:
        parts = r.attribute.split(".")
        covered.update(f"{r.module}.{'.'.join(parts[: i + 1])}" for i in range(len(parts)))
    used = {
        (path.relative_to(SYNC.parent).as_posix(), name)
        for path in sorted(SYNC.rglob("*.py"))
        for name in _detect_secrets_names(path)
    }
    assert any(path.startswith("sync/anonymize/secrets/detect_secrets_") for path, _ in used)
    # Only the adapter talks to detect-secrets.
    assert {path for path, _ in used} <= {p.relative_to(SYNC.parent).as_posix() for p in ADAPTER}
    missing = sorted(f"{path}: {name}" for path, name in used if name not in covered)
    assert missing == [], "not listed in internals.RELIED_ON:\n" + "\n".join(missing)


def test_a_missing_attribute_fails_naming_the_version_and_the_attribute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from detect_secrets.filters import heuristic

    monkeypatch.delattr(heuristic, "is_potential_uuid")
    problems = broken()
    assert problems == [
        f"detect-secrets {installed()}: detect_secrets.filters.heuristic.is_potential_uuid is "
        "gone (module 'detect_secrets.filters.heuristic' has no attribute 'is_potential_uuid')"
    ]


def test_a_changed_signature_fails_naming_the_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    from detect_secrets.util import filetype

    monkeypatch.setattr(filetype, "determine_file_type", lambda path: None)
    problems = broken()
    assert len(problems) == 1
    assert problems[0].startswith(f"detect-secrets {installed()}: ")
    assert "detect_secrets.util.filetype.determine_file_type takes (path)" in problems[0]
    assert "the adapter passes (filename)" in problems[0]


def test_a_changed_expression_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString

    # An expression whose text the readers were read against, gone; and an entropy plugin that
    # reads unquoted strings too.
    monkeypatch.setitem(readers.NEEDS, "000000000000", (("x",),))
    original = Base64HighEntropyString.__init__

    def unquoted_too(self: Base64HighEntropyString, limit: float = 4.5) -> None:
        original(self, limit)
        self.regex = re.compile(r"([A-Za-z0-9+/=]{20,})")

    monkeypatch.setattr(Base64HighEntropyString, "__init__", unquoted_too)
    problems = broken()
    assert any("(digest 000000000000) changed" in p for p in problems), problems
    assert any(
        "Base64HighEntropyString.regex is not the quoted-string expression" in p for p in problems
    ), problems
