"""Late signals: what became of an agent's lines after the windows, decided from plain values.

The shell (`capture.recording.late_git`) reads the repository: the commits that touched the
edited file after the edit (renames followed), each one's text of the file, the lines a fix
deleted and whom they blame to. These functions decide what that means:

- survival to commit: the first commit after the edit that brought any of the agent's added
  lines into the file (holds more copies of them than the file as committed before the edit);
  `committed` counts how many it brought;
- churn within 14 and 30 days: the share of the committed lines no longer in the file at the
  last commit within that many days of the commit (deleted or changed; a deleted file churns
  every line);
- revert: a commit whose message says `This reverts commit <sha>` of the commit that carried
  the lines (or whose subject is `Revert "<that commit's subject>"`), or a commit after which
  none of the agent's lines are left and every line the edit removed is back;
- fix-after: a later commit whose message marks it as a fix (`FIX_WORDS`) and which deleted at
  least one line that blames back to the commit that carried the agent's lines (SZZ);
- static deltas at commit: syntax errors the commit added to the file (counted by the shell with
  tree-sitter), TODO/FIXME/HACK/XXX markers in the agent's committed lines beyond the ones the
  edit removed.

Lines are compared stripped of surrounding whitespace, blank lines left out, as multisets: a
re-indented line is the same line, two copies of a line are two lines.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "CHURN_DAYS",
    "CONVENTIONAL_TYPES",
    "DAY",
    "FIX_WORDS",
    "MARKERS",
    "Commit",
    "FileAtCommit",
    "LateSignals",
    "added_lines",
    "churn_share",
    "file_commits",
    "find_commit",
    "gained",
    "is_fix_message",
    "lines_back",
    "markers_added",
    "measure",
    "present",
    "reverted_shas",
    "revert_subject",
    "window_end",
]

DAY = 86400.0
#: the churn windows, in days after the commit that carried the agent's lines
CHURN_DAYS = (14, 30)
#: words that mark a commit's subject line as a fix (whole words, any case); never read in the
#: body, where a feature commit may well mention "regression tests"
FIX_WORDS = ("fix", "fixes", "fixed", "fixing", "bugfix", "hotfix", "bug", "regression", "repair")
#: conventional-commit types: a subject that names one is a fix only when it is `fix`
CONVENTIONAL_TYPES = frozenset(
    {"feat", "fix", "docs", "style", "refactor", "perf", "test", "tests", "build", "ci", "chore"}
)
#: markers of work left undone
MARKERS = ("TODO", "FIXME", "HACK", "XXX")

_FIX = re.compile(r"\b(" + "|".join(FIX_WORDS) + r")\b", re.IGNORECASE)
_REGRESSION_TESTS = re.compile(r"\bregression[- ]tests?\b", re.IGNORECASE)
_CONVENTIONAL = re.compile(r"^([A-Za-z]+)(\([^)]*\))?!?:\s")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{7,40})", re.IGNORECASE)
_REVERT_SUBJECT = re.compile(r'^Revert "(.*)"\s*$')
_MARKER = re.compile(r"\b(" + "|".join(MARKERS) + r")\b")


@dataclass(frozen=True, slots=True)
class FileAtCommit:
    """The edited file as one commit left it (`text` None: the commit deleted it)."""

    sha: str
    at: float
    path: str
    text: str | None
    message: str = ""


@dataclass(frozen=True, slots=True)
class Commit:
    """One commit of the repository: its files' changes as (status letter, old path, new path),
    old and new the same but for renames (R) and copies (C)."""

    sha: str
    at: float
    message: str
    changes: tuple[tuple[str, str, str], ...] = ()


def file_commits(path: str, commits: Sequence[Commit]) -> list[tuple[Commit, str, bool]]:
    """The commits (oldest first) that touched the file named `path` before the first of them,
    renames followed forward: (commit, the file's path there, deleted by it)."""
    current = path
    out: list[tuple[Commit, str, bool]] = []
    for commit in commits:
        for status, old, new in commit.changes:
            if old != current or status == "C":
                continue
            if status == "R":
                current = new
            out.append((commit, current, status == "D"))
            break
    return out


@dataclass(frozen=True, slots=True)
class LateSignals:
    """Everything measured about one proposal's lines after its windows."""

    measured_at: float
    lines: int  # the agent's added lines looked for
    committed: int = 0  # of them, in the commit that carried them
    commit: str | None = None
    committed_at: float | None = None
    path_at_commit: str | None = None
    churn_14d: float | None = None
    churn_30d: float | None = None
    # days between the commit and the newest time the churn was measured at (the windows close
    # at 14 and 30)
    days_observed: float | None = None
    reverted_by: str | None = None
    reverted_at: float | None = None
    revert_kind: str | None = None  # "revert commit" | "lines back"
    fixed_by: str | None = None
    fixed_at: float | None = None
    syntax_errors_added: int | None = None  # None: no grammar for the file's language
    markers_added: int = 0
    file_gone: bool = False  # the file was deleted before any commit carried the lines
    renamed: bool = False  # the carrying commit has the file under another path than the edit

    def as_json(self, iso: object) -> dict[str, object]:
        """The episode JSON's `late_signals`. The path at the commit is not in it (an upload at
        the redacted level would carry it as text, its folders unhashed): `renamed` says whether
        the file had another path there."""
        to_iso = iso if callable(iso) else (lambda t: t)
        return {
            "measured_at": to_iso(self.measured_at),
            "lines": self.lines,
            "committed_lines": self.committed,
            "commit": self.commit,
            "committed_at": to_iso(self.committed_at),
            "renamed": self.renamed,
            "churn_14d": self.churn_14d,
            "churn_30d": self.churn_30d,
            "days_observed": self.days_observed,
            "reverted_by": self.reverted_by,
            "reverted_at": to_iso(self.reverted_at),
            "revert_kind": self.revert_kind,
            "fixed_by": self.fixed_by,
            "fixed_at": to_iso(self.fixed_at),
            "syntax_errors_added": self.syntax_errors_added,
            "markers_added": self.markers_added,
            "file_gone": self.file_gone,
        }


def _lines(text: str) -> list[str]:
    return [s for s in (line.strip() for line in text.splitlines()) if s]


def added_lines(hunks: Iterable[tuple[str, str]]) -> list[str]:
    """The non-blank lines the agent added over (old text, new text) hunks: in the new text and
    not in the old, as a multiset."""
    out: list[str] = []
    for old, new in hunks:
        old_count = Counter(_lines(old))
        for line in _lines(new):
            if old_count[line] > 0:
                old_count[line] -= 1
            else:
                out.append(line)
    return out


def present(lines: Sequence[str], text: str | None) -> int:
    """How many of `lines` (a multiset) the text holds."""
    if text is None or not lines:
        return 0
    have = Counter(_lines(text))
    want = Counter(lines)
    return sum(min(n, have[line]) for line, n in want.items())


def gained(lines: Sequence[str], text: str | None, base: str | None) -> list[str]:
    """The lines of the multiset `lines` that `text` holds more copies of than `base` did: what
    a commit brought of the agent's lines, not the same lines found elsewhere in the file."""
    have = Counter(_lines(text or ""))
    had = Counter(_lines(base or ""))
    out: list[str] = []
    for line in lines:
        if have[line] > had[line]:
            have[line] -= 1
            out.append(line)
    return out


def find_commit(
    lines: Sequence[str], history: Sequence[FileAtCommit], base: str | None = None
) -> FileAtCommit | None:
    """The first commit of `history` (oldest first) that brought any of the agent's lines into
    the file (holds more copies of them than `base`, the file before those commits)."""
    for state in history:
        if gained(lines, state.text, base):
            return state
    return None


def window_end(history: Sequence[FileAtCommit], until: float) -> FileAtCommit | None:
    """The last commit of `history` at or before `until` (None: no commit after the one that
    carried the lines, within the window)."""
    last = None
    for state in history:
        if state.at <= until:
            last = state
    return last


def churn_share(committed_lines: Sequence[str], text: str | None) -> float:
    """Share of the committed lines no longer in `text` (changed or deleted)."""
    if not committed_lines:
        return 0.0
    return 1.0 - present(committed_lines, text) / len(committed_lines)


def reverted_shas(message: str) -> list[str]:
    """The commits a message says it reverts (`This reverts commit <sha>`)."""
    return [m.lower() for m in _REVERTS.findall(message)]


def revert_subject(message: str) -> str | None:
    """`<subject>` of a `Revert "<subject>"` message, else None."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    m = _REVERT_SUBJECT.match(first)
    return m.group(1) if m else None


def is_fix_message(message: str) -> bool:
    """A commit whose subject line marks it as a fix (and that is not a revert): the
    conventional-commit type `fix`, or, with no conventional type, a fix word in the subject.
    The body is never read."""
    if reverted_shas(message) or revert_subject(message) is not None:
        return False
    subject = _subject(message)
    kind = _CONVENTIONAL.match(subject)
    if kind is not None and kind.group(1).lower() in CONVENTIONAL_TYPES:
        return kind.group(1).lower() == "fix"
    # "add regression tests" names tests, not a fix
    return bool(_FIX.search(_REGRESSION_TESTS.sub("", subject)))


def lines_back(agent_lines: Sequence[str], old_lines: Sequence[str], text: str | None) -> bool:
    """The file is back to its pre-edit state for this edit: none of the agent's lines are left
    and every line the edit removed is there again (an edit that removed nothing cannot be told
    back this way)."""
    if not old_lines or text is None:
        return False
    return present(agent_lines, text) == 0 and present(old_lines, text) == len(old_lines)


def markers_added(committed_lines: Sequence[str], old_text: str) -> int:
    """TODO/FIXME/HACK/XXX markers in the agent's committed lines beyond those the edit removed."""
    new = sum(len(_MARKER.findall(line)) for line in committed_lines)
    old = len(_MARKER.findall(old_text))
    return max(0, new - old)


def _subject(message: str) -> str:
    stripped = message.strip()
    return stripped.splitlines()[0] if stripped else ""


def measure(
    *,
    lines: Sequence[str],
    old_text: str,
    history: Sequence[FileAtCommit],
    later_commits: Sequence[tuple[str, float, str]] = (),
    fixes: Sequence[tuple[str, float]] = (),
    syntax_errors_added: int | None = None,
    base: str | None = None,
    path: str | None = None,
    now: float,
) -> LateSignals:
    """The late signals of one proposal.

    `history`: the edited file at each commit that touched it after the edit, oldest first
    (renames followed); `later_commits`: (sha, time, message) of the repository's commits after
    the one that carried the lines; `fixes`: (sha, time) of fix commits whose deleted lines blame
    back to that commit; `syntax_errors_added`: what the carrying commit added (None: unknown);
    `base`: the file as committed before the edit (None: it was not in the repository);
    `path`: the file's path at the edit, in the repository.
    """
    carried = find_commit(lines, history, base)
    if carried is None:
        gone = bool(history) and history[-1].text is None
        return LateSignals(measured_at=now, lines=len(lines), file_gone=gone)
    committed = gained(lines, carried.text, base)
    after = history[history.index(carried) + 1 :]
    churn: dict[int, float] = {}
    for days in CHURN_DAYS:
        end = window_end(after, carried.at + days * DAY)
        churn[days] = 0.0 if end is None else churn_share(committed, end.text)
    reverted_by = reverted_at = revert_kind = None
    subject = _subject(carried.message)
    for sha, at, message in later_commits:
        named = any(carried.sha.startswith(s) for s in reverted_shas(message))
        if named or (subject and revert_subject(message) == subject):
            reverted_by, reverted_at, revert_kind = sha, at, "revert commit"
            break
    if reverted_by is None:
        old_lines = _lines(old_text)
        for state in after:
            if lines_back(committed, old_lines, state.text):
                reverted_by, reverted_at, revert_kind = state.sha, state.at, "lines back"
                break
    first_fix = min(fixes, key=lambda f: f[1]) if fixes else None
    return LateSignals(
        measured_at=now,
        lines=len(lines),
        committed=len(committed),
        commit=carried.sha,
        committed_at=carried.at,
        path_at_commit=carried.path,
        churn_14d=churn[14],
        churn_30d=churn[30],
        days_observed=max(0.0, (now - carried.at) / DAY),
        reverted_by=reverted_by,
        reverted_at=reverted_at,
        revert_kind=revert_kind,
        fixed_by=first_fix[0] if first_fix else None,
        fixed_at=first_fix[1] if first_fix else None,
        syntax_errors_added=syntax_errors_added,
        markers_added=markers_added(committed, old_text),
        renamed=path is not None and carried.path != path,
    )
