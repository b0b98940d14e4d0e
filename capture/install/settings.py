"""Adding capture's hook entries to an agent's settings text and taking them out again, as pure
functions over the text. Everything else in the file stays byte for byte as it was; taking the
entries out of a file they were added to gives back the file as it was before."""

from __future__ import annotations

import json
import re

from capture.errors import InputError
from capture.install.jsontext import (
    JsonTextError,
    Node,
    append_item,
    insert_member,
    parse,
    remove_item,
    remove_member,
)
from capture.install.targets import Target, is_ours

__all__ = ["add_notify", "install_text", "remove_notify", "uninstall_text"]


def _root(text: str, name: str) -> Node:
    try:
        root = parse(text)
    except JsonTextError as exc:
        raise InputError(f"{name}: cannot read it ({exc}); left unchanged") from None
    if root.kind != "object":
        raise InputError(f"{name}: not a JSON object; left unchanged")
    return root


def _hooks(root: Node, name: str) -> Node | None:
    hooks = root.get("hooks")
    if hooks is not None and hooks.kind != "object":
        raise InputError(f'{name}: "hooks" is not an object; left unchanged')
    return hooks


def _has_ours(entries: Node, target: Target) -> bool:
    for item in entries.items:
        if target.shape == "flat":
            if item.kind == "object" and is_ours(_plain(item), target.agent):
                return True
            continue
        handlers = item.get("hooks") if item.kind == "object" else None
        if handlers is not None and any(
            is_ours(_plain(h), target.agent) for h in handlers.items if h.kind == "object"
        ):
            return True
    return False


def _plain(node: Node) -> dict[str, object]:
    """An object node's scalar members (enough to read a handler's command)."""
    return {m.key: m.value.value for m in node.members if m.value.kind == "string"}


def install_text(text: str | None, target: Target, command: str, name: str) -> str:
    """The settings with capture's entries for every event of `target` (those already there
    are left as they are). `text` None: the file does not exist yet."""
    if text is None or not text.strip():
        document = dict(target.skeleton)
        document["hooks"] = {
            event: [target.entry(command, event, matcher)] for event, matcher in target.events
        }
        return json.dumps(document, indent=2) + "\n"
    for event, matcher in target.events:
        root = _root(text, name)
        hooks = _hooks(root, name)
        entry = target.entry(command, event, matcher)
        if hooks is None:
            text = insert_member(text, root, "hooks", {event: [entry]})
            continue
        entries = hooks.get(event)
        if entries is None:
            text = insert_member(text, hooks, event, [entry])
        elif entries.kind != "array":
            raise InputError(f'{name}: hooks "{event}" is not a list; left unchanged')
        elif not _has_ours(entries, target):
            text = append_item(text, entries, entry)
    return text


def _find_ours(hooks: Node, target: Target) -> tuple[int, int, int | None] | None:
    """(event member, entry, handler within a group) of the first capture handler."""
    for i, member in enumerate(hooks.members):
        entries = member.value
        if entries.kind != "array":
            continue
        for j, item in enumerate(entries.items):
            if item.kind != "object":
                continue
            if target.shape == "flat":
                if is_ours(_plain(item), target.agent):
                    return i, j, None
                continue
            handlers = item.get("hooks")
            if handlers is None or handlers.kind != "array":
                continue
            for k, handler in enumerate(handlers.items):
                if handler.kind == "object" and is_ours(_plain(handler), target.agent):
                    return i, j, k
    return None


def uninstall_text(text: str, target: Target, name: str) -> tuple[str, bool]:
    """The settings without capture's entries, and whether nothing but the skeleton of a new
    file is left. A container left empty by the removal goes too (it was made for them)."""
    while True:
        root = _root(text, name)
        hooks = _hooks(root, name)
        found = None if hooks is None else _find_ours(hooks, target)
        if hooks is None or found is None:
            break
        i, j, k = found
        entries = hooks.members[i].value
        if k is not None:
            handlers = entries.items[j].get("hooks")
            assert handlers is not None
            if len(handlers.items) > 1:
                text = remove_item(text, handlers, k)
                continue
        if len(entries.items) > 1:
            text = remove_item(text, entries, j)
        elif len(hooks.members) > 1:
            text = remove_member(text, hooks, i)
        else:
            index = root.index_of("hooks")
            assert index is not None
            text = remove_member(text, root, index)
    root = _root(text, name)
    bare = all(
        m.key in target.skeleton and m.value.value == target.skeleton[m.key] for m in root.members
    )
    return text, bare


# -- Codex notify (config.toml) ------------------------------------------------------------

_NOTIFY = re.compile(r"(?m)^[ \t]*notify[ \t]*=.*$")


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string is a JSON string for these characters


def add_notify(text: str | None, argv: list[str]) -> tuple[str, str | None]:
    """config.toml with `notify = [argv...]` at top level, and a note when it cannot be added
    (another notify program is set: Codex runs only one)."""
    text = text or ""
    current = _NOTIFY.search(text)
    if current is not None:
        if _notify_is_ours(current.group(0)):
            return text, None
        return text, "notify is already set to another program in config.toml; left as it is"
    line = "notify = [" + ", ".join(_toml_string(a) for a in argv) + "]"
    table = re.search(r"(?m)^[ \t]*\[", text)
    if table is not None:
        return text[: table.start()] + line + "\n" + text[table.start() :], None
    if text and not text.endswith("\n"):
        return text + "\n" + line, None
    return text + line + "\n", None


def _notify_is_ours(line: str) -> bool:
    return re.search(r"capture[\"'].*[\"']hook[\"'],\s*[\"']codex[\"']", line) is not None


def remove_notify(text: str) -> str:
    for match in _NOTIFY.finditer(text):
        if not _notify_is_ours(match.group(0)):
            continue
        start, end = match.start(), match.end()
        if text[end : end + 1] == "\n":
            return text[:start] + text[end + 1 :]
        if start > 0 and text[start - 1] == "\n":
            return text[: start - 1] + text[end:]
        return text[:start] + text[end:]
    return text
