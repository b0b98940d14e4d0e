from pathlib import Path

import pytest

from capture.store.database import Store
from capture.store.tier_rows import current_tiers, record_tier, tier_history
from capture.tiers import Tier, TierDecision


def test_history_keeps_changes_and_current_is_newest(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "c.db")
    silver = TierDecision(Tier.SILVER, ("kept", "no linked run"), 1)
    debt = TierDecision(Tier.DEBT, ("reverted",), 1)
    with store.transaction() as conn:
        assert record_tier(conn, "proposal", "p1", silver, 10.0)
        assert not record_tier(conn, "proposal", "p1", silver, 11.0)  # unchanged: nothing added
        assert record_tier(conn, "proposal", "p1", debt, 20.0)
        assert record_tier(conn, "episode", "p1", silver, 20.0)
    assert current_tiers(store.conn, "proposal") == {"p1": debt}
    assert current_tiers(store.conn, "episode", ["p1", "p2"]) == {"p1": silver}
    history = tier_history(store.conn, "proposal", "p1")
    assert [(c.decision.tier, c.decided_at) for c in history] == [
        (Tier.SILVER, 10.0),
        (Tier.DEBT, 20.0),
    ]


def test_unknown_subject_is_refused(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "c.db")
    with pytest.raises(ValueError, match="tier subject"):
        current_tiers(store.conn, "hunk")
