"""The manual and the README against the code: every `capture ...` command they show exists in
the real argument parsers, with the options it is shown with; every benchmark script they name
exists; and the README stays a front door (at most 250 lines, its relative links resolving).

Commands are read from shell code blocks (`sh`, `bash`, `console`, `ini`, or no language) and
from inline code that starts with `capture `. Synopsis notation is read as such: `[--opt X]`
is an option, `a|b` a choice of values, `<id>`, `ID`, `PATH` and `...` placeholders.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 250
SHELL_BLOCKS = frozenset({"", "sh", "bash", "shell", "console", "ini"})
SEPARATORS = frozenset({"|", "||", "&&", ";", "&", ">", ">>", "<", "2>&1"})


def _load(name: str) -> ModuleType:
    """A module of the docs' build hooks, loaded from its file (docs/ is not a package)."""
    path = ROOT / "docs" / "hooks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_hooks_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


cli_reference = _load("cli_reference")


def doc_files() -> list[Path]:
    """What the manual shows: its pages, the editors' READMEs it includes, and the README."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    return [*pages, *sorted((ROOT / "editors").glob("*/README.md")), README]


@dataclass(frozen=True)
class Shown:
    """A command line as a document shows it."""

    file: Path
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.file.relative_to(ROOT)}:{self.line}: {self.text}"


def _joined(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """A code block's command lines: backslash continuations joined, and lines joined while a
    quote is open (a JSON body echoed over two lines)."""
    pending: tuple[int, str] | None = None
    for number, line in lines:
        start, text = pending if pending else (number, "")
        text = f"{text}\n{line}" if pending else line
        pending = None
        if text.endswith("\\"):
            pending = (start, text[:-1])
            continue
        try:
            shlex.split(text, comments=True)
        except ValueError:
            pending = (start, text)
            continue
        yield start, text
    if pending:
        yield pending


def shown_commands(path: Path) -> Iterator[Shown]:
    """Every line of a shell block, and every inline code span starting with `capture `."""
    fence: str | None = None
    language = ""
    block: list[tuple[int, str]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        opening = re.match(r"^\s*(`{3,})\s*([\w-]*)", line)
        if fence is None and opening:
            fence, language, block = opening.group(1), opening.group(2).lower(), []
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                if language in SHELL_BLOCKS:
                    for start, text in _joined(block):
                        yield Shown(path, start, text)
                fence = None
            else:
                block.append((number, line))
            continue
        for span in re.findall(r"`(capture [^`]+)`", line):
            yield Shown(path, number, span.replace("\\|", "|"))


def _tokens(text: str) -> list[str]:
    """Shell words, with synopsis brackets dropped and `[a | b]` read as two options."""
    text = re.sub(r"\[([^\]]*)\]", lambda m: " " + m.group(1).replace(" | ", " ") + " ", text)
    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return text.split()


def invocations(text: str) -> Iterator[list[str]]:
    """The arguments after each `capture` a command line runs (after a pipe or `&&` too, after
    `VAR=value` assignments, as `python -m capture`, or a path ending in `/capture`)."""
    segment: list[str] = []
    for token in [*_tokens(text), ";"]:
        if token not in SEPARATORS:
            segment.append(token)
            continue
        words = list(segment)
        segment = []
        while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
            words = words[1:]
        if words[:3] in (["python", "-m", "capture"], ["python3", "-m", "capture"]):
            yield words[3:]
        elif words and (words[0] == "capture" or words[0].endswith("/capture")):
            yield words[1:]


def _placeholder(token: str) -> bool:
    return (
        "..." in token
        or "…" in token
        or token.startswith("<")
        or bool(re.fullmatch(r"[A-Z][A-Z0-9_]*", token))
    )


def problems(arguments: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """What the parser would not take in these arguments: an unknown command on the way down,
    an option the command does not have, a literal value outside a positional's choices."""
    found: list[str] = []
    current, path = parser, ["capture"]
    positional = 0
    i = 0
    while i < len(arguments):
        token = arguments[i]
        i += 1
        if token == "--":
            break
        if token.startswith("-") and len(token) > 1 and not _placeholder(token):
            flag = token.split("=", 1)[0]
            action = current._option_string_actions.get(flag)
            if action is None:
                found.append(f"`{' '.join(path)}` has no option {flag}")
            elif action.nargs != 0 and "=" not in token:
                # its value, unless the synopsis shows the next option right after it
                i += 0 if i < len(arguments) and arguments[i].startswith("-") else 1
            continue
        sub = cli_reference.subcommands(current)
        if sub is not None:
            if _placeholder(token):
                break
            if token not in sub.choices:
                found.append(f"`{' '.join(path)}` has no command {token!r}")
                break
            current, path, positional = sub.choices[token], [*path, token], 0
            continue
        positionals = [action for action in current._actions if not action.option_strings]
        if positional >= len(positionals):
            continue
        action = positionals[positional]
        if action.nargs == argparse.REMAINDER:
            break
        literal = re.fullmatch(r"[a-z][a-z0-9-]*", token)
        if action.choices is not None and literal and token not in action.choices:
            found.append(f"`{' '.join(path)}`: {token!r} is not one of {list(action.choices)}")
        if action.nargs in (None, 1, "?"):
            positional += 1
    return found


@pytest.fixture(scope="module")
def parser() -> argparse.ArgumentParser:
    return cli_reference.full_parser()


def test_the_checker_refuses_what_the_parser_would(parser: argparse.ArgumentParser) -> None:
    """The docs' check is only as good as its reading: it takes real commands and refuses
    made-up ones."""
    assert problems(["sync", "enable", "--url", "U", "--all"], parser) == []
    assert problems(["install", "claude-code", "--dry-run"], parser) == []
    assert problems(["run", "--name", "e2e", "--", "npm", "test", "--frob"], parser) == []
    assert problems(["collector", "token", "create", "--team", "T"], parser) == []
    assert problems(["frobnicate"], parser) == ["`capture` has no command 'frobnicate'"]
    assert problems(["sync", "purge"], parser) == ["`capture sync` has no command 'purge'"]
    assert problems(["report", "--colour"], parser) == ["`capture report` has no option --colour"]
    assert problems(["install", "emacs"], parser)
    assert list(invocations("echo '{}' | capture propose && capture frob")) == [
        ["propose"],
        ["frob"],
    ]
    assert list(invocations("ExecStart=/opt/capture/bin/capture collector serve --port 1")) == [
        ["collector", "serve", "--port", "1"]
    ]
    assert list(invocations("CAPTURE_HOME=/tmp/x python -m capture demo")) == [["demo"]]
    assert list(invocations("User=capture")) == []
    assert problems(["export", "--tiers", "--frob"], parser) == [
        "`capture export` has no option --frob"
    ]


def test_the_docs_show_commands(parser: argparse.ArgumentParser) -> None:
    """A reading that found nothing would pass anything: the docs do show commands."""
    shown = [s for path in doc_files() for s in shown_commands(path) if list(invocations(s.text))]
    assert len(shown) > 100
    assert {path.name for path in doc_files()} >= {"README.md", "cli.md", "benchmarks.md"}


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_shown_exists(path: Path, parser: argparse.ArgumentParser) -> None:
    wrong = [
        f"{shown}\n    {problem}"
        for shown in shown_commands(path)
        for arguments in invocations(shown.text)
        for problem in problems(arguments, parser)
    ]
    assert not wrong, "commands the parser does not have:\n" + "\n".join(wrong)


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_benchmark_script_named_exists(path: Path) -> None:
    named = set(re.findall(r"tests/benchmarks/[\w./-]+\.(?:py|js)", path.read_text("utf-8")))
    missing = sorted(name for name in named if not (ROOT / name).is_file())
    assert not missing, f"{path.relative_to(ROOT)} names scripts that do not exist: {missing}"


def test_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def _slug(heading: str) -> str:
    """The anchor GitHub and mkdocs give a heading (an explicit `{ #id }` wins)."""
    explicit = re.search(r"\{\s*#([\w-]+)\s*\}\s*$", heading)
    if explicit:
        return explicit.group(1)
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text, re.MULTILINE)}


def test_readme_links_resolve() -> None:
    text = README.read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [link for link in links if not re.match(r"^[a-z]+:", link)]
    assert relative, "the README links into the manual"
    broken = []
    for link in relative:
        target, _, anchor = link.partition("#")
        path = (ROOT / target) if target else README
        if not path.exists():
            broken.append(f"{link}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{link}: no heading with that anchor")
    assert not broken, "README.md links that do not resolve:\n" + "\n".join(broken)
