"""The agents' telemetry pointed at `capture otlp`: the settings each agent reads, merged into
the user's own text (their entries and formatting kept) and taken out again.

- Claude Code: the `env` block of the user settings (`~/.claude/settings.json`; Claude Code
  reads telemetry variables there and ignores them in a project's settings). Only the logs
  exporter is set, with signal-specific endpoint and protocol, so that a metrics or traces
  exporter the user has keeps going where it goes.
- Gemini CLI: the `telemetry` object of `~/.gemini/settings.json`.
- Codex: an `[otel]` table in `~/.codex/config.toml`, between two marker comments.

A setting the user already has with another value is never overwritten: the merge stops with
one line naming it. Uninstalling removes only what still holds the value capture wrote."""

from __future__ import annotations

from typing import Any

from capture.errors import InputError
from capture.install.jsontext import (
    JsonTextError,
    Node,
    insert_member,
    parse,
    remove_member,
)

__all__ = [
    "CLAUDE_ENV",
    "CODEX_BEGIN",
    "CODEX_END",
    "ENDPOINT",
    "GEMINI_TELEMETRY",
    "OTEL_PATHS",
    "add_codex_otel",
    "add_json_otel",
    "remove_codex_otel",
    "remove_json_otel",
]

ENDPOINT = "http://127.0.0.1:4318"

CLAUDE_ENV: dict[str, str] = {
    "CLAUDE_CODE_ENABLE_TELEMETRY": "1",
    "OTEL_LOGS_EXPORTER": "otlp",
    "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL": "http/protobuf",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": f"{ENDPOINT}/v1/logs",
}

GEMINI_TELEMETRY: dict[str, Any] = {
    "enabled": True,
    "target": "local",
    "otlpEndpoint": ENDPOINT,
    "otlpProtocol": "http",
    "logPrompts": False,
}

#: agent -> its user-level settings file (`~` expanded by the caller)
OTEL_PATHS = {
    "claude-code": "~/.claude/settings.json",
    "gemini": "~/.gemini/settings.json",
    "codex": "~/.codex/config.toml",
}

CODEX_BEGIN = "# >>> capture otlp (capture install codex --otel) >>>"
CODEX_END = "# <<< capture otlp <<<"
_CODEX_BLOCK = (
    f"{CODEX_BEGIN}\n[otel]\nlog_user_prompt = false\n"
    f'exporter = {{ otlp-http = {{ endpoint = "{ENDPOINT}/v1/logs", protocol = "binary" }} }}\n'
    f"{CODEX_END}\n"
)


def _root(text: str, name: str) -> Node:
    try:
        root = parse(text)
    except JsonTextError as exc:
        raise InputError(f"{name}: cannot read it ({exc}); left unchanged") from None
    if root.kind != "object":
        raise InputError(f"{name}: not a JSON object; left unchanged")
    return root


def _plain(node: Node) -> Any:
    if node.kind == "object":
        return {m.key: _plain(m.value) for m in node.members}
    if node.kind == "array":
        return [_plain(i) for i in node.items]
    return node.value


def _ours(agent: str) -> tuple[str, dict[str, Any]]:
    if agent == "claude-code":
        return "env", dict(CLAUDE_ENV)
    if agent == "gemini":
        return "telemetry", dict(GEMINI_TELEMETRY)
    raise ValueError(agent)


def add_json_otel(text: str | None, agent: str, name: str) -> str:
    """`text` with capture's telemetry settings merged in (unchanged when they are there)."""
    key, wanted = _ours(agent)
    text = text if text is not None and text.strip() else "{}\n"
    root = _root(text, name)
    block = root.get(key)
    if block is None:
        return insert_member(text, root, key, wanted)
    if block.kind != "object":
        raise InputError(f'{name}: "{key}" is not an object; left unchanged')
    current = _plain(block)
    for setting, value in wanted.items():
        if setting in current and current[setting] != value:
            raise InputError(
                f'{name}: "{key}.{setting}" is already set to {current[setting]!r}; left '
                f"unchanged (set it to {value!r}, or remove it, to send it to capture otlp)"
            )
    for setting, value in wanted.items():
        if setting not in current:
            root = _root(text, name)
            block = root.get(key)
            assert block is not None
            text = insert_member(text, block, setting, value)
    return text


def remove_json_otel(text: str, agent: str, name: str) -> str:
    """`text` without the telemetry settings capture wrote (a setting since changed is kept;
    the block is removed when nothing else is left in it)."""
    key, wanted = _ours(agent)
    root = _root(text, name)
    block = root.get(key)
    if block is None or block.kind != "object":
        return text
    for setting, value in wanted.items():
        root = _root(text, name)
        block = root.get(key)
        assert block is not None
        index = block.index_of(setting)
        if index is not None and _plain(block.members[index].value) == value:
            text = remove_member(text, block, index)
    root = _root(text, name)
    block = root.get(key)
    if block is not None and block.kind == "object" and not block.members:
        index = root.index_of(key)
        assert index is not None
        text = remove_member(text, root, index)
    return text


def add_codex_otel(text: str | None) -> str:
    """config.toml with capture's `[otel]` table (unchanged when it is there); an `[otel]`
    table of the user's own is never touched."""
    text = text or ""
    if CODEX_BEGIN in text:
        return text
    if any(line.strip().startswith("[otel") for line in text.splitlines()):
        raise InputError(
            "config.toml: an [otel] table is already there; left unchanged (point its "
            f'exporter at otlp-http endpoint "{ENDPOINT}/v1/logs" to send it to capture otlp)'
        )
    # at the end: top-level keys must come before the first table, and a table header ends
    # the table before it
    if not text:
        return _CODEX_BLOCK
    return text + ("" if text.endswith("\n") else "\n") + "\n" + _CODEX_BLOCK


def remove_codex_otel(text: str) -> str:
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for line in lines:
        if line.rstrip("\n") == CODEX_BEGIN:
            inside = True
            continue
        if inside:
            if line.rstrip("\n") == CODEX_END:
                inside = False
            continue
        out.append(line)
    result = "".join(out)
    if result.endswith("\n\n") and not text.startswith(CODEX_BEGIN):
        result = result[:-1]  # the blank line put before our block
    return result
