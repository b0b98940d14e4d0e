"""The train/eval split, by episode: a hash of the episode's id, so that an episode's examples
never straddle the two, and an episode keeps its side when the export is run again on more data.
"""

from __future__ import annotations

import hashlib

__all__ = ["parse_split", "split_of"]


def parse_split(text: str) -> float:
    """`0.1`, `10%` or `90/10` (train/eval) -> the eval fraction, in (0, 1)."""
    t = text.strip()
    try:
        if "/" in t:
            train, _, evaluation = t.partition("/")
            a, b = float(train), float(evaluation)
            fraction = b / (a + b) if a >= 0 and b >= 0 and a + b > 0 else -1.0
        elif t.endswith("%"):
            fraction = float(t[:-1]) / 100
        else:
            fraction = float(t)
    except ValueError:
        fraction = -1.0
    if not 0 < fraction < 1:
        raise ValueError(
            f"--split wants an eval share between 0 and 1 (0.1, 10%, 90/10), not {text!r}"
        )
    return fraction


def split_of(episode_id: str, eval_fraction: float) -> str:
    digest = hashlib.blake2b(episode_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return "eval" if int.from_bytes(digest, "big") / 2**64 < eval_fraction else "train"
