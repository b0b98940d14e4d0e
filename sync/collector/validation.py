"""A validator for the subset of JSON Schema the wire format uses, compiled to Python source.

The same schema dicts are published in the OpenAPI description, so what the documentation
promises and what the collector enforces cannot drift apart. The subset: `type` (one or a list,
`null` included), `properties`, `required`, `additionalProperties` (bool), `items`, `enum`,
`minimum`, `maximum`, `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`.

Why generate code: ingest validates every field of thousands of episodes a second, and one
straight-line function per schema runs several times faster than a tree of closures. The first
violation wins and is reported with the path of the field (`episodes[3].episode.proposals[0].
similarity`), because one precise line helps a client more than a list of a hundred. Values are
what a JSON parser returns (exact `dict`, `list`, `str`, `int`, `float`, `bool`, `None`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["SchemaViolation", "Validator", "compile_schema", "field_path"]


class SchemaViolation(Exception):
    """A value that does not match its schema. `field` is a path such as `episodes[0].id`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.message = message


Validator = Callable[[Any], None]


def field_path(path: tuple[str | int, ...]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _fail(path: tuple[str | int, ...], message: str) -> None:
    raise SchemaViolation(field_path(path), message)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    # JSON Schema patterns are ECMA-262: `$` ends the string (Python's `$` also matches before a
    # final newline) and `\d` is ASCII only.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern, re.ASCII)


_MISSING = object()

# Type tests on a variable; bool is never a number here because type(True) is bool.
_TYPE_TESTS = {
    "null": "{v} is None",
    "boolean": "type({v}) is bool",
    "integer": "(type({v}) is int or (type({v}) is float and {v}.is_integer()))",
    "number": "(type({v}) is int or type({v}) is float)",
    "string": "type({v}) is str",
    "array": "type({v}) is list",
    "object": "type({v}) is dict",
}


class _Generator:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self.counter = 0

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def constant(self, value: Any) -> str:
        name = f"_k{len(self.constants)}"
        self.constants[name] = value
        return name

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def fail(self, depth: int, path: list[str], message: str) -> None:
        tuple_code = "(" + "".join(f"{p}, " for p in path) + ")"
        self.emit(depth, f"_fail({tuple_code}, {message})")

    def node(self, schema: dict[str, Any], v: str, path: list[str], depth: int) -> None:
        types = schema.get("type")
        if types is not None:
            names = [types] if isinstance(types, str) else list(types)
            test = " or ".join(_TYPE_TESTS[n].format(v=v) for n in names)
            expected = repr(f"expected {' or '.join(names)}, got ")
            self.emit(depth, f"if not ({test}):")
            self.fail(depth + 1, path, f"{expected} + _type_name({v})")
        if "enum" in schema:
            allowed = list(schema["enum"])
            message = repr(f"must be one of {', '.join(map(str, allowed))}")
            if all(isinstance(a, str) for a in allowed):
                options = self.constant(frozenset(allowed))
                self.emit(depth, f"if type({v}) is not str or {v} not in {options}:")
            else:
                options = self.constant(tuple(allowed))
                self.emit(
                    depth, f"if not any({v} == a and type({v}) is type(a) for a in {options}):"
                )
            self.fail(depth + 1, path, message)
        self._numbers(schema, v, path, depth)
        self._strings(schema, v, path, depth)
        self._arrays(schema, v, path, depth)
        self._objects(schema, v, path, depth)

    def _numbers(self, schema: dict[str, Any], v: str, path: list[str], depth: int) -> None:
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is None and high is None:
            return
        self.emit(depth, f"if type({v}) is int or type({v}) is float:")
        if low is not None:
            self.emit(depth + 1, f"if {v} < {low!r}:")
            self.fail(depth + 2, path, repr(f"must be >= {low}"))
        if high is not None:
            self.emit(depth + 1, f"if {v} > {high!r}:")
            self.fail(depth + 2, path, repr(f"must be <= {high}"))

    def _strings(self, schema: dict[str, Any], v: str, path: list[str], depth: int) -> None:
        min_len, max_len = schema.get("minLength"), schema.get("maxLength")
        pattern = schema.get("pattern")
        if min_len is None and max_len is None and pattern is None:
            return
        self.emit(depth, f"if type({v}) is str:")
        if min_len is not None:
            self.emit(depth + 1, f"if len({v}) < {min_len}:")
            self.fail(depth + 2, path, repr(f"must be at least {min_len} characters"))
        if max_len is not None:
            self.emit(depth + 1, f"if len({v}) > {max_len}:")
            self.fail(depth + 2, path, repr(f"must be at most {max_len} characters"))
        if pattern is not None:
            regex = self.constant(_ecma_pattern(pattern))
            self.emit(depth + 1, f"if not {regex}.search({v}):")
            self.fail(depth + 2, path, repr(f"does not match {pattern}"))

    def _arrays(self, schema: dict[str, Any], v: str, path: list[str], depth: int) -> None:
        min_items, max_items = schema.get("minItems"), schema.get("maxItems")
        items = schema.get("items")
        if min_items is None and max_items is None and items is None:
            return
        self.emit(depth, f"if type({v}) is list:")
        if min_items is not None:
            self.emit(depth + 1, f"if len({v}) < {min_items}:")
            self.fail(depth + 2, path, repr(f"must hold at least {min_items} item(s)"))
        if max_items is not None:
            self.emit(depth + 1, f"if len({v}) > {max_items}:")
            self.fail(depth + 2, path, repr(f"must hold at most {max_items} item(s)"))
        if items is not None:
            index, item = self.name("i"), self.name("v")
            self.emit(depth + 1, f"for {index}, {item} in enumerate({v}):")
            before = len(self.lines)
            self.node(items, item, [*path, index], depth + 2)
            if len(self.lines) == before:
                self.emit(depth + 2, "pass")

    def _objects(self, schema: dict[str, Any], v: str, path: list[str], depth: int) -> None:
        required = list(schema.get("required", ()))
        properties: dict[str, Any] = schema.get("properties", {})
        closed = schema.get("additionalProperties") is False
        if not (required or properties or closed):
            return
        self.emit(depth, f"if type({v}) is dict:")
        self.emit(depth + 1, "pass")
        for key in required:
            self.emit(depth + 1, f"if {key!r} not in {v}:")
            self.fail(depth + 2, [*path, repr(key)], repr("is required"))
        if closed:
            known = self.constant(frozenset(properties))
            key_var = self.name("k")
            self.emit(depth + 1, f"for {key_var} in {v}:")
            self.emit(depth + 2, f"if {key_var} not in {known}:")
            self.fail(depth + 3, [*path, key_var], repr("is not a known field"))
        for key, sub in properties.items():
            value = self.name("v")
            self.emit(depth + 1, f"{value} = {v}.get({key!r}, _MISSING)")
            self.emit(depth + 1, f"if {value} is not _MISSING:")
            before = len(self.lines)
            self.node(sub, value, [*path, repr(key)], depth + 2)
            if len(self.lines) == before:
                self.lines.pop()
                self.lines.pop()


def compile_schema(schema: dict[str, Any]) -> Validator:
    generator = _Generator()
    generator.node(schema, "value", [], 1)
    source = "def validate(value):\n    pass\n" + "\n".join(generator.lines) + "\n"
    namespace: dict[str, Any] = {
        "_fail": _fail,
        "_type_name": _type_name,
        "_MISSING": _MISSING,
        **generator.constants,
    }
    exec(compile(source, "<collector schema>", "exec"), namespace)  # noqa: S102 - our own code
    validate: Validator = namespace["validate"]
    return validate
