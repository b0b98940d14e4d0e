"""The three levels of what an uploaded episode may carry. The README's sync section shows the
same table; `pipeline.py` is where each rule is applied.

| level    | code hunks, prompt, test commands and names | paths                                |
|----------|---------------------------------------------|--------------------------------------|
| metrics  | none (counts, outcomes, timings only)       | every name hashed (extension kept)   |
| redacted | yes, secrets replaced, identity scrubbed    | directories hashed, file name kept   |
| full     | yes, secrets replaced, identity scrubbed    | as in the workspace                  |

At every level: agent, model, language, outcomes, similarity, retention, checkpoints, counts and
timings; secrets are replaced by `<SECRET:kind:hmac8>`; files matching the always-excluded
patterns (and the workspace's exclude globs) are left out with their hunks.
"""

from __future__ import annotations

# The words are the episode contract's; each field's rule is marked there (`Share`).
from capture.episode.vocabulary import LEVELS, Level

__all__ = ["LEVELS", "Level", "parse_level"]


def parse_level(text: str) -> Level:
    try:
        return Level(text.strip().lower())
    except ValueError:
        raise ValueError(f"unknown level {text!r} (use {', '.join(LEVELS)})") from None
