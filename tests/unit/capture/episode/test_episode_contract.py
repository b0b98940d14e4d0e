"""The episode contract (`capture.episode`): one definition, and everything that describes the
episode produced from it: the export's shipped schema, the collector's validation, the
anonymizer's field lists and the reference page."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import fields
from pathlib import Path
from typing import Any

import msgspec
import pytest

from capture.episode import vocabulary
from capture.episode.codec import decode_episodes, encode_episodes
from capture.episode.fields import Required, field_marks
from capture.episode.model import PARTS, Episode, Proposal, TestRun, TestsSummary
from capture.episode.reference import schema_markdown
from capture.episode.schemas import export_schema, inline, upload_schema
from capture.episode.variants import additions, shaped, upload_batch, upload_episode
from capture.export import canonical, write_schema
from capture.testruns.linking import LINK_OPEN, LinkedRun, summarize_tests
from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy
from sync.anonymize import levels as sync_levels
from sync.collector import ingest, wire
from sync.collector.validation import SchemaViolation, compile_schema
from tests.support.collector_support import item
from tests.support.collector_support import make_episode as make_uploaded
from tests.support.synthetic_episodes import make_episode as make_local

VALIDATE = compile_schema(wire.batch_schema())
ALL_PARTS = {
    *PARTS,
    *(a for p in PARTS for shape in ("wire", "export") for a in additions(p, shape)),
}


def _local_episode(n: int = 1) -> dict[str, Any]:
    """A synthetic episode completed with every field `load_episodes` writes."""
    e = make_local(random.Random(n), n)
    for p in e["proposals"]:
        p.update(rules_version=3, late_signals=None, tier=None, tier_history=[])
        p.update(before_text="def f():\n    return 1\n", before_via="payload")
        p.update(evidence="disk-watched", evidence_seen=True, author="agent", undone_by=None)
        for c in p["checkpoints"]:
            c.update(reason=None, rules_version=3, late_seconds=None)
    for r in e["test_runs"]:
        r.update(status="passing", link="open", runner="pytest", results_from="plugin")
        r.update(report=None, cwd="/home/dev/work/shop", shell_exit_code=None, seen_by=["wrapper"])
    e["tests"] = {
        "runs": len(e["test_runs"]),
        "first_run_after": None,
        "last_run_before_settling": None,
        "transition": None,
        "failing_tests_in_edited_files": [],
        "tests_edited_by_agent": False,
    }
    e.update(tier=None, tier_history=[])
    step = {
        "kind": "tool",
        "at": e["started_at"],
        "tool": "Read",
        "call_id": "toolu_1",
        "input": '{"file_path": "/home/dev/work/shop/a.py"}',
        "text": "def f():\n    return 1\n",
        "is_error": False,
        "harness": None,
        "subagent": None,
        "spawned": None,
        "path": "/home/dev/work/shop/a.py",
        "truncated": False,
    }
    e.update(task=e["prompt"], task_source="prompt")
    e["trajectory"] = {"tool_calls": {"Read": 1}, "steps": [step], "truncated": False}
    return e


def test_every_field_of_every_part_says_what_it_is() -> None:
    for part in ALL_PARTS:
        for mark in field_marks(part):  # raises for a field without doc(...)
            assert mark.description.strip() and "\n" not in mark.description, mark
    props = export_schema()["$defs"]["Proposal"]["properties"]
    assert all(p.get("description") for p in props.values())


def test_a_field_without_a_mark_is_refused() -> None:
    class Bare(msgspec.Struct):
        x: int

    with pytest.raises(TypeError, match="Bare.x has no doc"):
        field_marks(Bare)


def test_the_store_json_decodes_strictly_and_encodes_back_unchanged() -> None:
    episodes = [_local_episode(n) for n in range(5)]
    data = encode_episodes(episodes)
    assert json.loads(data) == episodes
    assert [msgspec.to_builtins(e) for e in decode_episodes(data)] == episodes
    unknown = copy.deepcopy(episodes[0])
    unknown["proposals"][0]["surprise"] = 1
    with pytest.raises(msgspec.ValidationError, match="surprise"):
        encode_episodes([unknown])
    wrong = copy.deepcopy(episodes[0])
    wrong["proposals"][0]["outcome"] = "great"
    with pytest.raises(msgspec.ValidationError, match=r"proposals\[0\]\.outcome"):
        encode_episodes([wrong])


def test_a_lone_surrogate_is_written_escaped() -> None:
    e = _local_episode()
    e["prompt"] = "fix \ud83d the emoji"
    assert b"\\ud83d" in encode_episodes([e])


def test_the_shipped_export_schema_is_the_contracts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert json.loads(canonical.SHIPPED_SCHEMA.read_text("utf-8")) == export_schema()
    assert write_schema.main(["--check"]) == 0
    stale = tmp_path / "episode.schema.json"
    stale.write_text(canonical.SHIPPED_SCHEMA.read_text().replace('"split"', '"sp1it"'))
    monkeypatch.setattr(write_schema, "SHIPPED_SCHEMA", stale)
    assert write_schema.main(["--check"]) == 1
    assert write_schema.main([]) == 0 and stale.read_text() == canonical.schema_text()


def test_the_collector_validates_with_the_contracts_schema() -> None:
    assert wire.batch_schema() == upload_schema()
    supported = {"type", "properties", "required", "additionalProperties", "items", "enum"}
    supported |= {"minimum", "maximum", "minLength", "maxLength", "pattern"}
    supported |= {"title", "description", "default"}

    def keys(node: Any) -> set[str]:
        if isinstance(node, list):
            return set().union(*map(keys, node)) if node else set()
        if not isinstance(node, dict):
            return set()
        found = set(node) - {"properties"}
        for key, value in node.items():
            found |= set().union(*map(keys, value.values())) if key == "properties" else keys(value)
        return found

    # only what the collector's compiled validator reads: no $ref, no anyOf left
    assert keys(wire.batch_schema()) <= supported


def test_inline_merges_nullable_alternatives_and_refuses_what_it_cannot() -> None:
    schema = {
        "$ref": "#/$defs/A",
        "$defs": {
            "A": {"type": "object", "properties": {"x": {"$ref": "#/$defs/B"}}},
            "B": {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "null"}]},
        },
    }
    assert inline(schema) == {
        "type": "object",
        "properties": {"x": {"type": ["integer", "null"], "minimum": 0}},
    }
    clash = {"anyOf": [{"type": "integer", "maximum": 1}, {"type": "number", "maximum": 2}]}
    with pytest.raises(ValueError, match="disagree on maximum"):
        inline(clash)
    assert inline({"anyOf": [{"enum": ["a"]}, {"type": "null"}]}) == {"enum": ["a", None]}


@pytest.mark.parametrize("level", list(Level))
def test_anonymized_episodes_are_what_the_contract_and_the_collector_accept(
    level: Level,
) -> None:
    anonymizer = Anonymizer(b"k" * 32, Identity(usernames=("dev",)))

    def named(part: type[msgspec.Struct]) -> set[str]:
        return {f.name for f in msgspec.structs.fields(shaped(part, "wire"))}

    for n in range(20):
        projection = anonymizer.project(_local_episode(n), WorkspacePolicy(level))
        assert projection.episode is not None and not projection.quarantine
        shared = projection.episode
        msgspec.convert(shared, upload_episode(), strict=True)
        VALIDATE({"episodes": [item(shared, level=level.value)]})
        # every field the anonymizer writes is one the contract names
        assert set(shared) <= named(Episode), set(shared) - named(Episode)
        assert set(shared["tests"]) <= named(TestsSummary)
        for p in shared["proposals"]:
            assert set(p) <= named(Proposal), set(p) - named(Proposal)
        for r in shared["test_runs"]:
            assert set(r) <= named(TestRun), set(r) - named(TestRun)


def _uploads() -> list[dict[str, Any]]:
    return [
        item(make_uploaded(f"e{n}", level=lv), level=lv) for n, lv in enumerate(vocabulary.LEVELS)
    ]


MUTATIONS = [
    lambda b: b["episodes"][0].update(revision="2"),
    lambda b: b["episodes"][0].update(revision=0),
    lambda b: b["episodes"][0].update(level="secret"),
    lambda b: b["episodes"][0]["episode"]["proposals"][0].update(similarity="high"),
    lambda b: b["episodes"][0]["episode"]["proposals"][0].update(similarity=1.5),
    lambda b: b["episodes"][0]["episode"]["proposals"][0].update(chars_added=-1),
    lambda b: b["episodes"][0]["episode"]["proposals"][0].update(tier={"tier": 3}),
    lambda b: b["episodes"][0]["episode"].update(started_at="yesterday"),
    lambda b: b["episodes"][0]["episode"].update(test_runs=[{"failing_ids": ["a", 3]}]),
    lambda b: b["episodes"][0]["episode"].pop("proposals"),
    lambda b: b["episodes"][0]["episode"].update(id="a b"),
    lambda b: b["episodes"][0]["episode"].update(prompt_chars="12"),
    lambda b: b.update(extra=1),
]


def test_the_collectors_validator_and_the_contracts_types_agree() -> None:
    batch_type = upload_batch()
    good = {"episodes": _uploads()}
    VALIDATE(good)
    msgspec.convert(good, batch_type, strict=True)
    # permissive where anonymization removes things, and for a newer client's fields
    lean = {
        "episodes": [
            item({"schema": "agent-capture/episode@1", "id": "x1", "proposals": [{}], "new": [1]})
        ]
    }
    VALIDATE(lean)
    msgspec.convert(lean, batch_type, strict=True)
    for mutate in MUTATIONS:
        bad = copy.deepcopy(good)
        mutate(bad)
        with pytest.raises(SchemaViolation):
            VALIDATE(bad)
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(bad, batch_type, strict=True)


def test_each_word_has_one_definition() -> None:
    assert ingest.TIERS is vocabulary.TIERS and wire.LEVELS is vocabulary.LEVELS
    assert (
        sync_levels.Level is vocabulary.Level
        and wire.SUPPORTED_SCHEMAS is vocabulary.SUPPORTED_SCHEMAS
    )
    # the collector keeps one column per tier
    columns = {f.name for f in fields(ingest.EpisodeMetrics)}
    assert {f"tier_{t}" for t in vocabulary.TIERS} <= columns
    # the transitions are the words summarize_tests writes
    written = set()
    for first, last in (
        ("failing", "passing"),
        ("passing", "failing"),
        ("passing", "passing"),
        ("failing", "failing"),
    ):
        runs = [LinkedRun("a", 1.0, first, LINK_OPEN), LinkedRun("b", 2.0, last, LINK_OPEN)]
        written.add(summarize_tests(runs, edited_files=(), settled_at=None).transition)
    assert written == {t.value for t in vocabulary.Transition}


def test_where_a_field_is_required_holds_in_each_shape() -> None:
    episode = export_schema()["$defs"]["Episode"]
    assert set(episode["required"]) == {
        "schema", "id", "agent", "proposals", "test_runs", "tier", "export_schema", "split"
    }  # fmt: skip
    uploaded = upload_schema()["properties"]["episodes"]["items"]["properties"]["episode"]
    assert set(uploaded["required"]) == {"schema", "id", "proposals"}
    always = [m.name for m in field_marks(Episode) if m.required is Required.ALWAYS]
    assert always == ["schema", "id", "proposals"]


def test_the_reference_page_names_every_field_and_word() -> None:
    page = schema_markdown()
    assert page == schema_markdown() and page.startswith("# Episode schema\n")
    for part in ALL_PARTS:
        for mark in field_marks(part):
            assert f"| `{mark.name}` |" in page, (part.__name__, mark.name)
    for words in (vocabulary.Outcome, vocabulary.State, vocabulary.Tier, vocabulary.Level):
        assert all(f"`{w.value}`" in page for w in words)
    assert all(reason in page for reason in vocabulary.TIER_REASONS)
    assert all(rule in page for rule in vocabulary.SHARE_RULES.values())
