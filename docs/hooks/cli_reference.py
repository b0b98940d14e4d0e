"""The `capture` command's argument parsers, walked: the docs' CLI reference, and what the docs'
test checks every command shown against.

The CLI builds only the parser of the command it runs (each costs milliseconds on the hook
path), so `full_parser` asks it for each command in turn and puts them together. argparse keeps
its tree in private attributes (`_actions`, `_choices_actions`); they have been stable since
Python 3.2, and the docs' test fails loudly if they move.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Command", "cli_markdown", "commands", "full_parser", "subcommands"]

#: Columns of the usage lines in the reference: the same whatever the terminal of the build.
WIDTH = 88


@dataclass(frozen=True)
class Command:
    """One command of the tree: `path` is what follows `capture` (empty for `capture` itself)."""

    path: tuple[str, ...]
    parser: argparse.ArgumentParser
    summary: str


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def full_parser() -> argparse.ArgumentParser:
    """`capture`'s parser with every command configured, as each is when it runs."""
    from capture.cli import COMMANDS, build_parser

    parser = build_parser(None)
    skeleton = subcommands(parser)
    assert skeleton is not None
    for name in COMMANDS:
        configured = subcommands(build_parser(name))
        assert configured is not None
        skeleton.choices[name] = configured.choices[name]
    return parser


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = (), summary: str = ""
) -> Iterator[Command]:
    """The command and every subcommand under it, depth first, in the order they were added."""
    yield Command(path, parser, parser.description or summary)
    sub = subcommands(parser)
    if sub is None:
        return
    helps = {action.dest: action.help or "" for action in sub._choices_actions}
    for name, child in sub.choices.items():
        yield from commands(child, (*path, name), helps.get(name, ""))


def _escaped(text: str) -> str:
    """Help text as Markdown: code spans kept, the rest safe from emphasis and raw HTML."""
    parts = re.split(r"(`[^`]*`)", text)
    for i in range(0, len(parts), 2):
        part = parts[i].replace("\\", "\\\\").replace("*", "\\*").replace("_", "\\_")
        parts[i] = part.replace("<", "&lt;").replace(">", "&gt;")
    return "".join(parts)


def _anchor(path: tuple[str, ...]) -> str:
    return "-".join(("capture", *path))


def _formatter(parser: argparse.ArgumentParser) -> argparse.HelpFormatter:
    # typeshed's protocol for formatter classes names `prog` alone; every argparse one takes width
    formatter_class: Any = parser.formatter_class
    return formatter_class(prog=parser.prog, width=WIDTH)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = _formatter(parser)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups)
    return formatter.format_help().strip()


def _argument(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    formatter = _formatter(parser)
    if action.option_strings:
        if action.nargs == 0:
            name = ", ".join(action.option_strings)
        else:
            metavar = formatter._format_args(action, action.dest.upper())
            name = ", ".join(f"{option} {metavar}" for option in action.option_strings)
    else:
        name = formatter._metavar_formatter(action, action.dest)(1)[0]
    help_text = formatter._expand_help(action) if action.help else ""
    line = f"- `{name}`"
    if action.choices is not None and not action.option_strings:
        line += " (one of: " + ", ".join(f"`{choice}`" for choice in action.choices) + ")"
    return line + (f": {_escaped(help_text)}" if help_text else "")


def _section(command: Command) -> str:
    parser = command.parser
    title = " ".join(("capture", *command.path))
    level = "#" * min(2 + max(len(command.path) - 1, 0), 4)
    lines = [f"{level} `{title}` {{ #{_anchor(command.path)} }}", ""]
    if command.summary:
        lines += [_escaped(command.summary[0].upper() + command.summary[1:]), ""]
    lines += ["```text", _usage(parser), "```", ""]
    sub = subcommands(parser)
    arguments = [
        action
        for action in parser._actions
        if action.help != argparse.SUPPRESS
        and not isinstance(action, argparse._HelpAction | argparse._SubParsersAction)
    ]
    if arguments:
        lines += [_argument(parser, action) for action in arguments] + [""]
    if parser.epilog:
        lines += [_escaped(parser.epilog), ""]
    if sub is not None:
        helps = {action.dest: action.help or "" for action in sub._choices_actions}
        lines.append("Commands:")
        lines.append("")
        for name in sub.choices:
            link = f"[`{name}`](#{_anchor((*command.path, name))})"
            lines.append(f"- {link}: {_escaped(helps.get(name, ''))}")
        lines.append("")
    return "\n".join(lines)


def cli_markdown() -> str:
    """The reference: one section per command, from the parsers themselves."""
    return "\n".join(_section(command) for command in commands(full_parser()))
