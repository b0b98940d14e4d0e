"""Precision and recall of the follow-up classifier on the labelled set
(tests/fixtures/followups/labelled.jsonl; its provenance in PROVENANCE.md beside it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from capture.followups.rules import Label, classify

__all__ = ["LABELLED", "Figures", "figures", "labelled_rows"]

LABELLED = Path(__file__).parents[1] / "fixtures" / "followups" / "labelled.jsonl"


def labelled_rows(split: str | None = None) -> list[dict]:
    rows = [json.loads(line) for line in LABELLED.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if split is None or r["split"] == split]


class Figures:
    def __init__(self, rows: list[dict]) -> None:
        self.rows = len(rows)
        self.true_pos: Counter[str] = Counter()
        self.false_pos: Counter[str] = Counter()
        self.false_neg: Counter[str] = Counter()
        self.support: Counter[str] = Counter(r["label"] for r in rows)
        for row in rows:
            got = classify(row["text"]).label.value
            if got == row["label"]:
                self.true_pos[got] += 1
            else:
                self.false_pos[got] += 1
                self.false_neg[row["label"]] += 1

    def precision(self, label: str) -> float | None:
        called = self.true_pos[label] + self.false_pos[label]
        return self.true_pos[label] / called if called else None

    def recall(self, label: str) -> float | None:
        support = self.support[label]
        return self.true_pos[label] / support if support else None

    def table(self) -> str:
        def pct(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}"

        lines = ["| label | support | called | precision | recall |", "|---|---:|---:|---:|---:|"]
        for label in Label:
            name = label.value
            called = self.true_pos[name] + self.false_pos[name]
            lines.append(
                f"| {name} | {self.support[name]} | {called} | {pct(self.precision(name))} | "
                f"{pct(self.recall(name))} |"
            )
        return "\n".join(lines)


def figures(split: str | None = None) -> Figures:
    return Figures(labelled_rows(split))
