"""The team report's tier mix, retention curve, time to first test and repairs: the per-episode
figures as plain functions, their sums per group (hidden under the minimum of contributors), and
both storages keeping them through revisions and an upgrade from before they existed."""

from __future__ import annotations

import time
from typing import Any

import pytest

from sync.collector.ingest import EpisodeRow, episode_curve, episode_metrics, prepare
from sync.collector.report import (
    CurveRow,
    ReportRow,
    aggregate,
    retention_curve,
    weighted_median,
)
from sync.collector.report_html import render_html
from sync.collector.storage import open_storage
from tests.collector.test_collector_storage import store_as_released
from tests.support.collector_support import item

T0 = 1_764_547_200.0  # a Monday


def iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ts))


def tier(name: str) -> dict[str, Any]:
    return {"tier": name, "reasons": ["reverted"], "rules_version": 1, "decided_at": iso(T0)}


def proposal(
    pid: str, tier_name: str | None, *, applied: float | None, retentions: dict[str, float]
) -> dict[str, Any]:
    return {
        "id": pid,
        "state": "applied" if applied is not None else "rejected",
        "outcome": "kept" if applied is not None else "rejected",
        "applied_at": iso(applied) if applied is not None else None,
        "retention": 1.0,
        "chars_added": 10,
        "tier": tier(tier_name) if tier_name else None,
        "checkpoints": [{"window": w, "retention": r} for w, r in retentions.items()],
    }


def run(at: float, exit_code: int) -> dict[str, Any]:
    return {"started_at": iso(at), "exit_code": exit_code, "passed": 3, "failed": exit_code}


def episode(
    eid: str = "e1", *, agent: str = "codex", start: float = T0, tiers: tuple[str | None, ...]
) -> dict[str, Any]:
    return {
        "schema": "agent-capture/episode@1",
        "id": eid,
        "agent": agent,
        "model": "m1",
        "started_at": iso(start),
        "tier": tier("debt"),
        "proposals": [
            proposal(f"{eid}p{i}", t, applied=start + 10 + i, retentions={"30s": 0.5, "2m": 1.0})
            for i, t in enumerate(tiers)
        ]
        + [proposal(f"{eid}r", "rejected", applied=None, retentions={"30s": 0.0})],
        "test_runs": [run(start + 70, 1), run(start + 130, 0)],
    }


def test_an_episode_counts_its_proposals_per_tier_and_a_repair() -> None:
    m = episode_metrics(episode(tiers=("gold", "debt", None)))
    assert (m.tier_gold, m.tier_debt, m.tier_rejected, m.tier_silver) == (1, 1, 1, 0)
    assert (m.failing_episodes, m.repaired_episodes) == (1, 1)


def test_a_run_failing_last_or_passing_first_is_no_repair() -> None:
    e = episode(tiers=("gold",))
    e["test_runs"] = [run(T0 + 70, 0), run(T0 + 130, 1)]
    m = episode_metrics(e)
    assert (m.failing_episodes, m.repaired_episodes) == (1, 0)
    e["test_runs"] = [run(T0 + 70, 0)]
    assert episode_metrics(e).failing_episodes == 0


def test_time_to_first_test_and_windows_of_applied_proposals_only() -> None:
    c = episode_curve(episode(tiers=("gold", "debt")))
    # first applied at +10, first run at +70
    assert c.first_test_s == 60.0
    # the rejected proposal's checkpoint is not an applied edit's retention
    assert c.windows == {"30s": (2, 1000), "2m": (2, 2000)}
    e = episode(tiers=("gold",))
    e["test_runs"] = [run(T0 - 5, 0)]  # before the edit: not a test of it
    assert episode_curve(e).first_test_s is None


def test_retention_curve_is_the_mean_per_window_shortest_first() -> None:
    curve = retention_curve({"save": [1, 900], "10m": [2, 1500], "30s": [4, 3000]})
    assert [(p["window"], p["mean_retention"]) for p in curve] == [
        ("30s", 0.75),
        ("10m", 0.75),
        ("save", 0.9),
    ]


def test_weighted_median_is_the_median_of_the_values_repeated() -> None:
    assert weighted_median([]) is None
    assert weighted_median([(5.0, 3)]) == 5.0
    assert weighted_median([(1.0, 1), (9.0, 1)]) == 5.0
    assert weighted_median([(30.0, 2), (10.0, 1), (20.0, 0)]) == 30.0
    assert weighted_median([(10.0, 2), (30.0, 2), (20.0, 1)]) == 20.0
    assert weighted_median([(10.0, 2), (30.0, 2)]) == 20.0


def _rows(n_contributors: int, agent: str) -> tuple[list[ReportRow], list[Any]]:
    rows, curves = [], []
    for i in range(n_contributors):
        e = episode(f"{agent}{i}", agent=agent, tiers=("gold", "debt", "silver"))
        r = prepare(item(e), contributor=f"c{i}", received_at=T0)
        assert isinstance(r, EpisodeRow)
        sums = tuple(float(getattr(r.metrics, f)) for f in r.metrics.__dataclass_fields__)
        rows.append(ReportRow(r.agent, r.model, r.week, r.contributor, 1, sums))
        # the curve cells the storage would sum: one time to first test per episode (60 s for
        # the first member, then one second more per member) and its windows
        assert r.curve.first_test_s is not None and r.curve.windows is not None
        curves.append(CurveRow(r.agent, r.model, r.week, first_test_s=60.0 + i, episodes=1))
        curves += [
            CurveRow(r.agent, r.model, r.week, window=w, checkpoints=n, retained_millis=m)
            for w, (n, m) in r.curve.windows.items()
        ]
    return rows, curves


def test_the_report_shows_the_mix_per_agent_and_hides_a_small_group() -> None:
    big_rows, big_curves = _rows(5, "codex")
    small_rows, small_curves = _rows(4, "cursor")
    report = aggregate(
        big_rows + small_rows,
        curves=big_curves + small_curves,
        team="t",
        min_contributors=5,
        generated_at="now",
    )
    codex, cursor = report["by_agent"]
    assert codex["key"] == "codex" and not codex["suppressed"]
    assert codex["tiers"]["proposals"]["gold"] == 5 and codex["tiers"]["proposals"]["debt"] == 5
    assert codex["tiers"]["proposals"]["rejected"] == 5 and codex["tiers"]["tiered"] == 20
    # debt over the edits that passed the short-term checks: 5 / (5 gold + 5 silver + 5 debt)
    assert codex["tiers"]["debt_rate"] == {"value": 0.3333, "numerator": 5, "denominator": 15}
    assert [(p["window"], p["mean_retention"]) for p in codex["retention_curve"]] == [
        ("30s", 0.5),
        ("2m", 1.0),
    ]
    # 60, 61, 62, 63, 64 seconds
    assert codex["time_to_first_test"] == {"median_s": 62.0, "episodes": 5}
    assert codex["repairs"]["repaired"] == 5 and codex["repairs"]["rate"]["value"] == 1.0
    assert cursor == {
        "key": "cursor",
        "suppressed": True,
        "reason": "fewer than 5 contributors",
    }
    assert report["total"]["time_to_first_test"]["episodes"] == 9
    assert report["by_model"][0]["tiers"]["proposals"]["gold"] == 9

    page = render_html(report)
    tiers_by_agent = page[page.index("<h2>Tiers by agent</h2>") : page.index("Tiers by model")]
    codex_row, cursor_row = tiers_by_agent.split("<tr><td>")[1:]
    assert codex_row.startswith("codex</td><td>5</td><td>5</td>")  # gold, silver
    assert "33.3%" in codex_row and "62 s" in codex_row and "30s 50%, 2m 100%" in codex_row
    assert "not shown: fewer than 5 contributors" in cursor_row and "<td>4</td>" not in cursor_row


def _prepared(eid: str, contributor: str, revision: int, tiers: tuple[str, ...]) -> EpisodeRow:
    r = prepare(item(episode(eid, tiers=tiers), revision), contributor=contributor, received_at=T0)
    assert isinstance(r, EpisodeRow)
    return r


def _report(storage: Any) -> dict[str, Any]:
    return aggregate(
        storage.report_rows("t", None, None),
        curves=storage.curve_rows("t", None, None),
        team="t",
        min_contributors=1,
        generated_at="",
    )


def test_storage_keeps_the_figures_through_revisions_and_an_upgrade(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = open_storage(db_url)
    module = __import__(type(storage).__module__, fromlist=["MIGRATIONS"])
    every = list(module.MIGRATIONS)
    names = [name for name, _ in every]
    before = names.index("m004_tier_figures")
    monkeypatch.setattr(module, "MIGRATIONS", every[:1])
    storage.migrate()
    store_as_released(storage, "t", [_prepared("old", "c0", 1, ("gold",))])
    monkeypatch.setattr(module, "MIGRATIONS", every)
    assert storage.migrate() == len(every) - 1 and before >= 1
    old = _report(storage)["total"]
    # stored before tiers were counted: in no tier, no curve
    assert old["episodes"] == 1 and old["tiers"]["tiered"] == 0 and old["retention_curve"] == []
    storage.store("t", [_prepared("e1", "c1", 1, ("gold", "gold"))])
    storage.store("t", [_prepared("e1", "c1", 2, ("debt",))])
    total = _report(storage)["total"]
    assert total["episodes"] == 2
    assert total["tiers"]["proposals"]["gold"] == 0 and total["tiers"]["proposals"]["debt"] == 1
    assert total["tiers"]["proposals"]["rejected"] == 1
    assert total["repairs"]["repaired"] == 1
    assert total["time_to_first_test"] == {"median_s": 60.0, "episodes": 1}
    # revision 2's one applied proposal replaced revision 1's two in the window cells
    assert [(p["window"], p["checkpoints"]) for p in total["retention_curve"]] == [
        ("30s", 1),
        ("2m", 1),
    ]
    storage.close()
