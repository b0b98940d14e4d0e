"""Editing JSON text in place: values are added and removed where they stand, and every byte
around them is left as the user wrote it (indentation, inline groups, key order, comments).

`parse` reads a document (JSON, plus the `//` and `/* */` comments some agents accept) into
nodes that know their span in the text; the edit functions return new text. Removing what an
insertion added gives back the text as it was before the insertion.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "JsonTextError",
    "Member",
    "Node",
    "append_item",
    "insert_member",
    "parse",
    "remove_item",
    "remove_member",
]


class JsonTextError(ValueError):
    pass


class Node:
    """A value and its span [start, end) in the text."""

    __slots__ = ("kind", "start", "end", "value", "members", "items")

    def __init__(self, kind: str, start: int) -> None:
        self.kind = kind  # object, array, string, number, literal
        self.start = start
        self.end = start
        self.value: Any = None
        self.members: list[Member] = []
        self.items: list[Node] = []

    def get(self, key: str) -> Node | None:
        for member in self.members:
            if member.key == key:
                return member.value
        return None

    def index_of(self, key: str) -> int | None:
        for i, member in enumerate(self.members):
            if member.key == key:
                return i
        return None


class Member:
    __slots__ = ("key", "key_start", "value")

    def __init__(self, key: str, key_start: int, value: Node) -> None:
        self.key = key
        self.key_start = key_start
        self.value = value


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> JsonTextError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return JsonTextError(f"line {line} column {column}: {message}")

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated comment")
                self.pos = end + 2
            else:
                return

    def value(self) -> Node:
        self.skip()
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of text")
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.arr()
        if ch == '"':
            node = Node("string", self.pos)
            node.value = self.string()
            node.end = self.pos
            return node
        return self.scalar()

    def string(self) -> str:
        decoder = json.JSONDecoder()
        try:
            value, end = decoder.raw_decode(self.text, self.pos)
        except json.JSONDecodeError as exc:
            raise self.fail(f"bad string: {exc.msg}") from None
        if not isinstance(value, str):
            raise self.fail("expected a string")
        self.pos = end
        return value

    def scalar(self) -> Node:
        decoder = json.JSONDecoder()
        try:
            value, end = decoder.raw_decode(self.text, self.pos)
        except json.JSONDecodeError:
            raise self.fail("expected a value") from None
        node = Node("number" if isinstance(value, (int, float)) else "literal", self.pos)
        node.value = value
        node.end = self.pos = end
        return node

    def obj(self) -> Node:
        node = Node("object", self.pos)
        self.pos += 1
        self.skip()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            self.skip()
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key")
            key_start = self.pos
            key = self.string()
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            node.members.append(Member(key, key_start, self.value()))
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if self.text.startswith("}", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            raise self.fail("expected ',' or '}'")

    def arr(self) -> Node:
        node = Node("array", self.pos)
        self.pos += 1
        self.skip()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            node.end = self.pos
            return node
        while True:
            node.items.append(self.value())
            self.skip()
            if self.text.startswith(",", self.pos):
                self.pos += 1
                continue
            if self.text.startswith("]", self.pos):
                self.pos += 1
                node.end = self.pos
                return node
            raise self.fail("expected ',' or ']'")


def parse(text: str) -> Node:
    parser = _Parser(text)
    node = parser.value()
    parser.skip()
    if parser.pos != len(text):
        raise parser.fail("unexpected text after the document")
    return node


# -- formatting ----------------------------------------------------------------------------


def indent_unit(text: str) -> str:
    """The document's indentation step (the smallest indentation of an indented line)."""
    best: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" \t")
        if stripped and stripped != line:
            lead = line[: len(line) - len(stripped)]
            if best is None or len(lead) < len(best):
                best = lead
    return best or "  "


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    line = text[start:pos]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _dump(value: Any, indent: str, unit: str, inline: bool) -> str:
    if inline:
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    dumped = json.dumps(value, ensure_ascii=False, indent=unit)
    return dumped.replace("\n", "\n" + indent)


def _lead(text: str, container: Node, starts: list[int], ends: list[int]) -> str:
    """The whitespace that leads into the last child, as the document has it (a comment
    between two children is not copied)."""
    if len(starts) >= 2:
        comma = text.find(",", ends[-2])
        a = comma + 1 if 0 <= comma < starts[-1] else ends[-2]
    else:
        a = container.start + 1
    between = text[a : starts[-1]]
    if "\n" in between:
        tail = between[between.rfind("\n") + 1 :]
        return "\n" + tail[: len(tail) - len(tail.lstrip(" \t"))]
    return between if between.strip() == "" else " "


def _newlines(text: str, insert: str) -> str:
    """`insert` with the document's line ends (CRLF documents stay CRLF)."""
    return insert.replace("\n", "\r\n") if "\r\n" in text else insert


# -- edits ---------------------------------------------------------------------------------


def append_item(text: str, array: Node, value: Any) -> str:
    """`value` added as the last element of `array`, formatted like its siblings."""
    unit = indent_unit(text)
    if not array.items:
        indent = _line_indent(text, array.start)
        body = _dump(value, indent + unit, unit, inline=False)
        insert = _newlines(text, f"\n{indent}{unit}{body}\n{indent}")
        return text[: array.start + 1] + insert + text[array.end - 1 :]
    last = array.items[-1]
    lead = _lead(text, array, [i.start for i in array.items], [i.end for i in array.items])
    # one line per element if the last one is written on one line (and one line at all when
    # the elements share lines)
    inline = "\n" not in text[last.start : last.end] and (
        last.kind in ("object", "array") or "\n" not in lead
    )
    indent = lead[1:] if lead.startswith("\n") else _line_indent(text, last.start)
    body = _dump(value, indent, unit, inline=inline)
    return text[: last.end] + _newlines(text, "," + lead + body) + text[last.end :]


def insert_member(text: str, obj: Node, key: str, value: Any) -> str:
    """`"key": value` added as the last member of `obj`, formatted like its siblings."""
    unit = indent_unit(text)
    name = json.dumps(key, ensure_ascii=False)
    if not obj.members:
        indent = _line_indent(text, obj.start)
        body = _dump(value, indent + unit, unit, inline=False)
        insert = _newlines(text, f"\n{indent}{unit}{name}: {body}\n{indent}")
        return text[: obj.start + 1] + insert + text[obj.end - 1 :]
    last = obj.members[-1]
    lead = _lead(text, obj, [m.key_start for m in obj.members], [m.value.end for m in obj.members])
    indent = lead[1:] if lead.startswith("\n") else _line_indent(text, last.key_start)
    last_value = text[last.value.start : last.value.end]
    inline = "\n" not in lead or ("\n" not in last_value and last.value.kind in ("object", "array"))
    body = _dump(value, indent, unit, inline=inline)
    insert = _newlines(text, "," + lead + name + ": " + body)
    return text[: last.value.end] + insert + text[last.value.end :]


def _remove(text: str, spans: list[tuple[int, int]], index: int, container: Node) -> str:
    """Remove child `index` (span (start, end)) with the separator that joins it to the others:
    the comma and whitespace before it, or for the first child, up to the next child."""
    start, end = spans[index]
    if len(spans) == 1:
        return text[: container.start + 1] + text[container.end - 1 :]
    if index > 0:
        prev_end = spans[index - 1][1]
        return text[:prev_end] + text[end:]
    next_start = spans[1][0]
    return text[:start] + text[next_start:]


def remove_item(text: str, array: Node, index: int) -> str:
    return _remove(text, [(i.start, i.end) for i in array.items], index, array)


def remove_member(text: str, obj: Node, index: int) -> str:
    return _remove(text, [(m.key_start, m.value.end) for m in obj.members], index, obj)
