"""Bearer tokens: made once, shown once, stored as a SHA-256 digest; each bound to one team.

A token is `cct_<id>_<secret>`: the id names it in `token list` and `token revoke`, the secret
(32 random bytes) makes it unguessable, which is why one fast hash suffices to store it.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass

from sync.collector.errors import ApiError
from sync.collector.wire import TEAM_PATTERN

__all__ = [
    "SCOPES",
    "TokenRecord",
    "authorize",
    "bearer_token",
    "digest",
    "live_token",
    "new_token",
    "parse_expiry",
    "valid_team",
]

SCOPES = ("ingest", "read", "export")
# What each scope may do; export includes reading the report.
_GRANTS = {"ingest": {"ingest"}, "read": {"read"}, "export": {"read", "export"}}
_TOKEN = re.compile(r"cct_([0-9a-f]{12})_[A-Za-z0-9_-]{43}\Z")
_TEAM = re.compile(TEAM_PATTERN.rstrip("$") + r"\Z", re.ASCII)


@dataclass(frozen=True, slots=True)
class TokenRecord:
    id: str
    team: str
    scope: str
    name: str | None
    digest: str
    created_at: float
    revoked_at: float | None = None
    expires_at: float | None = None  # None: never

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and now >= self.expires_at


def valid_team(team: str) -> bool:
    return bool(_TEAM.match(team))


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


_EXPIRY = re.compile(r"([1-9][0-9]{0,5})([hdw])\Z", re.ASCII)
_UNIT_SECONDS = {"h": 3600, "d": 86400, "w": 7 * 86400}


def parse_expiry(text: str) -> float:
    """Seconds from a lifetime such as `12h`, `90d` or `4w` (hours, days, weeks)."""
    m = _EXPIRY.match(text.strip().lower())
    if not m:
        raise ValueError(
            f"not a lifetime: {text!r} (a whole number of hours, days or weeks: 12h, 90d, 4w)"
        )
    return float(int(m.group(1)) * _UNIT_SECONDS[m.group(2)])


def new_token(
    team: str, scope: str, name: str | None, now: float, expires_in: float | None = None
) -> tuple[str, TokenRecord]:
    """The token to show the user once, and the record to store (expiring `expires_in`
    seconds from `now`, or never)."""
    if not valid_team(team):
        raise ValueError(f"not a team name: {team!r} (letters, digits, _ . -; at most 64)")
    if scope not in SCOPES:
        raise ValueError(f"not a scope: {scope!r} (one of {', '.join(SCOPES)})")
    token_id = secrets.token_hex(6)
    token = f"cct_{token_id}_{secrets.token_urlsafe(32)}"
    expires_at = None if expires_in is None else now + expires_in
    return token, TokenRecord(token_id, team, scope, name, digest(token), now, None, expires_at)


def bearer_token(authorization: str | None) -> str:
    """The token of an `Authorization: Bearer ...` header, or 401."""
    if not authorization:
        raise _unauthorized("missing bearer token")
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise _unauthorized("the Authorization header must be 'Bearer <token>'")
    if not _TOKEN.match(token):
        raise _unauthorized("unknown or revoked token")
    return token


def live_token(record: TokenRecord | None, now: float) -> TokenRecord:
    """The record of a token that may act now; 401 for an unknown, revoked or expired one. Only
    an expired token's message says what it is: its holder (who alone can present its secret)
    needs a new token, not a typo fixed."""
    if record is None or record.revoked_at is not None:
        raise _unauthorized("unknown or revoked token")
    if record.expired(now):
        raise _unauthorized("the token has expired; ask the collector's admin for a new one")
    return record


def authorize(record: TokenRecord | None, action: str, team: str | None = None) -> str:
    """The team the request acts for; 401 for unknown or revoked tokens, 403 past their rights."""
    if record is None or record.revoked_at is not None:
        raise _unauthorized("unknown or revoked token")
    if action not in _GRANTS[record.scope]:
        raise ApiError(
            403, "forbidden", f"this token's scope ({record.scope}) does not allow {action}"
        )
    if team is not None and team != record.team:
        raise ApiError(403, "forbidden", "this token does not belong to that team")
    return record.team


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})
