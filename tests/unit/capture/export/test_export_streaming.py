"""Selection and writer over a real store: every episode once, in order, across pages; tiers as
`record_tier` wrote them (null where none); files per split; what is withheld is counted."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from capture.export.formats import parse_formats
from capture.export.selection import Selection, count_episodes, stream_episodes
from capture.export.writer import ExportPlan, run_export
from capture.store.database import Store
from capture.store.tier_rows import record_tier
from capture.tiers import Tier, TierDecision
from tests.support.synthetic_episodes import make_episode, write_episodes


def filled(tmp_path: Path, n: int) -> tuple[Store, list[dict[str, Any]]]:
    rng = random.Random(7)
    episodes = [make_episode(rng, i) for i in range(n)]
    # two episodes that start at the same moment: the keyset must not skip or repeat either
    if n > 5:
        episodes[4]["started_at"] = episodes[5]["started_at"]
    store = Store.open(tmp_path / "c.db")
    write_episodes(store, episodes, now=time.time())
    return store, episodes


def test_pages_give_every_episode_once_oldest_first(tmp_path: Path) -> None:
    store, episodes = filled(tmp_path, 11)
    selection = Selection(page=3)
    seen = [e["id"] for e in stream_episodes(store, selection)]
    assert sorted(seen) == sorted(e["id"] for e in episodes) and len(seen) == 11
    starts = [e["started_at"] for e in stream_episodes(store, selection)]
    assert starts == sorted(starts)
    assert count_episodes(store, selection) == 11
    assert count_episodes(store, Selection(workspace="/elsewhere")) == 0


def test_tiers_are_the_current_decisions_and_null_without_one(tmp_path: Path) -> None:
    store, episodes = filled(tmp_path, 3)
    first = episodes[0]
    pid = first["proposals"][0]["id"]
    with store.transaction() as conn:
        record_tier(conn, "proposal", pid, TierDecision(Tier.SILVER, ("kept",), 1), 1.0)
        record_tier(conn, "proposal", pid, TierDecision(Tier.DEBT, ("reverted",), 1), 2.0)
    out = {e["id"]: e for e in stream_episodes(store, Selection(history=True))}
    proposal = out[first["id"]]["proposals"][0]
    assert proposal["tier"] == {"tier": "debt", "reasons": ["reverted"], "rules_version": 1}
    assert [c["tier"] for c in proposal["tier_history"]] == ["silver", "debt"]
    assert out[first["id"]]["tier"] is None
    assert all(p["tier"] is None for p in out[episodes[1]["id"]]["proposals"])


def _tiered(episodes: list[dict[str, Any]], tier: str | None) -> Iterator[dict[str, Any]]:
    for e in episodes:
        e = json.loads(json.dumps(e))
        decision = None if tier is None else {"tier": tier, "reasons": [], "rules_version": 1}
        e["tier"] = decision
        for p in e["proposals"]:
            p["tier"] = decision
        yield e


def test_the_writer_splits_withholds_and_keeps_tiers_through_the_projection(
    tmp_path: Path,
) -> None:
    rng = random.Random(3)
    episodes = [make_episode(rng, i) for i in range(40)]
    plan = ExportPlan(
        formats=parse_formats("sft,episodes"), out_dir=tmp_path / "out", eval_fraction=0.3
    )

    def project(e: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
        if e["id"] == episodes[0]["id"]:
            return None, "quarantined by the secret scan"
        # a projection that drops every text it does not know, as the metrics level does
        assert "tier" not in e and all("tier" not in p for p in e["proposals"])
        return e, None

    pulled: list[str] = []

    def source() -> Iterator[dict[str, Any]]:
        for e in _tiered(episodes[:-1], "gold"):
            pulled.append(e["id"])
            yield e
        yield from _tiered(episodes[-1:], "quarantine")

    result = run_export(source(), plan, project)
    sheet = result.datasheet
    assert sheet["withheld_episodes"] == {
        "quarantined by the secret scan": 1,
        "quarantine tier": 1,
    }
    assert sheet["episodes"] == 38
    train = [json.loads(x) for x in (tmp_path / "out" / "episodes.train.jsonl").open()]
    evaluation = [json.loads(x) for x in (tmp_path / "out" / "episodes.eval.jsonl").open()]
    assert len(train) + len(evaluation) == 38 and train and evaluation
    assert {e["split"] for e in train} == {"train"} and {e["split"] for e in evaluation} == {"eval"}
    assert all(e["tier"]["tier"] == "gold" for e in train + evaluation)
    eval_ids = {e["id"] for e in evaluation}
    sft_eval = [json.loads(x) for x in (tmp_path / "out" / "sft.eval.jsonl").open()]
    assert {r["id"].split(":")[0][:11] for r in sft_eval} <= {i[:11] for i in eval_ids}
    assert (
        sheet["rows"]["sft.train"] + sheet["rows"]["sft.eval"] == sheet["examples_by_tier"]["gold"]
    )
    assert (tmp_path / "out" / "episode.schema.json").exists()


def test_an_earlier_exports_file_is_not_left_to_pass_for_this_ones(tmp_path: Path) -> None:
    rng = random.Random(5)
    episodes = [make_episode(rng, i) for i in range(3)]
    out = tmp_path / "out"
    formats = parse_formats("sft")
    first = run_export(_tiered(episodes, "gold"), ExportPlan(formats, out), lambda e: (e, None))
    assert first.datasheet["rows"]["sft"] > 0 and (out / "sft.jsonl").exists()
    again = run_export(
        _tiered(episodes, "gold"),
        ExportPlan(formats, out, tiers=frozenset({"debt"})),
        lambda e: (e, None),
    )
    assert again.datasheet["rows"] == {} and not (out / "sft.jsonl").exists()


def test_tiers_asked_for_by_id_across_chunks_are_the_newest_decisions(tmp_path: Path) -> None:
    from capture.store.tier_rows import current_tiers

    store = Store.open(tmp_path / "c.db")
    with store.transaction() as conn:
        for i in range(1200):
            record_tier(conn, "proposal", f"p{i}", TierDecision(Tier.SILVER, ("a",), 1), 1.0)
            if i % 3 == 0:
                record_tier(conn, "proposal", f"p{i}", TierDecision(Tier.DEBT, ("b",), 1), 2.0)
    asked = [f"p{i}" for i in range(0, 1300, 2)] + ["p0"]  # some unknown, one twice
    everything = current_tiers(store.conn, "proposal")
    assert current_tiers(store.conn, "proposal", asked) == {
        k: v for k, v in everything.items() if k in set(asked)
    }
    assert current_tiers(store.conn, "proposal", ["p3"])["p3"].tier is Tier.DEBT
    assert current_tiers(store.conn, "proposal", []) == {}


def test_dedupe_writes_a_repeated_example_once_per_format(tmp_path: Path) -> None:
    rng = random.Random(9)
    (base,) = [make_episode(rng, 0)]
    twin = json.loads(json.dumps(base))
    twin["id"] = "f" * 20
    for p in twin["proposals"]:
        p["id"] = "f" + p["id"][1:]
    formats = parse_formats("sft,kto")
    plain = run_export(_tiered([base, twin], "gold"), ExportPlan(formats, tmp_path / "a"), _same)
    deduped = run_export(
        _tiered([base, twin], "gold"), ExportPlan(formats, tmp_path / "b", dedupe=True), _same
    )
    hunks = sum(len(p["hunks"]) for p in base["proposals"])
    assert plain.datasheet["rows"] == {"sft": 2 * hunks, "kto": 2 * hunks}
    assert deduped.datasheet["rows"] == {"sft": hunks, "kto": hunks}
    assert deduped.datasheet["duplicates_dropped"] == 2 * hunks


def _same(e: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    return e, None
