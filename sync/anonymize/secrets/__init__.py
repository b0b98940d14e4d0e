"""Secret detection behind one engine boundary: text in, spans out.

`SecretScanner.find(text, hint)` gives the secrets of a text as merged `Span`s; `redact` replaces
them with `<SECRET:kind:hmac8>`. Behind the scanner, each detector is an engine answering to
`engine.SecretEngine`:

- `our_rules`: our own rules for provider tokens and credential shapes;
- `gitleaks`: gitleaks' provider rules, its own TOML shipped as data (`rules/gitleaks.toml`);
- `detect_secrets_engine`: detect-secrets' plugins, on the few lines that could hold what they
  find (`detect_secrets_lines`, `_readers`; what of the library it relies on in
  `detect_secrets_internals`, checked against the installed version by `detect_secrets_contract`);
- `runs`: unquoted runs judged by their entropy, or decoded and read again;
- `context`: secrets told apart by what stands near them in the episode (AWS pairs, passwords
  beside user names, private keys split over hunks).

Each engine's plan over an episode's body of text (one literal pass for all of them) is what
keeps throughput: each text is then read only by the engines that can find something in it.
"""

from sync.anonymize.secrets.engine import SecretEngine, Span
from sync.anonymize.secrets.redaction import PLACEHOLDER, redact
from sync.anonymize.secrets.scanner import NO_PLAN, Plan, SecretScanner

__all__ = ["NO_PLAN", "PLACEHOLDER", "Plan", "SecretEngine", "SecretScanner", "Span", "redact"]
