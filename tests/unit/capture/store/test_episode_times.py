from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from capture.store.episodes import iso


def _expected(ts: float) -> str:
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


@pytest.mark.parametrize(
    "ts",
    [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1e-7,
        -1e-7,
        0.0005,
        0.0015,
        0.9995,
        0.9999995,
        -0.9999995,
        59.9999996,
        86_399.9999996,
        1_780_000_000,
        1_780_000_000.123456,
        1_780_000_059.9999999,
        253_402_300_799.999,
        -62_135_596_800.0,
    ],
)
def test_iso_writes_what_datetime_writes(ts: float) -> None:
    assert iso(ts) == _expected(ts)


def test_iso_agrees_with_datetime_on_many_times() -> None:
    # Times a few seconds to years apart, on the microsecond grid and off it, so that the
    # cached minutes are both reused and missed.
    rng = random.Random(2026)
    ts = 1_780_000_000.0
    for _ in range(20_000):
        ts += rng.choice((rng.random(), rng.random() * 600, rng.random() * 3e7, -rng.random()))
        value = rng.choice((ts, round(ts, 6), round(ts, 3) + rng.choice((5e-4, -5e-4))))
        assert iso(value) == _expected(value), value


def test_iso_none() -> None:
    assert iso(None) is None
