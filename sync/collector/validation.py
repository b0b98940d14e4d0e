"""A validator for the subset of JSON Schema the wire format uses, compiled into closures.

The same schema dicts are published in the OpenAPI description, so what the documentation
promises and what the collector enforces cannot drift apart. The subset: `type` (one or a list,
`null` included), `properties`, `required`, `additionalProperties` (bool), `items`, `enum`,
`minimum`, `maximum`, `minLength`, `maxLength`, `pattern`, `minItems`, `maxItems`. The first
violation wins and is reported with the path of the field (`episodes[3].episode.proposals[0].
similarity`), because one precise line helps a client more than a list of a hundred.
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


# Each check takes (value, path) and raises SchemaViolation. Paths are built lazily (a tuple of
# keys and indexes) so that the common, valid case pays nothing for them.
Path = tuple[str | int, ...]
Check = Callable[[Any, Path], None]
Validator = Callable[[Any], None]


def field_path(path: Path) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _fail(path: Path, message: str) -> None:
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


def _is_integer(value: Any) -> bool:
    # JSON does not tell 1 from 1.0; JSON Schema counts both as integers.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPE_TESTS: dict[str, Callable[[Any], bool]] = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": _is_integer,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _ecma_pattern(pattern: str) -> re.Pattern[str]:
    # JSON Schema patterns are ECMA-262: `$` ends the string (Python's `$` also matches before a
    # final newline) and `\d` is ASCII only.
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern, re.ASCII)


def compile_schema(schema: dict[str, Any]) -> Validator:
    check = _compile(schema)

    def validate(value: Any) -> None:
        check(value, ())

    return validate


def _compile(schema: dict[str, Any]) -> Check:
    checks: list[Check] = []
    types = schema.get("type")
    if types is not None:
        names = [types] if isinstance(types, str) else list(types)
        tests = [_TYPE_TESTS[n] for n in names]
        expected = " or ".join(names)

        def check_type(value: Any, path: Path) -> None:
            for test in tests:
                if test(value):
                    return
            _fail(path, f"expected {expected}, got {_type_name(value)}")

        checks.append(check_type)
    if "enum" in schema:
        allowed = list(schema["enum"])

        def check_enum(value: Any, path: Path) -> None:
            if not any(value == a and type(value) is type(a) for a in allowed):
                _fail(path, f"must be one of {', '.join(map(str, allowed))}")

        checks.append(check_enum)
    checks.extend(_number_checks(schema))
    checks.extend(_string_checks(schema))
    checks.extend(_array_checks(schema))
    checks.extend(_object_checks(schema))

    def check_all(value: Any, path: Path) -> None:
        for c in checks:
            c(value, path)

    return checks[0] if len(checks) == 1 else check_all


def _number_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is None and high is None:
        return checks

    def check_range(value: Any, path: Path) -> None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return
        if low is not None and value < low:
            _fail(path, f"must be >= {low}")
        if high is not None and value > high:
            _fail(path, f"must be <= {high}")

    checks.append(check_range)
    return checks


def _string_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    min_len, max_len = schema.get("minLength"), schema.get("maxLength")
    if min_len is not None or max_len is not None:

        def check_length(value: Any, path: Path) -> None:
            if not isinstance(value, str):
                return
            if min_len is not None and len(value) < min_len:
                _fail(path, f"must be at least {min_len} characters")
            if max_len is not None and len(value) > max_len:
                _fail(path, f"must be at most {max_len} characters")

        checks.append(check_length)
    if "pattern" in schema:
        regex = _ecma_pattern(schema["pattern"])
        shown = schema["pattern"]

        def check_pattern(value: Any, path: Path) -> None:
            if isinstance(value, str) and not regex.search(value):
                _fail(path, f"does not match {shown}")

        checks.append(check_pattern)
    return checks


def _array_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    min_items, max_items = schema.get("minItems"), schema.get("maxItems")
    if min_items is not None or max_items is not None:

        def check_count(value: Any, path: Path) -> None:
            if not isinstance(value, list):
                return
            if min_items is not None and len(value) < min_items:
                _fail(path, f"must hold at least {min_items} item(s)")
            if max_items is not None and len(value) > max_items:
                _fail(path, f"must hold at most {max_items} item(s)")

        checks.append(check_count)
    if "items" in schema:
        item_check = _compile(schema["items"])

        def check_items(value: Any, path: Path) -> None:
            if isinstance(value, list):
                for i, item in enumerate(value):
                    item_check(item, (*path, i))

        checks.append(check_items)
    return checks


def _object_checks(schema: dict[str, Any]) -> list[Check]:
    checks: list[Check] = []
    required = list(schema.get("required", ()))
    properties = {k: _compile(v) for k, v in schema.get("properties", {}).items()}
    closed = schema.get("additionalProperties") is False
    if not (required or properties or closed):
        return checks

    def check_object(value: Any, path: Path) -> None:
        if not isinstance(value, dict):
            return
        for key in required:
            if key not in value:
                _fail((*path, key), "is required")
        for key, item in value.items():
            check = properties.get(key)
            if check is not None:
                check(item, (*path, key))
            elif closed:
                _fail((*path, key), "is not a known field")

    checks.append(check_object)
    return checks
