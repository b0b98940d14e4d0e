"""The contract with detect-secrets: does the installed version still offer what the adapter
relies on (`internals`)? `broken()` says what it no longer does, one line each naming the
installed version and the name; the contract test
(tests/unit/sync/test_sync_detect_secrets_contract.py) fails with those lines.
"""

from __future__ import annotations

import importlib
import inspect
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from sync.anonymize.secrets.detect_secrets_internals import (
    KINDS,
    LEFT_OUT,
    PLUGIN_ATTRIBUTES,
    RELIED_ON,
    Relied,
)
from sync.anonymize.secrets.detect_secrets_lines import provider_gate
from sync.anonymize.secrets.detect_secrets_readers import (
    INDIRECT,
    NEEDS,
    Needs,
    digest,
    expressions_of,
    keyword_reader,
    reads_quoted_strings,
    regex_reader,
)

__all__ = ["broken", "installed"]


def installed() -> str:
    try:
        return version("detect-secrets")
    except PackageNotFoundError:  # pragma: no cover - a declared dependency
        return "(not installed)"


def _resolve(relied: Relied) -> Any:
    found: Any = importlib.import_module(relied.module)
    for part in relied.attribute.split("."):
        found = getattr(found, part)
    return found


def _parameters(function: Any) -> list[str]:
    names = list(inspect.signature(function).parameters)
    return names[1:] if names[:1] == ["self"] else names


def broken() -> list[str]:
    """What the installed detect-secrets no longer offers as the adapter uses it, one line each
    (empty: all of it is there)."""
    release = installed()
    problems: list[str] = []
    for relied in RELIED_ON:
        where = f"{relied.module}.{relied.attribute}"
        try:
            found = _resolve(relied)
        except (ImportError, AttributeError) as exc:
            problems.append(f"detect-secrets {release}: {where} is gone ({exc})")
            continue
        if relied.parameters is not None:
            have = _parameters(found)
            if have[: len(relied.parameters)] != list(relied.parameters):
                problems.append(
                    f"detect-secrets {release}: {where} takes ({', '.join(have)}), "
                    f"the adapter passes ({', '.join(relied.parameters)})"
                )
    if problems:
        return problems  # the checks below import what is reported missing
    problems += _plugin_problems(release)
    problems += _expression_problems(release)
    return problems


def _plugins() -> list[Any]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    mapping: dict[str, Any] = dict(get_mapping_from_secret_type_to_class())
    return [cls() for _, cls in sorted(mapping.items())]


def _plugin_problems(release: str) -> list[str]:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins import base, high_entropy_strings, keyword
    from detect_secrets.util.code_snippet import get_code_snippet

    classes = {
        "BasePlugin": base.BasePlugin,
        "KeywordDetector": keyword.KeywordDetector,
        "RegexBasedDetector": base.RegexBasedDetector,
        "HighEntropyStringsPlugin": high_entropy_strings.HighEntropyStringsPlugin,
    }
    problems: list[str] = []
    types = set(get_mapping_from_secret_type_to_class())
    for name in sorted((LEFT_OUT | set(KINDS)) - types):
        problems.append(f"detect-secrets {release}: no plugin has the secret type {name!r}")
    for plugin in _plugins():
        for class_name, attributes in PLUGIN_ATTRIBUTES.items():
            if not isinstance(plugin, classes[class_name]):
                continue
            for attribute in attributes:
                if not hasattr(plugin, attribute):
                    problems.append(
                        f"detect-secrets {release}: {type(plugin).__name__} (a {class_name}) "
                        f"has no attribute {attribute!r}"
                    )
    # What `analyze_line` returns: secrets whose `secret_value` is the value found.
    line = 'password = "Xk29fQ7bLm"'
    found = keyword.KeywordDetector().analyze_line(
        filename="x.py", line=line, line_number=1, context=get_code_snippet([line], 1)
    )
    if [getattr(s, "secret_value", None) for s in found] != ["Xk29fQ7bLm"]:
        problems.append(
            f"detect-secrets {release}: KeywordDetector.analyze_line no longer returns secrets "
            "whose secret_value is the value found"
        )
    return problems


def _expression_problems(release: str) -> list[str]:
    """The stand-ins are used only while the expressions they were read from are unchanged;
    otherwise the plugins' own reading runs (the same findings, slower)."""
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin

    plugins = [p for p in _plugins() if p.secret_type not in LEFT_OUT]
    problems: list[str] = []
    digests = {digest(e) for e in expressions_of(plugins)}
    for key in sorted(set(NEEDS) - digests):
        problems.append(
            f"detect-secrets {release}: a plugin expression read at 1.5 (digest {key}) changed; "
            "readers.NEEDS must be read again"
        )
    if provider_gate() is None:
        problems.append(
            f"detect-secrets {release}: the provider plugins' expressions are not those "
            "lines._PROVIDER_GATED was read for"
        )
    if heuristic._get_indirect_reference_regex().pattern != INDIRECT:
        problems.append(
            f"detect-secrets {release}: detect_secrets.filters.heuristic."
            "_get_indirect_reference_regex() is not the expression readers.INDIRECT was read for"
        )
    needs = Needs(expressions_of(plugins))
    for plugin in plugins:
        name = type(plugin).__name__
        if isinstance(plugin, HighEntropyStringsPlugin):
            if not reads_quoted_strings(plugin):
                problems.append(
                    f"detect-secrets {release}: {name}.regex is not the quoted-string "
                    "expression readers.high_entropy_values stands in for"
                )
        elif keyword_reader(plugin, needs) is None and regex_reader(plugin, needs) is None:
            problems.append(
                f"detect-secrets {release}: {name} reads lines its own way now; no stand-in "
                "reads for it (readers.keyword_reader, readers.regex_reader)"
            )
    return problems
