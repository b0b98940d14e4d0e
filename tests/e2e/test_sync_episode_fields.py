"""What the outcomes work writes after an episode settled (rules versions, reasons, lateness, a
test run seen by a second source) makes a new revision, and the upload contract types it.

Real store, real anonymizer, real outbox; the collector's own validator judges the bodies."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from capture.config import load_config
from capture.store.database import Store
from sync.collector.errors import ApiError
from sync.collector.ingest import check_batch
from sync.collector.limits import Limits
from sync.collector.validation import compile_schema
from sync.collector.wire import batch_schema
from sync.outbox import Outbox, body_for
from sync.service import fill_outbox
from sync.settings import enable, load_settings
from tests.support.synthetic_episodes import make_episode, write_episodes

VALIDATE = compile_schema(batch_schema())


def _latest(store: Store, episode_id: str) -> tuple[int, dict[str, Any]]:
    row = Outbox(store.conn).last_row(episode_id)
    assert row is not None
    return int(row["revision"]), json.loads(row["payload"])


def _refresh(store: Store) -> None:
    fill_outbox(store, load_config(), load_settings(store.conn), now=time.time())


@pytest.mark.parametrize("level", ["metrics", "redacted"])
def test_late_outcome_fields_make_a_new_revision_with_numbers_at_every_level(
    tmp_path: Path, capture_home: Path, level: str
) -> None:
    ws = tmp_path / "ws"
    rng = random.Random(21)
    episode = make_episode(rng, 1, root=str(ws))
    while not episode["test_runs"]:
        episode = make_episode(rng, 1, root=str(ws))
    with Store.open(load_config().paths.db) as store:
        write_episodes(store, [episode], now=0.0)
        with store.transaction():
            enable(store.conn, now=1.0, root=str(ws), url="http://127.0.0.1:9", token="t",
                   level=level)  # fmt: skip
        _refresh(store)
        assert _latest(store, episode["id"])[0] == 1

        # A second source reports the same test run: merged into it, the count unchanged.
        with store.transaction():
            store.conn.execute(
                "UPDATE test_runs SET seen_by = 'wrapper,hook', shell_exit_code = 3 WHERE id = ?",
                (episode["test_runs"][0]["id"],),
            )
        _refresh(store)
        revision, sent = _latest(store, episode["id"])
        assert revision == 2
        assert sent["test_runs"][0]["shell_exit_code"] == 3

        # The outcome rules relabel a proposal under a new rules version.
        with store.transaction():
            store.conn.execute(
                "UPDATE proposals SET rules_version = 2 WHERE episode_id = ?", (episode["id"],)
            )
        _refresh(store)
        revision, sent = _latest(store, episode["id"])
        assert revision == 3
        assert {p["rules_version"] for p in sent["proposals"]} == {2}

        # Every revision is a body the collector's contract accepts.
        rows = [r for r in Outbox(store.conn).queued()]
        items = check_batch(json.loads(body_for(rows)), VALIDATE, Limits().max_batch)
        assert [i["revision"] for i in items] == [3]


def test_the_contract_types_the_new_fields() -> None:
    rng = random.Random(2)
    episode = make_episode(rng, 2)
    while not episode["test_runs"]:
        episode = make_episode(rng, 2)
    proposal = episode["proposals"][0]
    proposal["rules_version"] = 2
    proposal["checkpoints"][0].update(reason="old text back", rules_version=2, late_seconds=4.5)
    episode["test_runs"][0].update(seen_by=["hook", "wrapper"], shell_exit_code=1)
    body = {"episodes": [{"id": episode["id"], "revision": 1,
                          "idempotency_key": f"{episode['id']}:1", "level": "redacted",
                          "episode": episode}]}  # fmt: skip
    VALIDATE(body)
    for mutate, field in (
        (lambda e: e["proposals"][0].update(rules_version="2"), "proposals[0].rules_version"),
        (lambda e: e["proposals"][0].update(rules_version=0), "proposals[0].rules_version"),
        (
            lambda e: e["proposals"][0]["checkpoints"][0].update(late_seconds="late"),
            "proposals[0].checkpoints[0].late_seconds",
        ),
        (lambda e: e["test_runs"][0].update(shell_exit_code=1.5), "test_runs[0].shell_exit_code"),
        (lambda e: e["test_runs"][0].update(seen_by=[1]), "test_runs[0].seen_by[0]"),
    ):
        bad = json.loads(json.dumps(body))
        mutate(bad["episodes"][0]["episode"])
        with pytest.raises(ApiError) as info:
            check_batch(bad, VALIDATE, 10)
        assert info.value.status == 422
        assert info.value.field == f"episodes[0].episode.{field}", info.value.field
