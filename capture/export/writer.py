"""Running an export: episodes in, one JSONL file per format (and split), a datasheet beside.

The episodes come as an iterator (the store's, page by page, or the collector's), each goes
through the level's projection (handed in: the anonymizer lives in `sync`), is split, cut into
examples and written at once: nothing is held but the open files and, with `--dedupe`, one
digest per distinct row.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from capture.export.agent_trace import trace_record
from capture.export.canonical import episode_row, schema_text
from capture.export.datasheet import Datasheet, render_markdown
from capture.export.dedupe import Deduper
from capture.export.examples import examples_of, tier_of
from capture.export.formats import Format
from capture.export.split import split_of

__all__ = ["ExportPlan", "ExportResult", "Projector", "dumps_line", "run_export"]

#: An episode at the export's level, or (None, why) when it must not be exported. Tiers are
#: taken off before and put back after: they are our own words, and the metrics level would
#: drop them as text.
Projector = Callable[[dict[str, Any]], tuple[dict[str, Any] | None, str | None]]

_TIER_KEYS = ("tier", "tier_history")
#: The language too, so that every level names it alike (the anonymizer has its own names for
#: languages; the extension it is read from is kept at every level).
_PROPOSAL_KEYS = (*_TIER_KEYS, "language")


@dataclass(frozen=True, slots=True)
class ExportPlan:
    formats: tuple[Format, ...]
    out_dir: Path
    tiers: frozenset[str] | None = None
    #: only proposals whose label rests on these evidence kinds (None: all)
    evidence: frozenset[str] | None = None
    eval_fraction: float | None = None
    dedupe: bool = False
    tool_version: str = ""
    #: written into the datasheet as given
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ExportResult:
    files: dict[str, Path]
    datasheet: dict[str, Any]
    datasheet_path: Path


def dumps_line(row: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(row) + b"\n"
    except TypeError:  # a lone surrogate: the json module writes it escaped
        return (json.dumps(row, ensure_ascii=True) + "\n").encode()


def _take_tiers(episode: dict[str, Any]) -> dict[str, dict[str, Any]]:
    taken = {"": {k: episode.pop(k) for k in _TIER_KEYS if k in episode}}
    for p in episode.get("proposals") or ():
        taken[str(p.get("id"))] = {k: p.pop(k) for k in _PROPOSAL_KEYS if k in p}
    return taken


def _put_tiers(episode: dict[str, Any], taken: dict[str, dict[str, Any]]) -> None:
    episode.update(taken.get("", {}))
    for p in episode.get("proposals") or ():
        p.update(taken.get(str(p.get("id")), {"tier": None}))
    episode.setdefault("tier", None)


class _Files:
    """One open file per (format, split), opened when its first row comes."""

    def __init__(self, out_dir: Path, split: bool) -> None:
        self.out_dir = out_dir
        self.split = split
        self.handles: dict[str, IO[bytes]] = {}
        self.paths: dict[str, Path] = {}

    def key(self, fmt: Format, side: str | None) -> str:
        return f"{fmt.name}.{side}" if self.split and side else fmt.name

    def write(self, key: str, line: bytes) -> None:
        handle = self.handles.get(key)
        if handle is None:
            path = self.out_dir / f"{key}.jsonl"
            handle = self.handles[key] = path.open("wb")
            self.paths[key] = path
        handle.write(line)

    def close(self) -> None:
        for handle in self.handles.values():
            handle.close()


def run_export(
    episodes: Iterable[dict[str, Any]],
    plan: ExportPlan,
    project: Projector,
    *,
    advance: Callable[[int], None] | None = None,
) -> ExportResult:
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    # A format with no rows writes no file: one left by an earlier export would pass for this
    # one's, so this export's own names are cleared first.
    for fmt in plan.formats:
        for suffix in ("", ".train", ".eval"):
            (plan.out_dir / f"{fmt.name}{suffix}.jsonl").unlink(missing_ok=True)
    sheet = Datasheet(options=plan.options)
    dedupers = {f.name: Deduper() for f in plan.formats} if plan.dedupe else {}
    files = _Files(plan.out_dir, plan.eval_fraction is not None)
    wanted = plan.tiers
    example_formats = [f for f in plan.formats if f.rows is not None]
    try:
        for raw in episodes:
            if advance is not None:
                advance(1)
            taken = _take_tiers(raw)
            episode, withheld = project(raw)
            if episode is None:
                sheet.withheld[withheld or "withheld"] += 1
                continue
            _put_tiers(episode, taken)
            if plan.evidence is not None:
                episode["proposals"] = [
                    p for p in episode.get("proposals") or () if p.get("evidence") in plan.evidence
                ]
            if tier_of(episode) == "quarantine":
                sheet.withheld["quarantine tier"] += 1
                continue
            side = (
                split_of(str(episode.get("id")), plan.eval_fraction)
                if plan.eval_fraction is not None
                else None
            )
            sheet.add_episode(episode)
            episode_in = wanted is None or tier_of(episode) in wanted
            for fmt in plan.formats:
                if fmt.rows is not None or not episode_in:
                    continue
                row = (
                    episode_row(episode, side)
                    if fmt.name == "episodes"
                    else trace_record(episode, plan.tool_version)
                )
                if row is not None:
                    key = files.key(fmt, side)
                    files.write(key, dumps_line(row))
                    sheet.rows[key] += 1
            if not example_formats:
                continue
            for example in examples_of(episode):
                if example.tier == "quarantine" or (
                    wanted is not None and example.tier not in wanted
                ):
                    continue
                used = False
                for fmt in example_formats:
                    assert fmt.rows is not None
                    for row in fmt.rows(example):
                        deduper = dedupers.get(fmt.name)
                        if deduper is not None and not deduper.first_time(row, fmt.dedupe_keys):
                            continue
                        key = files.key(fmt, side)
                        files.write(key, dumps_line(row))
                        sheet.rows[key] += 1
                        used = True
                if used:
                    sheet.add_example(example)
    finally:
        files.close()
    sheet.duplicates_dropped = sum(d.dropped for d in dedupers.values())
    data = sheet.as_json()
    written = dict(files.paths)
    (plan.out_dir / "datasheet.json").write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    (plan.out_dir / "datasheet.md").write_text(render_markdown(data), "utf-8")
    if any(f.name == "episodes" for f in plan.formats):
        schema_path = plan.out_dir / "episode.schema.json"
        schema_path.write_text(schema_text(), "utf-8")
    return ExportResult(written, data, plan.out_dir / "datasheet.json")
