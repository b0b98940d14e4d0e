"""Hook payload logs split into payloads (what `capture import hooks` feeds to `capture hook`)."""

from __future__ import annotations

import json

from capture.importers.hook_logs import payloads_in


def test_a_json_array_log_gives_its_objects_in_order() -> None:
    log = json.dumps([{"a": 1}, "not an object", {"b": "\\ud83d"}], indent=2)
    payloads, bad = payloads_in("post_tool_use.json", log)
    assert [json.loads(p) for p in payloads] == [{"a": 1}, {"b": "\\ud83d"}]
    assert bad == 1


def test_a_single_payload_and_json_lines() -> None:
    assert payloads_in("one.json", '{"x": 1}') == (['{"x": 1}'], 0)
    lines = '{"x": 1}\n\nnot json\n[1]\n{"y": 2}\n'
    assert payloads_in("hooks.jsonl", lines) == (['{"x": 1}', '{"y": 2}'], 2)
    assert payloads_in("broken.json", "{") == ([], 1)
