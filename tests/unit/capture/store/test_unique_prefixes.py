"""The shortest unique prefix of an id among all ids, as `capture episodes` prints it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from capture.store.ids import unique_prefixes


def test_ids_started_close_together_get_the_digits_that_tell_them_apart() -> None:
    ids = ["0193a1b2c3d000aaaaaa", "0193a1b2c3d001bbbbbb", "0193a1b2c4e000cccccc"]
    assert unique_prefixes(ids, ids) == {
        ids[0]: "0193a1b2c3d000",
        ids[1]: "0193a1b2c3d001",
        ids[2]: "0193a1b2c4",
    }
    # an id far from the others keeps git's seven digits
    assert unique_prefixes(["ffff000000"], ids) == {"ffff000000": "ffff000"}


@given(st.lists(st.text("0123456789abcdef", min_size=12, max_size=12), min_size=1, unique=True))
def test_every_prefix_names_exactly_one_id(ids: list[str]) -> None:
    short = unique_prefixes(ids, ids)
    for full, prefix in short.items():
        assert full.startswith(prefix)
        assert [other for other in ids if other.startswith(prefix)] == [full]
