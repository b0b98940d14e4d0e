"""What this adapter relies on in detect-secrets beyond its documented use (`detect-secrets
scan`), read at detect-secrets 1.5.0 and pinned below 2 for it.

The plugins are run line by line, without its scanning loop, and through stand-ins for their
own reading (`readers`, `lines`): so the adapter names private modules, functions, attributes
and signatures, secret types, and reads the text of some expressions. An upgrade that changes
one of them either breaks the adapter or, where it has a fallback, quietly makes it slower.
`contract.broken()` checks each against the installed version.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["KINDS", "LEFT_OUT", "PLUGIN_ATTRIBUTES", "RELIED_ON", "Relied"]

#: Plugins not run, by their secret type: IPs are identity (scrubbed elsewhere), and the
#: providers our own rules find in every text anyway (tests/unit/sync/test_sync_secret_rules.py
#: shows each), whose plugins would only repeat those hits at ~2 us a line each.
LEFT_OUT = frozenset(
    {
        "Public IP (ipv4)", "AWS Access Key", "Azure Storage Account access key",
        "Basic Auth Credentials", "GitHub Token", "GitLab Token", "JSON Web Token", "NPM tokens",
        "OpenAI Token", "Private Key", "PyPI Token", "SendGrid API Key", "Slack Token",
        "Stripe Access Key", "Telegram Bot Token", "Twilio API Key",
    }
)  # fmt: skip

#: Our kind for a plugin's secret type, where it is not the type's own name in snake case.
KINDS = {
    "Secret Keyword": "keyword",
    "Base64 High Entropy String": "high_entropy",
    "Hex High Entropy String": "high_entropy",
}


class Relied(NamedTuple):
    """A name the adapter uses: `attribute` (dotted) of `module`, and when it is called, the
    names of its first parameters as the adapter passes them (`self` aside)."""

    module: str
    attribute: str
    parameters: tuple[str, ...] | None = None


RELIED_ON: tuple[Relied, ...] = (
    Relied("detect_secrets.core.plugins.util", "get_mapping_from_secret_type_to_class", ()),
    Relied("detect_secrets.filters.heuristic", "is_templated_secret", ("secret",)),
    Relied("detect_secrets.filters.heuristic", "is_prefixed_with_dollar_sign", ("secret",)),
    Relied("detect_secrets.filters.heuristic", "is_sequential_string", ("secret",)),
    Relied("detect_secrets.filters.heuristic", "is_potential_uuid", ("secret",)),
    Relied("detect_secrets.filters.heuristic", "is_likely_id_string", ("secret", "line", "plugin")),
    Relied("detect_secrets.filters.heuristic", "is_not_alphanumeric_string", ("secret",)),
    Relied("detect_secrets.filters.heuristic", "is_indirect_reference", ("line",)),
    Relied("detect_secrets.filters.heuristic", "_get_indirect_reference_regex", ()),
    Relied(
        "detect_secrets.plugins.base",
        "BasePlugin.analyze_line",
        ("filename", "line", "line_number", "context"),
    ),
    Relied("detect_secrets.plugins.base", "RegexBasedDetector.analyze_string", ("string",)),
    Relied("detect_secrets.plugins.keyword", "KeywordDetector"),
    Relied("detect_secrets.plugins.keyword", "REGEX_BY_FILETYPE"),
    Relied("detect_secrets.plugins.keyword", "QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP"),
    Relied(
        "detect_secrets.plugins.high_entropy_strings",
        "HighEntropyStringsPlugin.calculate_shannon_entropy",
        ("data",),
    ),
    Relied(
        "detect_secrets.plugins.high_entropy_strings",
        "HexHighEntropyString.calculate_shannon_entropy",
        ("data",),
    ),
    Relied("detect_secrets.util.code_snippet", "get_code_snippet", ("lines", "line_number")),
    Relied("detect_secrets.util.filetype", "determine_file_type", ("filename",)),
)

#: Attributes read on the plugins' instances: on every plugin, or on those of a class (by name).
PLUGIN_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "BasePlugin": ("secret_type", "analyze_line"),
    "KeywordDetector": ("keyword_exclude",),
    "RegexBasedDetector": ("denylist",),
    "HighEntropyStringsPlugin": ("charset", "regex", "entropy_limit"),
}
