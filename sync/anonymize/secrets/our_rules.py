"""Our own rules for provider tokens and credential shapes, and the engine that runs them.

detect-secrets finds much, but it is slow per line (~3,000 lines/s with every plugin) and some of
its hits are only a token's prefix. These rules are the main detector, written for speed:

- a *token* rule's expression starts with a literal prefix (`AKIA`, `ghp_`, `sk-ant-`, ...), which
  lets the regular-expression engine skip through text at memory speed; the check that the token
  does not continue a longer word to its left is done afterwards, on the few matches;
- a *keyword* rule (`password = "..."`) is case-insensitive and has no literal prefix to skip
  by, so it is matched only where one of its anchors stands in the lower-cased text (`pass`,
  `token`, ...): each of its key words is written to start at an anchor, with what may come
  before it (`api_` before `key`) as a look-behind.

Every rule has must-match and must-not-match cases in tests/unit/sync/test_sync_secret_rules.py.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sync.anonymize.secrets.engine import Body, Literals, Span, prepared

__all__ = ["RULES", "OurPlan", "OurRules", "Rule", "literal_prefix"]


@dataclass(frozen=True, slots=True)
class Rule:
    kind: str
    pattern: re.Pattern[str]
    #: Keyword rules: lower-case substrings at one of which every match starts (in the
    #: lower-cased text), so the pattern is tried only there. Token rules have none: their
    #: pattern's literal prefix is the anchor.
    anchors: tuple[str, ...] = ()
    #: The group holding the secret (0: the whole match).
    group: int = 0
    #: The match must not continue a word to its left (checked on the match, not in the pattern,
    #: because a look-behind at the start would disable the engine's prefix search).
    left_edge: bool = True
    #: Token rules only: the match may span lines.
    multiline: bool = False
    #: (min, max): the token starts with this many digits, just before the match (the literal
    #: prefix search runs on what follows them).
    left_digits: tuple[int, int] | None = None
    #: Token rules: literal strings one of which any match starts with (its literal prefix).
    probes: tuple[str, ...] = ()
    #: Keyword rules: the pattern is written in lower case and runs on the lower-cased text
    #: (5x faster than a case-insensitive pattern).
    on_lower: bool = False

    @property
    def keyword(self) -> bool:
        return bool(self.anchors)


_R = r"(?![A-Za-z0-9])"


def _after(prefixes: tuple[str, ...]) -> str:
    """A look-behind for any of `prefixes` (each on its own: a look-behind has a fixed width)."""
    return "(?:" + "|".join(f"(?<={re.escape(p)})" for p in prefixes) + ")"


#: The key words, each starting at its anchor: password, passwd, passwort, passphrase, pwd,
#: secret (client_secret, clientsecret), token (auth_token, access_token, refresh_token,
#: bearer_token, api_token and the same without `_`), and api_key, apikey, access_key,
#: secret_key, private_key with or without `_`.
_KEY_PREFIXES = ("api", "access", "secret", "private")
_KEYWORDS = (
    r"pass(?:word|wd|wort|phrase)|pwd|secret|token|"
    + _after(tuple(p + sep for p in _KEY_PREFIXES for sep in ("", "_")))
    + "key"
)
_SHELL_KEYWORDS = (
    r"PASS(?:WORD|WD)|PWD|SECRET|TOKEN|"
    + _after(tuple(p.upper() + sep for p in ("api", "access", "private") for sep in ("", "_")))
    + "KEY"
)


def literal_prefix(pattern: str) -> str:
    """The characters every match of `pattern` starts with (escapes of `.` and `-` resolved)."""
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in ".-/":
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in "[](){}?*+|^$.\\":
            break
        out.append(c)
        i += 1
    # A quantifier binds the last literal: `ab*` guarantees only `a`.
    if i < len(pattern) and pattern[i] in "?*{" and out:
        out.pop()
    return "".join(out)


def _token(
    kind: str,
    pattern: str,
    *,
    group: int = 0,
    left_edge: bool = True,
    multiline: bool = False,
    left_digits: tuple[int, int] | None = None,
    probes: tuple[str, ...] = (),
) -> Rule:
    probes = probes or (literal_prefix(pattern),)
    if min(len(p) for p in probes) < 2:
        raise ValueError(f"{kind}: a token rule needs a literal prefix of 2+ characters")
    return Rule(kind, re.compile(pattern), (), group, left_edge, multiline, left_digits, probes)


def _keyword(
    kind: str,
    pattern: str,
    anchors: tuple[str, ...],
    *,
    group: int,
    on_lower: bool = True,
) -> Rule:
    return Rule(
        kind,
        re.compile(pattern),
        anchors,
        group,
        False,
        on_lower=on_lower,
    )


RULES: tuple[Rule, ...] = (
    _token(
        "private_key",
        r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
        r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
        left_edge=False,
        multiline=True,
    ),
    _token(
        "aws_access_key",
        r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|APKA|A3T[A-Z0-9])[A-Z0-9]{16}" + _R,
        probes=(
            "AKIA",
            "ASIA",
            "ABIA",
            "ACCA",
            "AGPA",
            "AIDA",
            "AROA",
            "ANPA",
            "ANVA",
            "APKA",
            "A3T",
        ),
    ),
    _keyword(
        "aws_secret_key",
        r"aws_?(?:secret_?(?:access_?)?key|sk)[\"']?\s*(?:=|:|:=|=>)\s*[\"']?"
        r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        ("aws",),
        group=1,
    ),
    _token(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{36,255}" + _R,
        probes=("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    _token("github_token", r"github_pat_[A-Za-z0-9_]{40,255}" + _R),
    _token(
        "gitlab_token",
        r"gl(?:pat|dt|rt|ptt|cbt|soat|ffct|imt|agent|oas)-[A-Za-z0-9_\-]{20,}",
        probes=tuple(
            f"gl{p}-"
            for p in ("pat", "dt", "rt", "ptt", "cbt", "soat", "ffct", "imt", "agent", "oas")
        ),
    ),
    _token("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20,}"),
    _token("slack_token", r"xox[abposre]-[A-Za-z0-9\-]{10,}", probes=("xox",)),
    _token(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+",
        left_edge=False,
    ),
    _token("stripe_key", r"sk_(?:live|test)_[A-Za-z0-9]{16,}" + _R),
    _token("stripe_key", r"rk_(?:live|test)_[A-Za-z0-9]{16,}" + _R),
    _token("stripe_key", r"whsec_[A-Za-z0-9]{24,}" + _R),
    _token("anthropic_key", r"sk-ant-[A-Za-z0-9]{2,10}-[A-Za-z0-9_\-]{20,}"),
    _token(
        "openai_key",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{20,}"
        r"|[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}" + _R + r"|[A-Za-z0-9]{48}" + _R + ")",
    ),
    _token("google_api_key", r"AIza[0-9A-Za-z_\-]{35}(?![A-Za-z0-9_\-])"),
    _token("google_oauth", r"GOCSPX-[A-Za-z0-9_\-]{28}"),
    _token("google_oauth", r"ya29\.[0-9A-Za-z_\-]{20,}"),
    _token(
        "jwt",
        r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
    ),
    _token(
        # Credentials in a URL (user:password@, or a bare token before @): the whole user-info.
        "url_credentials",
        r"://((?:[^\s:/@'\"<>`]*:[^\s@/'\"<>`]+|[A-Za-z0-9_\-]{20,}))@",
        group=1,
        left_edge=False,
    ),
    _token("npm_token", r"npm_[A-Za-z0-9]{36}" + _R),
    _token("pypi_token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    _token("huggingface_token", r"hf_[A-Za-z0-9]{34,}" + _R),
    _token("sendgrid_key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}(?![A-Za-z0-9_\-])"),
    _token("twilio_key", r"SK[0-9a-f]{32}" + _R),
    _token(
        "digitalocean_token",
        r"do[opr]_v1_[a-f0-9]{64}" + _R,
        probes=("dop_v1_", "doo_v1_", "dor_v1_"),
    ),
    _token(
        "shopify_token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _R,
        probes=("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    # Two formats gitleaks reads only beside a key word (New Relic) or not at every edge.
    _token("new_relic_key", r"NRAK-[A-Z0-9]{27}" + _R),
    _token("dockerhub_token", r"dckr_pat_[A-Za-z0-9_\-]{27}(?![A-Za-z0-9_\-])"),
    _token("databricks_token", r"dapi[a-f0-9]{32}(?:-\d)?" + _R),
    _token("azure_storage_key", r"AccountKey=([A-Za-z0-9+/]{40,}={0,2})", group=1),
    _token(
        # `123456789:AA...`: the bot id's digits are checked once `:AA...` has matched.
        "telegram_bot_token",
        r":AA[A-Za-z0-9_\-]{33}(?![A-Za-z0-9_\-])",
        left_digits=(8, 10),
    ),
    _token(
        "discord_webhook",
        r"https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/"
        r"[A-Za-z0-9_\-]{60,68}(?![A-Za-z0-9_\-])",
        left_edge=False,
    ),
    _token(
        # An access key id cut over two lines (`"AKIAQ3EGRZLM" +` then `"4TXYV7PA"`): both parts.
        "aws_access_key",
        r"(?:AKIA|ASIA)[A-Z0-9]{4,15}[\"']?[ \t]*[+\\]?[ \t]*\r?\n[ \t]*\+?[ \t]*[\"']?"
        r"[A-Z0-9]{1,12}" + _R,
        multiline=True,
        probes=("AKIA", "ASIA"),
    ),
    # Provider secrets that have no prefix of their own: 32 hex digits (Twilio's auth token,
    # Datadog's keys) or a UUID (Heroku's API key), found within a line of the provider's name.
    _keyword(
        "twilio_auth_token",
        r"twilio[^\n]{0,80}?(?<![0-9a-z])([0-9a-f]{32})(?![0-9a-z])",
        ("twilio",),
        group=1,
    ),
    _keyword(
        "datadog_key",
        r"datadog[^\n]{0,80}?(?<![0-9a-z])([0-9a-f]{40}|[0-9a-f]{32})(?![0-9a-z])",
        ("datadog",),
        group=1,
    ),
    _keyword(
        "heroku_api_key",
        r"heroku[^\n]{0,80}?(?<![0-9a-z])"
        r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![0-9a-z])",
        ("heroku",),
        group=1,
    ),
    _keyword(
        "authorization_header",
        r"(?:authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+|bearer\s+)"
        r"([A-Za-z0-9+/=._~\-]{12,})",
        ("bearer", "authorization"),
        group=1,
    ),
    _keyword(
        # `password = "..."`, `"api_key": "..."`, `secret: '...'`: a quoted value after a key word.
        "password",
        r"(?:" + _KEYWORDS + r")(?:[_.\-][a-z0-9_\-]*)?[\"']?\s*"
        r"(?:=|:|:=|=>|==|!=)\s*[bru]?([\"'])((?:(?!\1)[^\s<>{}$\\])"
        r"(?:(?!\1)[^\s<>{}\\]){5,})\1",
        ("pass", "pwd", "secret", "key", "token"),
        group=2,
    ),
    _keyword(
        # Shell and dotenv style: `DB_PASSWORD=hunter22`, `export API_KEY=abc123def`.
        "password",
        r"(?:" + _SHELL_KEYWORDS + r")[A-Z0-9_]*=([^\s\"'`$<>{}()|;&]{6,})",
        ("pass", "pwd", "secret", "token", "key"),
        group=1,
        on_lower=False,
    ),
)


class OurPlan(NamedTuple):
    """The rules that match somewhere in a body."""

    tokens: tuple[Rule, ...]
    keywords: tuple[Rule, ...]
    #: The lines on which a rule of `keywords` matches: a text holding none needs none of them
    #: (a keyword rule's match stays on its anchor's line).
    keyword_lines: tuple[str, ...]


class OurRules:
    """The engine: token rules searched where their literal prefix stands, keyword rules tried at
    their anchors."""

    fallback = False
    reads_long_runs = False

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self.tokens = tuple(r for r in rules if not r.keyword)
        self.keywords = tuple(r for r in rules if r.keyword)
        #: The keyword rules' anchors: most literals the one pass finds are other engines'
        #: (gitleaks' key words), which each keyword rule would otherwise step over.
        self.anchors = frozenset(a for r in self.keywords for a in r.anchors)
        # A probe in the text is in the lower-cased text too, and each rule it may start is
        # then searched in the text as it is.
        self._rules_of: dict[str, list[int]] = {}  # lower-cased probe -> rules, by place
        for i, rule in enumerate(self.tokens):
            for probe in rule.probes:
                self._rules_of.setdefault(probe.lower(), []).append(i)
        self.words = self.anchors | frozenset(self._rules_of)

    def plan(self, body: Body) -> OurPlan | None:
        present = body.present
        rules_of = self._rules_of
        started = sorted({i for word in present if word in rules_of for i in rules_of[word]})
        tokens = tuple(self.tokens[i] for i in started if body.found(self.tokens[i].pattern))
        anchors = self.anchors
        hits = body.hits
        anchored = [h for h in hits if h[0] in anchors] if not present.isdisjoint(anchors) else []
        keyword_lines: dict[str, None] = {}
        text = body.text
        keywords = (
            tuple(
                r
                for r in self.keywords
                if not present.isdisjoint(r.anchors)
                and _lines_matched(
                    _keyword_spans(r, text, body.lower, anchored), text, keyword_lines
                )
            )
            if anchored
            else ()
        )
        if not (tokens or keywords):
            return None
        return OurPlan(tokens, keywords, tuple(keyword_lines))

    def find(
        self,
        text: str,
        hint: str = "",
        plan: OurPlan | None = None,
        literals: Literals | None = None,
    ) -> list[Span]:
        if plan is None or literals is None:
            plan, literals = prepared(self, text, plan, literals)
        if plan is None:
            return []
        spans: list[Span] = []
        for rule in plan.tokens:
            for m in rule.pattern.finditer(text):
                span = _token_span(rule, text, m)
                if span is not None:
                    spans.append(Span(*span, rule.kind))
        if plan.keywords and any(line in text for line in plan.keyword_lines):
            lower, found = literals(text)
            anchors = self.anchors
            hits = [h for h in found if h[0] in anchors]
            for rule in plan.keywords:
                spans.extend(_keyword_spans(rule, text, lower, hits))
        return spans

    def reads_hint(self, text: str, plan: OurPlan) -> bool:
        return False

    def silent_without_literals(self, text: str) -> bool:
        return True


def _lines_matched(
    spans: Iterator[tuple[int, int, str]], text: str, lines: dict[str, None]
) -> bool:
    """Whether `spans` holds any; the line of `text` each stands on is added to `lines`."""
    matched = False
    for start, _, _ in spans:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        lines[text[line_start : len(text) if line_end < 0 else line_end]] = None
        matched = True
    return matched


def _keyword_spans(
    rule: Rule, text: str, lower: str, hits: list[tuple[str, int]]
) -> Iterator[Span]:
    """The rule's matches, tried at each of its anchors (`hits`: literals and where they stand
    in `lower`, the rule's anchors among them) and kept within the anchor's line."""
    # `lower` keeps `text`'s offsets, so an anchor found in one stands at the same place in both.
    subject = lower if rule.on_lower else text
    for word, at in hits:
        if word not in rule.anchors:
            continue
        end = lower.find("\n", at)
        m = rule.pattern.match(subject, at, len(lower) if end < 0 else end)
        if m is not None:
            a, b = m.span(rule.group)
            if b > a:
                yield Span(a, b, rule.kind)


def _token_span(rule: Rule, text: str, m: re.Match[str]) -> tuple[int, int] | None:
    start, end = m.span(rule.group)
    if end <= start:
        return None
    if rule.left_digits is not None:
        low, high = rule.left_digits
        i = m.start()
        while i > 0 and text[i - 1].isdigit() and m.start() - i < high + 1:
            i -= 1
        if not low <= m.start() - i <= high or (i > 0 and text[i - 1].isdigit()):
            return None
        return i, end
    if rule.left_edge and m.start() > 0:
        before = text[m.start() - 1]
        if before.isascii() and before.isalnum():
            return None
    return start, end
