"""The follow-up classifier's precision and recall per label on the labelled set of real
follow-up prompts: the part its rules were written against, the held-out part labelled
afterwards, and both.

    python tests/benchmarks/bench_followups.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2]))

from tests.support.followup_figures import figures  # noqa: E402


def main() -> None:
    for split, title in (("fitted", "fitted"), ("held-out", "held out"), (None, "all")):
        result = figures(split)
        print(f"\n{title}: {result.rows} prompts")
        print(result.table())


if __name__ == "__main__":
    main()
