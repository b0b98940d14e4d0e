"""Rollups of test runs and of each episode's test history, kept current by triggers (part of
migration m006_report, like `capture.store.proposal_rollups`: never change what these functions
return).

- `report_tests`: per (dimension, span, bucket of the run's start, the run's workspace, value),
  the test runs that followed an agent edit: each run counted once per value of the episodes it
  followed (two episodes of one agent: once for that agent), with how many had a result and how
  many passed. Dimensions `agent`, `model` and `all`; runs are not split by language.
- `report_episodes`: one row per episode with linked runs: when its first linked run started,
  when its first edit was applied, whether a linked run failed, and whether a later linked run of
  the same command then passed (a repair). Rebuilt for an episode whenever one of its links,
  runs, proposals or its own fields change.
"""

from __future__ import annotations

from capture.store.proposal_rollups import SPANS

__all__ = ["RUN_COLUMNS", "RUN_DIMENSIONS", "run_passed_sql", "run_rollup_statements"]

RUN_DIMENSIONS = ("agent", "model", "all")
RUN_COLUMNS = ("runs", "with_result", "passed")

_DIMS_SQL = " UNION ALL ".join(
    f"SELECT '{d}' AS dim" if i == 0 else f"SELECT '{d}'" for i, d in enumerate(RUN_DIMENSIONS)
)
_SPANS_SQL = " UNION ALL ".join(
    f"SELECT {s} AS span" if i == 0 else f"SELECT {s}" for i, s in enumerate(SPANS)
)
_TARGETS = f"({_DIMS_SQL}) d, ({_SPANS_SQL}) s"


def run_passed_sql(t: str) -> str:
    """1 when run row `t` passed, 0 when it failed, NULL when it told nothing either way: exit
    code 0 and no failure or error; without an exit code, no failure or error among counts."""
    bad = f"coalesce({t}.failed, 0) + coalesce({t}.errors, 0)"
    return (
        f"(CASE WHEN {t}.exit_code IS NOT NULL THEN ({t}.exit_code = 0 AND {bad} = 0) "
        f"WHEN {t}.failed IS NOT NULL OR {t}.errors IS NOT NULL OR {t}.passed IS NOT NULL "
        f"THEN ({bad} = 0) END)"
    )


def _value(e: str) -> str:
    return (
        f"(CASE d.dim WHEN 'agent' THEN {e}.agent WHEN 'model' THEN coalesce({e}.model, '') "
        "ELSE '' END)"
    )


def _upsert(t: str, value: str, sign: str, source: str, group: str = "") -> str:
    """Add (sign '') or remove ('-') run row `t` once per row of `source` (which brings `t`, the
    dimensions `d`, the spans `s` and whatever `value` reads)."""
    passed = run_passed_sql(t)
    updates = ", ".join(f"{c} = {c} + excluded.{c}" for c in RUN_COLUMNS)
    return (
        "INSERT INTO report_tests (dim, span, bucket, workspace_id, value, runs, with_result, "
        f"passed) SELECT d.dim, s.span, CAST({t}.started_at / s.span AS INTEGER), "
        f"coalesce({t}.workspace_id, 0), {value}, {sign}1, {sign}({passed} IS NOT NULL), "
        f"{sign}coalesce({passed}, 0) FROM {source}{group} "
        "ON CONFLICT (dim, span, bucket, workspace_id, value) "
        f"DO UPDATE SET {updates}"
    )


def _other_link_has(run_id: str, episode_id: str, value: str) -> str:
    """SQL true when run `run_id` follows another episode than `episode_id` with this value."""
    return (
        "EXISTS (SELECT 1 FROM episode_test_runs l2 JOIN episodes e2 ON e2.id = l2.episode_id "
        f"WHERE l2.test_run_id = {run_id} AND l2.episode_id != {episode_id} "
        f"AND {_value('e2')} = {value})"
    )


def _link_change(link: str, sign: str) -> str:
    value = _value("e")
    return _upsert(
        "t",
        value,
        sign,
        f"test_runs t, episodes e, {_TARGETS} WHERE t.id = {link}.test_run_id "
        f"AND e.id = {link}.episode_id "
        f"AND NOT {_other_link_has(link + '.test_run_id', link + '.episode_id', value)}",
    )


def _run_change(t: str, sign: str) -> str:
    # Once per distinct value among the episodes the run followed.
    return _upsert(
        t,
        _value("e"),
        sign,
        f"episode_test_runs l JOIN episodes e ON e.id = l.episode_id, {_TARGETS} "
        f"WHERE l.test_run_id = NEW.id",
        " GROUP BY 1, 2, 5",
    )


def _episode_change(e: str, sign: str) -> str:
    value = _value(e)
    return _upsert(
        "t",
        value,
        sign,
        f"episode_test_runs l JOIN test_runs t ON t.id = l.test_run_id, {_TARGETS} "
        f"WHERE l.episode_id = NEW.id AND NOT {_other_link_has('l.test_run_id', 'NEW.id', value)}",
    )


def _refresh_episodes(ids: str) -> list[str]:
    """Rebuild the report_episodes rows of the episodes whose ids `ids` (a SQL list) gives."""
    fail, ok = run_passed_sql("f"), run_passed_sql("r")
    return [
        f"DELETE FROM report_episodes WHERE episode_id IN ({ids})",
        f"""INSERT INTO report_episodes (episode_id, started_at, workspace_id, agent, model,
            first_run_at, first_edit_at, failing, repaired)
            SELECT e.id, e.started_at, coalesce(e.workspace_id, 0), e.agent,
            coalesce(e.model, ''), min(t.started_at),
            (SELECT min(p.applied_at) FROM proposals p
             WHERE p.episode_id = e.id AND p.applied_at IS NOT NULL),
            coalesce(max({run_passed_sql("t")} = 0), 0),
            EXISTS (SELECT 1 FROM episode_test_runs lf JOIN test_runs f ON f.id = lf.test_run_id
                    JOIN episode_test_runs lr ON lr.episode_id = lf.episode_id
                    JOIN test_runs r ON r.id = lr.test_run_id
                    WHERE lf.episode_id = e.id AND r.command = f.command AND {fail} = 0
                    AND {ok} = 1 AND r.started_at > f.started_at)
            FROM episodes e JOIN episode_test_runs l ON l.episode_id = e.id
            JOIN test_runs t ON t.id = l.test_run_id
            WHERE e.id IN ({ids}) GROUP BY e.id""",
    ]


def _link_added(link: str) -> str:
    """Fold one new link into its episode's row: O(links of the episode), not a rebuild."""
    r, f = run_passed_sql("t"), run_passed_sql("o")
    other = (
        "EXISTS (SELECT 1 FROM episode_test_runs lo JOIN test_runs o ON o.id = lo.test_run_id "
        f"WHERE lo.episode_id = {link}.episode_id AND lo.test_run_id != t.id "
        "AND o.command = t.command AND {cond})"
    )
    earlier_fail = other.format(cond=f"{f} = 0 AND o.started_at < t.started_at")
    later_pass = other.format(cond=f"{f} = 1 AND o.started_at > t.started_at")
    return f"""INSERT INTO report_episodes (episode_id, started_at, workspace_id, agent, model,
        first_run_at, first_edit_at, failing, repaired)
        SELECT e.id, e.started_at, coalesce(e.workspace_id, 0), e.agent, coalesce(e.model, ''),
        t.started_at,
        (SELECT min(p.applied_at) FROM proposals p
         WHERE p.episode_id = e.id AND p.applied_at IS NOT NULL),
        coalesce({r} = 0, 0),
        CASE WHEN {r} = 1 THEN {earlier_fail} WHEN {r} = 0 THEN {later_pass} ELSE 0 END
        FROM episodes e, test_runs t WHERE e.id = {link}.episode_id AND t.id = {link}.test_run_id
        ON CONFLICT (episode_id) DO UPDATE SET
        first_run_at = min(coalesce(first_run_at, excluded.first_run_at), excluded.first_run_at),
        failing = max(failing, excluded.failing), repaired = max(repaired, excluded.repaired)"""


def _first_edit(episode_id: str) -> str:
    return (
        "UPDATE report_episodes SET first_edit_at = (SELECT min(p.applied_at) FROM proposals p "
        f"WHERE p.episode_id = {episode_id} AND p.applied_at IS NOT NULL) "
        f"WHERE episode_id = {episode_id}"
    )


_RUN_RESULT_CHANGED = (
    "OLD.exit_code IS NOT NEW.exit_code OR OLD.failed IS NOT NEW.failed "
    "OR OLD.errors IS NOT NEW.errors OR OLD.passed IS NOT NEW.passed "
    "OR OLD.started_at IS NOT NEW.started_at OR OLD.workspace_id IS NOT NEW.workspace_id "
    "OR OLD.command IS NOT NEW.command"
)
_EPISODE_CHANGED = (
    "OLD.agent IS NOT NEW.agent OR OLD.model IS NOT NEW.model "
    "OR OLD.workspace_id IS NOT NEW.workspace_id OR OLD.started_at IS NOT NEW.started_at"
)


def _trigger(name: str, when: str, body: list[str]) -> str:
    return f"CREATE TRIGGER {name} {when} BEGIN\n" + "".join(f"{b};\n" for b in body) + "END"


def run_rollup_statements() -> list[str]:
    linked_to_run = "SELECT episode_id FROM episode_test_runs WHERE test_run_id = NEW.id"
    return [
        """CREATE TABLE report_tests (
            dim TEXT NOT NULL,
            span INTEGER NOT NULL,
            bucket INTEGER NOT NULL,
            workspace_id INTEGER NOT NULL,
            value TEXT NOT NULL,
            runs INTEGER NOT NULL DEFAULT 0,
            with_result INTEGER NOT NULL DEFAULT 0,
            passed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (dim, span, bucket, workspace_id, value)
        ) WITHOUT ROWID""",
        """CREATE TABLE report_episodes (
            episode_id TEXT PRIMARY KEY,
            started_at REAL NOT NULL,
            workspace_id INTEGER NOT NULL,
            agent TEXT NOT NULL,
            model TEXT NOT NULL,
            first_run_at REAL,
            first_edit_at REAL,
            failing INTEGER NOT NULL,
            repaired INTEGER NOT NULL
        ) WITHOUT ROWID""",
        """CREATE INDEX report_episodes_started ON report_episodes(started_at, workspace_id,
            agent, model, failing, repaired, first_run_at, first_edit_at)""",
        _trigger(
            "report_link_insert",
            "AFTER INSERT ON episode_test_runs",
            [_link_change("NEW", ""), _link_added("NEW")],
        ),
        _trigger(
            "report_link_delete",
            "AFTER DELETE ON episode_test_runs",
            [_link_change("OLD", "-"), *_refresh_episodes("OLD.episode_id")],
        ),
        _trigger(
            "report_run_update",
            f"AFTER UPDATE ON test_runs WHEN {_RUN_RESULT_CHANGED}",
            [_run_change("OLD", "-"), _run_change("NEW", ""), *_refresh_episodes(linked_to_run)],
        ),
        _trigger(
            "report_episode_update",
            f"AFTER UPDATE ON episodes WHEN {_EPISODE_CHANGED}",
            [_episode_change("OLD", "-"), _episode_change("NEW", ""), *_refresh_episodes("NEW.id")],
        ),
        _trigger(
            "report_episode_edit_insert",
            "AFTER INSERT ON proposals WHEN NEW.applied_at IS NOT NULL",
            [_first_edit("NEW.episode_id")],
        ),
        _trigger(
            "report_episode_edit_update",
            "AFTER UPDATE ON proposals WHEN OLD.applied_at IS NOT NEW.applied_at "
            "OR OLD.episode_id IS NOT NEW.episode_id",
            [_first_edit("OLD.episode_id"), _first_edit("NEW.episode_id")],
        ),
        _trigger(
            "report_episode_edit_delete",
            "AFTER DELETE ON proposals WHEN OLD.applied_at IS NOT NULL",
            [_first_edit("OLD.episode_id")],
        ),
        # Backfill what older versions recorded.
        f"""INSERT INTO report_tests (dim, span, bucket, workspace_id, value, runs, with_result,
            passed)
            SELECT dim, span, CAST(started_at / span AS INTEGER), ws, value, count(*),
            count(result), coalesce(sum(result), 0) FROM (
                SELECT DISTINCT d.dim, s.span, t.id, t.started_at,
                coalesce(t.workspace_id, 0) AS ws, {_value("e")} AS value,
                {run_passed_sql("t")} AS result
                FROM episode_test_runs l JOIN test_runs t ON t.id = l.test_run_id
                JOIN episodes e ON e.id = l.episode_id, {_TARGETS})
            GROUP BY dim, span, 3, ws, value""",
        _refresh_episodes("SELECT DISTINCT episode_id FROM episode_test_runs")[1],
    ]
