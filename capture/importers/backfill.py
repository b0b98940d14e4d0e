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

from capture.agents.facts import Stage
from capture.agents.patches import hunks_between, trim_context
from capture.config import Config
from capture.files import find_workspace, read_text
from capture.hunks import LocatedHunk
from capture.importers.judge import Context, contexts_from_after, judge
from capture.importers.records import History, PastEdit, PastRun, Turn
from capture.model import HunkInput, ProposalInput, State, TestRunInput
from capture.store import Store

__all__ = ["GitHistory", "ImportStats", "import_files", "record_history"]

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
        if not os.path.exists(os.path.join(root, ".git")):
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


class _Caches:
    def __init__(self, git: GitHistory) -> None:
        self.roots: dict[str, str] = {}
        self.texts: dict[str, str | None] = {}
        self.git = git

    def root(self, cwd: str) -> str:
        if cwd not in self.roots:
            real = os.path.realpath(cwd)
            self.roots[cwd] = str(find_workspace(Path(real), Path(real)))
        return self.roots[cwd]

    def text(self, path: str) -> str | None:
        if path not in self.texts:
            self.texts[path] = read_text(Path(path))
        return self.texts[path]


def _episode(
    store: Store, config: Config, history: History, workspace_id: int, turn: Turn | None, at: float
) -> str:
    return store.ensure_episode(
        workspace_id=workspace_id,
        agent=history.agent,
        now=at,
        gap=config.episode_gap,
        session_id=history.session_id,
        turn_id=turn.turn_id if turn else None,
        model=turn.model if turn else None,
        prompt=turn.prompt if turn else None,
        source=SOURCE,
    )


def _contexts(past: PastEdit, hunks: list[HunkInput]) -> list[Context]:
    if past.after is not None:
        return contexts_from_after(past.after, hunks)
    if past.contexts is not None and len(past.contexts) == len(hunks):
        return list(past.contexts)
    return [(None, None)] * len(hunks)


def _record_edit(
    store: Store,
    config: Config,
    history: History,
    past: PastEdit,
    caches: _Caches,
    stats: ImportStats,
    now: float,
) -> str | None:
    edit = past.edit
    cwd = past.cwd or history.cwd
    path = os.path.realpath(edit.path)
    root = caches.root(cwd) if cwd else None
    relative = _inside(path, root) if root else None
    if root is None or relative is None:
        stats.outside += 1
        return None
    if store.conn.execute("SELECT 1 FROM proposals WHERE dedupe_key = ?", (edit.key,)).fetchone():
        stats.known += 1
        return None
    hunks = edit.hunks
    if edit.written is not None and not edit.created_file and edit.original is not None:
        hunks = hunks_between(edit.original, edit.written)
    hunks = [trim_context(h) for h in hunks]
    turn = past.turn
    proposal = ProposalInput(
        path=path,
        workspace=root,
        agent=history.agent,
        hunks=hunks,
        state=State.APPLIED if edit.stage is Stage.APPLIED else State.REJECTED,
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
        decided_by="tool-failure" if edit.stage is not Stage.APPLIED else None,
    )
    if proposal.state is State.REJECTED:
        located = [LocatedHunk(h.old_text, h.new_text, None) for h in hunks]
        stats.rejected += 1
        return _add(store, config, proposal, located, relative, past.at)
    contexts = _contexts(past, hunks)
    now_text = caches.text(path)
    committed = caches.git.after(root, relative, past.at)
    # the windows are judged against the first commit after the edit when there is one (the
    # nearest later state on record), the late check against the file now
    window_text, via = (committed[1], "git") if committed else (now_text, SOURCE)
    located, measured, outcome, reason = judge(window_text, hunks, contexts)
    proposal_id = _add(store, config, proposal, located, relative, past.at)
    sim = None if measured.lost else measured.similarity
    ret = None if measured.lost else measured.retention
    store.conn.execute(
        """UPDATE checkpoints SET observed_at = ?, similarity = ?, retention = ?, outcome = ?,
           via = ? WHERE proposal_id = ? AND window != 'late'""",
        (now, sim, ret, outcome.value, via, proposal_id),
    )
    if committed:
        _, late_measured, late_outcome, _ = judge(now_text, hunks, contexts)
        late_sim = None if late_measured.lost else late_measured.similarity
        late_ret = None if late_measured.lost else late_measured.retention
    else:
        late_outcome, late_sim, late_ret = outcome, sim, ret
    store.conn.execute(
        """UPDATE checkpoints SET observed_at = ?, similarity = ?, retention = ?, outcome = ?,
           via = ? WHERE proposal_id = ? AND window = 'late'""",
        (now, late_sim, late_ret, late_outcome.value, SOURCE, proposal_id),
    )
    store.set_outcome(
        proposal_id, outcome=outcome, reason=reason, similarity=sim, retention=ret, settled_at=now
    )
    return proposal_id


def _add(
    store: Store,
    config: Config,
    proposal: ProposalInput,
    located: list[LocatedHunk],
    relative: str,
    at: float,
) -> str:
    return store.add_proposal(
        proposal,
        located,
        relative_path=relative,
        now=at,
        windows=config.windows,
        late=config.late,
        gap=config.episode_gap,
    )


def _record_run(
    store: Store,
    config: Config,
    history: History,
    past: PastRun,
    caches: _Caches,
    stats: ImportStats,
) -> None:
    from capture.summaries import parse_summary
    from capture.testcommands import runner_of

    command = past.command
    runner = runner_of(command.command, config.test_commands)
    cwd = past.cwd or history.cwd
    if runner is None or cwd is None:
        return
    if store.conn.execute(
        "SELECT 1 FROM test_runs WHERE dedupe_key = ?", (command.key,)
    ).fetchone():
        return
    root = caches.root(cwd)
    counts = parse_summary(command.output) if command.output else None
    run = TestRunInput(
        command=command.command,
        source=SOURCE,
        started_at=past.at,
        workspace=root,
        name=runner if command.failure is None else f"{runner} ({command.failure})",
        cwd=os.path.realpath(cwd),
        duration_s=command.duration_s,
        exit_code=command.exit_code,
        passed=counts.passed if counts else None,
        failed=counts.failed if counts else None,
        errors=counts.errors if counts else None,
        skipped=counts.skipped if counts else None,
        failing_ids=list(counts.failing_ids) if counts else [],
        dedupe_key=command.key,
    )
    run_id = store.add_test_run(run, now=past.at)
    stats.runs += 1
    workspace_id = store.ensure_workspace(root, past.at)
    episode = _episode(store, config, history, workspace_id, past.turn, past.at)
    store.conn.execute(
        "INSERT OR IGNORE INTO episode_test_runs (episode_id, test_run_id) VALUES (?, ?)",
        (episode, run_id),
    )


def record_history(
    store: Store,
    config: Config,
    history: History,
    *,
    now: float,
    caches: _Caches,
    stats: ImportStats,
) -> None:
    """Record one transcript, in one transaction."""
    with store.transaction():
        recorded: list[str] = []
        for past in history.edits:
            proposal_id = _record_edit(store, config, history, past, caches, stats, now)
            if proposal_id is not None:
                stats.proposals += 1
                recorded.append(proposal_id)
        for run in history.runs:
            _record_run(store, config, history, run, caches, stats)
        # a past session is over: its turns are closed episodes
        for start in range(0, len(recorded), 500):
            chunk = recorded[start : start + 500]
            marks = ",".join("?" * len(chunk))
            store.conn.execute(
                f"""UPDATE episodes SET ended_at = coalesce(ended_at, last_at) WHERE id IN
                    (SELECT episode_id FROM proposals WHERE id IN ({marks}))""",
                chunk,
            )


def _already(store: Store, importer: str, path: str, size: int, mtime_ns: int) -> bool:
    row = store.conn.execute(
        "SELECT size, mtime_ns FROM imported_files WHERE importer = ? AND path = ?",
        (importer, path),
    ).fetchone()
    return row is not None and (row[0], row[1]) == (size, mtime_ns)


def import_files(
    store: Store,
    config: Config,
    importer: str,
    reader: Reader,
    files: Iterable[Path],
    *,
    now: float,
    advance: Callable[[], None] = lambda: None,
) -> ImportStats:
    stats = ImportStats()
    caches = _Caches(GitHistory())
    batch = _Batch(store)
    try:
        for file in files:
            _import_one(store, config, importer, reader, file, now, caches, stats, batch)
            advance()
    finally:
        batch.close()
    return stats


class _Batch:
    """One write transaction over several transcripts (committed every BATCH_SECONDS): a
    commit per small file would cost more than the file."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.opened = 0.0

    def enter(self) -> None:
        import time

        if self.store.conn.in_transaction and time.monotonic() - self.opened > BATCH_SECONDS:
            self.store.conn.execute("COMMIT")
        if not self.store.conn.in_transaction:
            self.store.conn.execute("BEGIN IMMEDIATE")
            self.opened = time.monotonic()

    def close(self) -> None:
        if self.store.conn.in_transaction:
            self.store.conn.execute("COMMIT")


BATCH_SECONDS = 0.5


def _import_one(
    store: Store,
    config: Config,
    importer: str,
    reader: Reader,
    file: Path,
    now: float,
    caches: _Caches,
    stats: ImportStats,
    batch: _Batch,
) -> None:
    try:
        info = file.stat()
        name = str(file.resolve())
        if _already(store, importer, name, info.st_size, info.st_mtime_ns):
            stats.skipped += 1
            return
        with file.open(encoding="utf-8", errors="replace") as fh:
            history = reader(fh)
    except OSError:
        stats.bad += 1
        return
    stats.bad += history.bad_lines
    before = stats.proposals
    batch.enter()
    # a savepoint per file: one that fails leaves the others of the batch recorded
    store.conn.execute("SAVEPOINT transcript")
    try:
        record_history(store, config, history, now=now, caches=caches, stats=stats)
        store.conn.execute(
            """INSERT INTO imported_files (importer, path, size, mtime_ns, imported_at,
               proposals) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (importer, path) DO UPDATE
               SET size = excluded.size, mtime_ns = excluded.mtime_ns,
               imported_at = excluded.imported_at, proposals = excluded.proposals""",
            (importer, name, info.st_size, info.st_mtime_ns, now, stats.proposals - before),
        )
    except BaseException:
        store.conn.execute("ROLLBACK TO transcript")
        store.conn.execute("RELEASE transcript")
        raise
    store.conn.execute("RELEASE transcript")
    stats.files += 1
