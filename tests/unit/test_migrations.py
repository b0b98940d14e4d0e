"""Released migrations never change: a database migrated by an earlier release must end up
with the tables, triggers and indexes a new one gets. A new schema is a new migration."""

from __future__ import annotations

import hashlib

from capture.store import schema

#: sha256 of each migration's statements as released (joined by "\n;\n"), first 16 digits.
RELEASED = {
    "m001_initial": "2bc4508a539ef106",
    "m002_test_runs": "a03bd0eae999a29c",
    "m003_hooks": "832e1da67d53e257",
    "m006_report": "c687e9ef6a5e0304",
    "m005_sync": "89ec758903d1bf82",
}


def test_released_migrations_keep_their_sql() -> None:
    found = {}
    for name, statements in schema._MIGRATIONS:
        sql = statements() if callable(statements) else statements
        found[name] = hashlib.sha256("\n;\n".join(sql).encode()).hexdigest()[:16]
    assert {name: found.get(name) for name in RELEASED} == RELEASED
