"""The JSON-RPC envelope of a message, checked before pygls sees it.

pygls trusts the envelope: a ``method`` that is not a string raises inside its dispatch, and
whatever ``id`` a request carries is echoed back in the response, so an unhashable or
out-of-range id breaks the client's reader too. Such messages are refused here, with one line
saying why, and never answered (there is no id the client could match an answer to).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_ID_LENGTH", "refusal"]

# The LSP's ``integer`` (a request id is ``integer | string``).
_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1
MAX_ID_LENGTH = 1000


def _id_problem(msg_id: Any, *, response: bool) -> str | None:
    if msg_id is None and response:
        return None  # an error response to a request whose id could not be read
    if isinstance(msg_id, str):
        return None if len(msg_id) <= MAX_ID_LENGTH else "the id is too long"
    if type(msg_id) is int:
        return None if _INT_MIN <= msg_id <= _INT_MAX else "the id is out of range"
    return "the id must be an integer or a string"


def refusal(data: dict[str, Any]) -> str | None:
    """Why a decoded message cannot be handled, or None when its envelope is usable."""
    has_method = "method" in data
    if has_method and not isinstance(data["method"], str):
        return "the method must be a string"
    if "id" in data:
        return _id_problem(data["id"], response=not has_method)
    if not has_method:
        return "neither a method nor an id"
    return None
