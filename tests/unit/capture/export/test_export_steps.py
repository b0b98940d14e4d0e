"""The small steps: the split by episode, the dedupe, the datasheet, the Agent Trace record."""

from __future__ import annotations

import pytest

from capture.export.agent_trace import trace_record
from capture.export.datasheet import Datasheet, render_markdown
from capture.export.dedupe import Deduper
from capture.export.examples import examples_of
from capture.export.split import parse_split, split_of


def test_split_shares_are_read_in_three_spellings() -> None:
    assert parse_split("0.1") == pytest.approx(0.1)
    assert parse_split("10%") == pytest.approx(0.1)
    assert parse_split("90/10") == pytest.approx(0.1)
    for bad in ("0", "1", "1.5", "-0.2", "ten", "0/0", "100/0"):
        with pytest.raises(ValueError, match="--split"):
            parse_split(bad)


def test_the_split_is_by_episode_and_stable() -> None:
    ids = [f"episode-{i}" for i in range(10_000)]
    sides = [split_of(i, 0.1) for i in ids]
    assert sides == [split_of(i, 0.1) for i in ids]  # the same on every run
    assert 800 < sides.count("eval") < 1200
    # growing the eval share only moves episodes from train to eval
    wider = [split_of(i, 0.2) for i in ids]
    assert all(w == "eval" for s, w in zip(sides, wider, strict=True) if s == "eval")


def test_dedupe_compares_only_the_named_columns() -> None:
    d = Deduper()
    assert d.first_time({"id": "a", "prompt": "p", "completion": "c"}, ("prompt", "completion"))
    assert not d.first_time({"id": "b", "prompt": "p", "completion": "c"}, ("prompt", "completion"))
    assert d.first_time({"id": "c", "prompt": "p", "completion": "d"}, ("prompt", "completion"))
    assert d.first_time({"prompt": "p\ud800", "completion": "c"}, ("prompt", "completion"))
    assert d.dropped == 1


def test_the_datasheet_counts_and_renders() -> None:
    episode = {
        "id": "e",
        "tier": {"tier": "gold", "reasons": [], "rules_version": 3},
        "proposals": [
            {
                "id": "p",
                "file": "a.py",
                "language": "Python",
                "rules_version": 2,
                "tier": {"tier": "gold", "reasons": [], "rules_version": 3},
                "hunks": [{"old_text": "a", "new_text": "b"}],
            }
        ],
    }
    sheet = Datasheet(options={"formats": "sft"})
    sheet.add_episode(episode)
    for ex in examples_of(episode):
        sheet.add_example(ex)
    sheet.rows["sft"] += 1
    data = sheet.as_json()
    assert data["episodes_by_tier"] == {"gold": 1}
    assert data["examples_by_language"] == {"Python": 1}
    assert data["outcome_rules_versions"] == {"2": 1} and data["tier_rules_versions"] == {"3": 2}
    text = render_markdown(data)
    assert "## Examples per language" in text and "| Python | 1 |" in text


def test_agent_trace_records_only_regions_still_in_place() -> None:
    episode = {
        "id": "e1",
        "model": "anthropic/claude",
        "started_at": "2026-01-01T00:00:00.000Z",
        "proposals": [
            {"id": "p1", "file": "a.py", "outcome": "kept",
             "hunk_context": [{"final": "x\ny\n", "start_line": 3, "end_line": 4}]},
            {"id": "p2", "file": "b.py", "outcome": "undone", "hunk_context": [{"status": "lost"}]},
        ],
    }  # fmt: skip
    record = trace_record(episode, "1.0")
    assert record is not None
    assert record["version"] == "0.1.0" and record["timestamp"] == "2026-01-01T00:00:00.000Z"
    assert record["id"] == trace_record(episode, "1.0")["id"]  # type: ignore[index]
    (file,) = record["files"]
    assert file["path"] == "a.py"
    (conversation,) = file["conversations"]
    assert conversation["contributor"] == {"type": "ai", "model_id": "anthropic/claude"}
    (rng,) = conversation["ranges"]
    assert (rng["start_line"], rng["end_line"]) == (3, 4)
    assert rng["content_hash"].startswith("sha256:")
    assert trace_record({"id": "e2", "proposals": [episode["proposals"][1]]}, "1.0") is None
