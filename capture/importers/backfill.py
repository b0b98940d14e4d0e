"""Recording an agent's past sessions: the shell around the transcript readers and the judge.

Each transcript is recorded in one transaction: its edits as proposals marked `backfilled`
(source `import`) with outcomes judged at once, its test commands as test runs, grouped into
episodes by the agent's session and turn ids. Keys are the ones the live hooks use, so an edit
recorded by a hook is not recorded again, and importing twice adds nothing twice; files already
imported and unchanged since are skipped without being read.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path

from capture.config import Config
from capture.edits.hunks import LocatedHunk
from capture.edits.outcomes import Measurement
from capture.files import find_workspace, read_text
from capture.hooks.agents.facts import Stage
from capture.hooks.agents.patches import hunks_between, trim_context
from capture.importers.judge import Context, contexts_from_after, judge
from capture.importers.records import History, PastEdit, PastRun, Turn
from capture.model import HunkInput, Outcome, ProposalInput, State, TestRunInput
from capture.store.database import DeferredRollups, Observed, Settled, Store

__all__ = [
    "Caches",
    "GitHistory",
    "ImportStats",
    "Judged",
    "Prepared",
    "PreparedEdit",
    "import_files",
    "measures_of",
    "prepare",
    "record_history",
    "write",
]

SOURCE = "import"

Reader = Callable[[Iterable[str]], History]


class ImportStats:
    __slots__ = ("files", "skipped", "proposals", "rejected", "known", "runs", "outside", "bad")

    def __init__(self) -> None:
        self.files = 0  # read and recorded
        self.skipped = 0  # imported before and unchanged since
        self.proposals = 0
        self.rejected = 0
        self.known = 0  # recorded before (by a hook or an earlier import)
        self.runs = 0
        self.outside = 0  # edits of files outside any workspace
        self.bad = 0  # unreadable lines or files

    def summary(self) -> str:
        return (
            f"{self.files} file(s) imported, {self.skipped} unchanged since the last import; "
            f"{self.proposals} proposal(s) ({self.rejected} rejected), {self.runs} test run(s); "
            f"{self.known} already recorded, {self.outside} outside any workspace, "
            f"{self.bad} unreadable line(s)"
        )


class GitHistory:
    """Tracked files as the first commit after a moment left them: one `git log` per work
    tree (the files each commit touched), one `git show` per file version, all cached."""

    def __init__(self) -> None:
        self._logs: dict[str, tuple[float, dict[str, list[tuple[int, str]]]] | None] = {}
        self._show: dict[tuple[str, str, str], str | None] = {}
        self._trees: dict[str, bool] = {}  # whether a work tree root has .git

    def _git(self, root: str, *args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", "-C", root, *args], capture_output=True, timeout=120, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None
        if proc.returncode != 0:
            return None
        return proc.stdout.decode("utf-8", "replace")

    def _log(self, root: str, since: float) -> dict[str, list[tuple[int, str]]] | None:
        cached = self._logs.get(root, ())
        if cached is None:
            return None  # not a git work tree (or git is missing)
        if cached and cached[0] <= since:
            return cached[1]
        # commits since a day before the edits asked about, oldest first, with their files
        out = self._git(
            root,
            "log",
            "--reverse",
            "--no-renames",
            "--name-only",
            "--format=%x00%ct %H",
            f"--since={int(since) - 86400}",
        )
        if out is None:
            self._logs[root] = None
            return None
        files: dict[str, list[tuple[int, str]]] = {}
        for block in out.split("\0")[1:]:
            header, _, names = block.partition("\n")
            stamp, _, sha = header.partition(" ")
            if not stamp.isdigit():
                continue
            for name in names.split("\n"):
                if name:
                    files.setdefault(name, []).append((int(stamp), sha))
        self._logs[root] = (since, files)
        return files

    def after(self, root: str, relative: str, moment: float) -> tuple[str, str | None] | None:
        """(commit, text) of the first commit touching the file at or after `moment`."""
        if root not in self._trees:
            self._trees[root] = os.path.exists(os.path.join(root, ".git"))
        if not self._trees[root]:
            return None
        log = self._log(root, moment)
        if not log:
            return None
        commit = next((sha for t, sha in log.get(relative, ()) if t >= moment), None)
        if commit is None:
            return None
        show = (root, relative, commit)
        if show not in self._show:
            self._show[show] = self._git(root, "show", f"{commit}:{relative}")
        return commit, self._show[show]


def _inside(path: str, root: str) -> str | None:
    """`path` relative to `root` (both real paths), or None outside it. Strings, not pathlib:
    this runs for every edit of every transcript."""
    prefix = root.rstrip(os.sep) + os.sep
    if not path.startswith(prefix):
        return None
    relative = path[len(prefix) :]
    return relative.replace(os.sep, "/") if os.sep != "/" else relative


class Caches:
    def __init__(self, git: GitHistory) -> None:
        self.roots: dict[str, str] = {}
        self.texts: dict[str, str | None] = {}
        self.reals: dict[str, str] = {}
        self.git = git

    def real(self, path: str) -> str:
        if path not in self.reals:
            self.reals[path] = os.path.realpath(path)
        return self.reals[path]

    def root(self, cwd: str) -> str:
        if cwd not in self.roots:
            real = os.path.realpath(cwd)
            self.roots[cwd] = str(find_workspace(Path(real), Path(real)))
        return self.roots[cwd]

    def text(self, path: str) -> str | None:
        if path not in self.texts:
            self.texts[path] = read_text(Path(path))
        return self.texts[path]


def _contexts(past: PastEdit, hunks: list[HunkInput]) -> list[Context]:
    if past.after is not None:
        return contexts_from_after(past.after, hunks)
    if past.contexts is not None and len(past.contexts) == len(hunks):
        return list(past.contexts)
    return [(None, None)] * len(hunks)


# -- preparing (no database: runs in worker processes) -------------------------------------


class Judged:
    """Outcome of an applied past edit: the windows' (judged against `via`'s text) and the
    late check's (the file now)."""

    __slots__ = ("outcome", "reason", "sim", "ret", "via", "late_outcome", "late_sim", "late_ret")

    def __init__(
        self,
        outcome: Outcome,
        reason: str,
        sim: float | None,
        ret: float | None,
        via: str,
        late: tuple[Outcome, float | None, float | None],
    ) -> None:
        self.outcome = outcome
        self.reason = reason
        self.sim = sim
        self.ret = ret
        self.via = via
        self.late_outcome, self.late_sim, self.late_ret = late


class PreparedEdit:
    __slots__ = ("proposal", "located", "relative", "at", "judged")

    def __init__(
        self,
        proposal: ProposalInput,
        located: list[LocatedHunk],
        relative: str,
        at: float,
        judged: Judged | None,
    ) -> None:
        self.proposal = proposal
        self.located = located
        self.relative = relative
        self.at = at
        self.judged = judged


class PreparedRun:
    __slots__ = ("run", "turn")

    def __init__(self, run: TestRunInput, turn: Turn | None) -> None:
        self.run = run
        self.turn = turn


class Prepared:
    """One transcript, read and judged, ready to be written."""

    __slots__ = ("history", "edits", "runs", "outside")

    def __init__(self, history: History) -> None:
        self.history = history
        self.edits: list[PreparedEdit] = []
        self.runs: list[PreparedRun] = []
        self.outside = 0


def measures_of(measured: Measurement) -> tuple[float | None, float | None]:
    if measured.lost:
        return None, None
    return measured.similarity, measured.retention


def _prepare_edit(history: History, past: PastEdit, caches: Caches) -> PreparedEdit | None:
    edit = past.edit
    cwd = past.cwd or history.cwd
    path = caches.real(edit.path)
    root = caches.root(cwd) if cwd else None
    relative = _inside(path, root) if root else None
    if root is None or relative is None:
        return None
    hunks = edit.hunks
    if edit.written is not None and not edit.created_file and edit.original is not None:
        hunks = hunks_between(edit.original, edit.written)
    hunks = [trim_context(h) for h in hunks]
    turn = past.turn
    applied = edit.stage is Stage.APPLIED
    proposal = ProposalInput(
        path=path,
        workspace=root,
        agent=history.agent,
        hunks=hunks,
        state=State.APPLIED if applied else State.REJECTED,
        model=turn.model if turn else None,
        session_id=history.session_id,
        turn_id=turn.turn_id if turn else None,
        prompt=turn.prompt if turn else None,
        tool=edit.tool,
        tool_use_id=edit.tool_use_id,
        source=SOURCE,
        created_file=edit.created_file,
        backfilled=True,
        dedupe_key=edit.key,
        decided_by=None if applied else "tool-failure",
    )
    if not applied:
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        return PreparedEdit(proposal, located, relative, past.at, None)
    contexts = _contexts(past, hunks)
    now_text = caches.text(path)
    committed = caches.git.after(root, relative, past.at)
    # the windows are judged against the first commit after the edit when there is one (the
    # nearest later state on record), the late check against the file now
    gone = now_text is None and not os.path.lexists(path)
    created = edit.created_file
    if committed:
        located, measured, outcome, reason = judge(committed[1], hunks, contexts)
        via = "git"
    else:
        located, measured, outcome, reason = judge(
            now_text, hunks, contexts, gone=gone, created_file=created
        )
        via = SOURCE
    sim, ret = measures_of(measured)
    late = (outcome, sim, ret)
    if committed:
        _, late_measured, late_outcome, _ = judge(
            now_text, hunks, contexts, gone=gone, created_file=created
        )
        late = (late_outcome, *measures_of(late_measured))
    judged = Judged(outcome, reason, sim, ret, via, late)
    return PreparedEdit(proposal, located, relative, past.at, judged)


def _prepare_run(
    history: History, past: PastRun, caches: Caches, patterns: tuple[str, ...]
) -> PreparedRun | None:
    from capture.testruns.commands import runner_of
    from capture.testruns.summaries import parse_summary

    command = past.command
    cwd = past.cwd or history.cwd
    runner = runner_of(command.command, patterns)
    if runner is None or cwd is None:
        return None
    counts = parse_summary(command.output) if command.output else None
    run = TestRunInput(
        command=command.command,
        source=SOURCE,
        started_at=past.at,
        workspace=caches.root(cwd),
        name=runner if command.failure is None else f"{runner} ({command.failure})",
        cwd=caches.real(cwd),
        duration_s=command.duration_s,
        exit_code=command.exit_code,
        passed=counts.passed if counts else None,
        failed=counts.failed if counts else None,
        errors=counts.errors if counts else None,
        skipped=counts.skipped if counts else None,
        failing_ids=list(counts.failing_ids) if counts else [],
        dedupe_key=command.key,
    )
    return PreparedRun(run, past.turn)


def prepare(history: History, caches: Caches, patterns: tuple[str, ...]) -> Prepared:
    """Judge a transcript's edits and read its test commands (files and git, no database)."""
    prepared = Prepared(history)
    for past in history.edits:
        edit = _prepare_edit(history, past, caches)
        if edit is None:
            prepared.outside += 1
        else:
            prepared.edits.append(edit)
    for run in history.runs:
        ready = _prepare_run(history, run, caches, patterns)
        if ready is not None:
            prepared.runs.append(ready)
    return prepared


# -- writing (the main process, one transaction per batch of transcripts) -----------------


class _Episodes:
    """The workspaces and episodes of one transcript's records. A turn's episode is ensured
    once; its later records only move its last activity, written before anything reads it
    (`flush`): they come in time order and say the same model and prompt, so the rows end up
    as if each record had ensured it. Episodes without a turn id are found by time."""

    def __init__(self, store: Store, config: Config) -> None:
        self.store = store
        self.gap = config.episode_gap
        self.workspaces: dict[str, int] = {}
        self.turns: dict[tuple[str | None, ...], str] = {}
        self.moved: dict[str, float] = {}  # last activity not written yet, by episode

    def workspace(self, root: str, at: float) -> int:
        if root not in self.workspaces:
            self.workspaces[root] = self.store.ensure_workspace(root, at)
        return self.workspaces[root]

    def episode(
        self,
        root: str,
        at: float,
        *,
        agent: str,
        session_id: str | None,
        turn_id: str | None,
        model: str | None,
        prompt: str | None,
        source: str = SOURCE,
    ) -> tuple[int, str]:
        workspace_id = self.workspace(root, at)
        key = (agent, session_id, turn_id, model, prompt, source)
        if turn_id and key in self.turns:
            episode_id = self.turns[key]
            self.moved[episode_id] = max(self.moved.get(episode_id, at), at)
            return workspace_id, episode_id
        if not turn_id:
            self.flush()  # found by its last activity: every episode's must be written
        episode_id = self.store.ensure_episode(
            workspace_id=workspace_id,
            agent=agent,
            now=at,
            gap=self.gap,
            session_id=session_id,
            turn_id=turn_id,
            model=model,
            prompt=prompt,
            source=source,
        )
        if turn_id:
            self.turns[key] = episode_id
        return workspace_id, episode_id

    def flush(self) -> None:
        self.store.conn.executemany(
            "UPDATE episodes SET last_at = max(last_at, ?) WHERE id = ?",
            [(at, episode_id) for episode_id, at in self.moved.items()],
        )
        self.moved.clear()


def _known(store: Store, table: str, keys: list[str]) -> set[str]:
    """The keys among `keys` a row of `table` already has (a hook or an earlier import)."""
    found: set[str] = set()
    for start in range(0, len(keys), 500):
        chunk = keys[start : start + 500]
        marks = ",".join("?" * len(chunk))
        found.update(
            row[0]
            for row in store.conn.execute(
                f"SELECT dedupe_key FROM {table} WHERE dedupe_key IN ({marks})", chunk
            )
        )
    return found


def _write_edit(
    store: Store, config: Config, ready: PreparedEdit, now: float, episodes: _Episodes
) -> str:
    judged = ready.judged
    settled = None
    if judged is not None:
        settled = Settled(
            at=now,
            outcome=judged.outcome,
            reason=judged.reason,
            windows=Observed(judged.sim, judged.ret, judged.outcome, judged.via),
            late=Observed(judged.late_sim, judged.late_ret, judged.late_outcome, SOURCE),
        )
    # settled at once; its episode is settled once the whole transcript is in (write)
    proposal = ready.proposal
    return store.add_proposal(
        proposal,
        ready.located,
        relative_path=ready.relative,
        now=ready.at,
        windows=config.windows,
        late=config.late,
        gap=config.episode_gap,
        settled=settled,
        episode=episodes.episode(
            proposal.workspace,
            ready.at,
            agent=proposal.agent,
            session_id=proposal.session_id,
            turn_id=proposal.turn_id,
            model=proposal.model,
            prompt=proposal.prompt,
            source=proposal.source,
        ),
    )


def write(
    store: Store, config: Config, prepared: Prepared, *, now: float, stats: ImportStats
) -> None:
    """Record one prepared transcript, in one transaction (the caller's, when one is open)."""
    history = prepared.history
    stats.outside += prepared.outside
    with store.transaction():
        ensured = _Episodes(store, config)
        episodes: set[str] = set()
        recorded: list[str] = []
        known = _known(store, "proposals", [e.proposal.dedupe_key or "" for e in prepared.edits])
        for ready in prepared.edits:
            key = ready.proposal.dedupe_key or ""
            if key in known:
                stats.known += 1
                continue
            known.add(key)  # a transcript may tell one call twice
            recorded.append(_write_edit(store, config, ready, now, ensured))
            stats.proposals += 1
            stats.rejected += ready.judged is None
        runs_known = _known(store, "test_runs", [r.run.dedupe_key or "" for r in prepared.runs])
        for ready_run in prepared.runs:
            run = ready_run.run
            if run.dedupe_key in runs_known or run.workspace is None:
                continue
            runs_known.add(run.dedupe_key or "")
            run_id = store.add_test_run(run, now=run.started_at, link=False)
            stats.runs += 1
            turn = ready_run.turn
            _, episode = ensured.episode(
                run.workspace,
                run.started_at,
                agent=history.agent,
                session_id=history.session_id,
                turn_id=turn.turn_id if turn else None,
                model=turn.model if turn else None,
                prompt=turn.prompt if turn else None,
            )
            episodes.add(episode)
            store.conn.execute(
                "INSERT OR IGNORE INTO episode_test_runs (episode_id, test_run_id) VALUES (?, ?)",
                (episode, run_id),
            )
        for start in range(0, len(recorded), 500):
            chunk = recorded[start : start + 500]
            marks = ",".join("?" * len(chunk))
            episodes.update(
                row[0]
                for row in store.conn.execute(
                    f"SELECT DISTINCT episode_id FROM proposals WHERE id IN ({marks})", chunk
                )
            )
        ensured.flush()
        # a past session is over: its turns are closed episodes, settled when every proposal
        # has its outcome (all of them have, unless an earlier import left one open)
        store.conn.executemany(
            """UPDATE episodes SET ended_at = coalesce(ended_at, last_at),
               settled_at = CASE WHEN NOT EXISTS (SELECT 1 FROM proposals p WHERE
               p.episode_id = episodes.id AND p.settled_at IS NULL)
               THEN coalesce(settled_at, ?) ELSE settled_at END WHERE id = ?""",
            [(now, episode) for episode in sorted(episodes)],
        )


def record_history(
    store: Store, config: Config, history: History, *, now: float, stats: ImportStats
) -> None:
    """Judge and record one transcript (both steps in this process)."""
    caches = Caches(GitHistory())
    write(store, config, prepare(history, caches, config.test_commands), now=now, stats=stats)


# -- importing files -----------------------------------------------------------------------

#: worker processes judge transcripts while the main process writes; below this many files,
#: starting them costs more than it saves
PARALLEL_FROM = 16
BATCH_SECONDS = 0.5
#: the page cache of the writing connection while it imports (SQLite's own default: 2 MB)
CACHE_KIB = 64 * 1024

_worker: tuple[Reader, Caches, tuple[str, ...]] | None = None


def _init_worker(reader: Reader, patterns: tuple[str, ...]) -> None:
    global _worker
    _worker = (reader, Caches(GitHistory()), patterns)


def _read_and_prepare(path: str) -> Prepared | None:
    assert _worker is not None
    reader, caches, patterns = _worker
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            history = reader(fh)
    except OSError:
        return None
    prepared = prepare(history, caches, patterns)
    # what goes back to the writing process: the transcript's own text is not needed there
    history.edits, history.runs = [], []
    return prepared


def _imported(store: Store, importer: str) -> dict[str, tuple[int, int]]:
    return {
        row[0]: (row[1], row[2])
        for row in store.conn.execute(
            "SELECT path, size, mtime_ns FROM imported_files WHERE importer = ?", (importer,)
        )
    }


def import_files(
    store: Store,
    config: Config,
    importer: str,
    reader: Reader,
    files: Iterable[Path],
    *,
    now: float,
    advance: Callable[[], None] = lambda: None,
    workers: int | None = None,
) -> ImportStats:
    """Import transcripts; those imported before and unchanged since are skipped unread."""
    stats = ImportStats()
    seen = _imported(store, importer)
    todo: list[tuple[str, int, int]] = []
    for file in files:
        try:
            info = file.stat()
        except OSError:
            stats.bad += 1
            advance()
            continue
        name = str(file.resolve())
        if seen.get(name) == (info.st_size, info.st_mtime_ns):
            stats.skipped += 1
            advance()
            continue
        todo.append((name, info.st_size, info.st_mtime_ns))
    count = workers if workers is not None else min(os.cpu_count() or 1, 4)
    results: Iterable[Prepared | None]
    pool = None
    if count > 1 and len(todo) >= PARALLEL_FROM:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        pool = ProcessPoolExecutor(
            count, context, initializer=_init_worker, initargs=(reader, config.test_commands)
        )
        # chunks as large as keeps every worker busy: each one costs the writing process a
        # round of its result thread
        chunk = max(1, min(16, len(todo) // (4 * count)))
        results = pool.map(_read_and_prepare, [name for name, _, _ in todo], chunksize=chunk)
    else:
        _init_worker(reader, config.test_commands)
        results = (_read_and_prepare(name) for name, _, _ in todo)
    batch = _Batch(store)
    # a backfill inserts all over the tables' indexes: with SQLite's default 2 MB of cache
    # most of those pages would be read again for every row
    cache = store.conn.execute("PRAGMA cache_size").fetchone()[0]
    store.conn.execute(f"PRAGMA cache_size = {-CACHE_KIB}")
    try:
        for (name, size, mtime_ns), prepared in zip(todo, results, strict=True):
            if prepared is None:
                stats.bad += 1
            else:
                _write_one(
                    store, config, importer, prepared, name, size, mtime_ns, now, stats, batch
                )
            advance()
    finally:
        batch.close()
        store.conn.execute(f"PRAGMA cache_size = {int(cache)}")
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return stats


class _Batch:
    """One write transaction over several transcripts (committed every BATCH_SECONDS): a
    commit per small file would cost more than the file. The rollups of the proposals it
    inserts are added once at its end (the writes of a batch only insert proposals and
    checkpoints, never update them)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.opened = 0.0
        self.deferred: DeferredRollups | None = None

    def enter(self) -> None:
        import time

        if self.store.conn.in_transaction and time.monotonic() - self.opened > BATCH_SECONDS:
            self.close()
        if not self.store.conn.in_transaction:
            self.store.conn.execute("BEGIN IMMEDIATE")
            self.opened = time.monotonic()
            try:
                self.deferred = self.store.defer_rollups()
            except BaseException:
                self.store.conn.execute("ROLLBACK")  # never commit half the triggers dropped
                raise

    def close(self) -> None:
        deferred, self.deferred = self.deferred, None
        if not self.store.conn.in_transaction:
            return  # rolled back by SQLite: the triggers are back with the rest
        try:
            if deferred is not None:
                self.store.catch_up_rollups(deferred)
        except BaseException:
            self.store.conn.execute("ROLLBACK")
            raise
        self.store.conn.execute("COMMIT")


def _write_one(
    store: Store,
    config: Config,
    importer: str,
    prepared: Prepared,
    name: str,
    size: int,
    mtime_ns: int,
    now: float,
    stats: ImportStats,
    batch: _Batch,
) -> None:
    stats.bad += prepared.history.bad_lines
    before = stats.proposals
    batch.enter()
    # a savepoint per file: one that fails leaves the others of the batch recorded
    store.conn.execute("SAVEPOINT transcript")
    try:
        write(store, config, prepared, now=now, stats=stats)
        store.conn.execute(
            """INSERT INTO imported_files (importer, path, size, mtime_ns, imported_at,
               proposals) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (importer, path) DO UPDATE
               SET size = excluded.size, mtime_ns = excluded.mtime_ns,
               imported_at = excluded.imported_at, proposals = excluded.proposals""",
            (importer, name, size, mtime_ns, now, stats.proposals - before),
        )
    except BaseException:
        store.conn.execute("ROLLBACK TO transcript")
        store.conn.execute("RELEASE transcript")
        raise
    store.conn.execute("RELEASE transcript")
    stats.files += 1
