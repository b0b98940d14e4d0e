"""Refresh the vendored gitleaks rule set (gitleaks.toml beside this file): a maintainer's
script, never run by the tests or at run time.

Run: python -m sync.anonymize.rules.update_gitleaks COMMIT [PATH/TO/gitleaks.toml]

With a path, that file is taken (a checkout of gitleaks at COMMIT); without one, upstream's
config/gitleaks.toml at COMMIT is downloaded from GitHub. The file is written as it is, under a
header naming the upstream, the commit and the licence (MIT: the rules are copied as data). The
rules are then read as the detector reads them, and those whose expression google-re2 cannot
compile are listed (the detector leaves them out). Review the diff, then run
tests/unit/sync/test_sync_gitleaks_rules.py.
"""

from __future__ import annotations

import re
import sys
import urllib.request
from pathlib import Path

from sync.anonymize.rules.gitleaks_config import not_re2, read_config

__all__ = ["header", "main", "vendored"]

UPSTREAM = "https://github.com/gitleaks/gitleaks"
_RAW = "https://raw.githubusercontent.com/gitleaks/gitleaks/{commit}/config/gitleaks.toml"
TARGET = Path(__file__).with_name("gitleaks.toml")


def header(commit: str) -> str:
    return (
        f"# gitleaks' rule set, vendored as data: {UPSTREAM} (config/gitleaks.toml),\n"
        f"# commit {commit}.\n"
        "# Licence: MIT, Copyright (c) 2019 Zachary Rice.\n"
        "# Written by sync/anonymize/rules/update_gitleaks.py; do not edit by hand.\n"
        "#\n"
    )


def vendored(upstream: str, commit: str) -> str:
    """The text of gitleaks.toml for upstream's file at `commit`."""
    return header(commit) + upstream


def _download(commit: str) -> str:
    with urllib.request.urlopen(_RAW.format(commit=commit), timeout=60) as response:  # noqa: S310
        return str(response.read().decode("utf-8"))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2) or not re.fullmatch(r"[0-9a-f]{40}", args[0]):
        print("usage: update_gitleaks.py COMMIT (40 hex digits) [PATH/TO/gitleaks.toml]",
              file=sys.stderr)  # fmt: skip
        return 2
    commit = args[0]
    upstream = Path(args[1]).read_text(encoding="utf-8") if len(args) == 2 else _download(commit)
    text = vendored(upstream, commit)
    config = read_config(text)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.name} at {commit}: {len(config.rules)} rules with an expression")
    for rule_id, reason in sorted(not_re2(config).items()):
        print(f"  not run (re2 cannot compile it): {rule_id}: {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
