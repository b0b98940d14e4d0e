"""`python -m capture.export.write_schema`: write the canonical export's JSON Schema, shipped
beside `canonical.py`, from the episode contract (`--check`: only say whether it is current)."""

from __future__ import annotations

import argparse
import sys

from capture.export.canonical import SHIPPED_SCHEMA, schema_text

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not current")
    args = parser.parse_args(argv)
    text = schema_text()
    current = SHIPPED_SCHEMA.exists() and SHIPPED_SCHEMA.read_text("utf-8") == text
    if args.check:
        if not current:
            print(f"{SHIPPED_SCHEMA} differs from the contract: run {parser.prog}", file=sys.stderr)
        return 0 if current else 1
    if not current:
        SHIPPED_SCHEMA.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
