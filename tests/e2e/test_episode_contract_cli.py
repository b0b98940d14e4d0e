"""Real output against the episode contract: `capture episodes --json` of a store recorded
through the real processes (outcomes of every kind, a linked test run, late signals, tiers)
decodes strictly into the contract's `Episode`; each export line, at every level, validates
against the shipped JSON Schema and the contract's export type; what sync would upload from that
store is what the contract's upload type and the collector's validator accept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import msgspec
import pytest

from capture.episode.codec import decode_episodes
from capture.episode.variants import export_episode, upload_episode
from capture.paths import resolve_paths
from capture.store.database import Store
from capture.store.episodes import load_episodes
from capture.store.late_signal_rows import write_late_signals
from capture.tiers.late_signals import LateSignals
from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy
from sync.collector.validation import compile_schema
from sync.collector.wire import batch_schema
from tests.support.collector_support import item
from tests.support.export_support import Recorded, record_scenario


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    rec = record_scenario(tmp_path_factory.mktemp("contract"))
    run = rec.run("run", "--", sys.executable, "-c", "print('ok')")
    assert run.returncode == 0, run.stderr
    store = Store.open(resolve_paths({"CAPTURE_HOME": str(rec.home)}).db)
    with store.transaction() as conn:
        signals = LateSignals(
            measured_at=2.0e9, lines=4, committed=3, commit="a" * 40, committed_at=1.9e9,
            churn_14d=0.25, days_observed=14.0, reverted_by="b" * 40, reverted_at=1.95e9,
            revert_kind="lines back", syntax_errors_added=None, markers_added=1,
        )  # fmt: skip
        write_late_signals(conn, [(rec.proposals["kept.py"], signals)])
    store.close()
    return rec


def test_episodes_json_decodes_strictly_into_the_contract(recorded: Recorded) -> None:
    out = recorded.run("episodes", "--json")
    assert out.returncode == 0, out.stderr
    (episode,) = decode_episodes(out.stdout)
    assert episode.id == recorded.episode_id and episode.test_runs and episode.tier
    by_id = {p.id: p for p in episode.proposals}
    late = by_id[recorded.proposals["kept.py"]].late_signals
    assert late is not None and late.revert_kind == "lines back"
    assert {p.outcome.value for p in episode.proposals} >= {"kept", "edited", "undone", "rejected"}
    # built from the contract's types, the output is the store's JSON, field for field
    assert json.loads(out.stdout) == [msgspec.to_builtins(episode)]


@pytest.mark.parametrize("level", ["full", "redacted", "metrics"])
def test_each_export_line_matches_the_shipped_schema(
    recorded: Recorded, tmp_path: Path, level: str
) -> None:
    out = tmp_path / level
    proc = recorded.run(
        "export", "--format", "episodes", "--level", level, "--split", "0.5", "--out", str(out),
        "-q",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    schema = json.loads((out / "episode.schema.json").read_text())
    lines = [
        json.loads(line)
        for path in sorted(out.glob("episodes*.jsonl"))
        for line in path.read_text().splitlines()
    ]
    assert lines
    for line in lines:
        jsonschema.validate(line, schema)
        msgspec.convert(line, export_episode(), strict=True)
        assert line.get("level", "full") == level


def test_what_sync_would_upload_is_what_the_collector_accepts(recorded: Recorded) -> None:
    validate = compile_schema(batch_schema())
    store = Store.open(resolve_paths({"CAPTURE_HOME": str(recorded.home)}).db)
    try:
        (episode,) = load_episodes(store)
    finally:
        store.close()
    anonymizer = Anonymizer(b"s" * 32, Identity())
    for level in Level:
        projection = anonymizer.project(json.loads(json.dumps(episode)), WorkspacePolicy(level))
        assert projection.episode is not None and projection.serialized is not None
        shared = json.loads(projection.serialized)
        msgspec.convert(shared, upload_episode(), strict=True)
        validate({"episodes": [item(shared, level=level.value)]})
