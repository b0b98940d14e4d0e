"""The language of a file, from its extension (or its name, for Makefile and the like)."""

from __future__ import annotations

__all__ = ["OTHER", "language_of"]

OTHER = "other"

_BY_EXTENSION: dict[str, str] = {
    **dict.fromkeys(("py", "pyi", "pyw", "ipynb"), "Python"),
    **dict.fromkeys(("js", "mjs", "cjs", "jsx"), "JavaScript"),
    **dict.fromkeys(("ts", "mts", "cts", "tsx"), "TypeScript"),
    "rs": "Rust",
    "go": "Go",
    **dict.fromkeys(("java",), "Java"),
    **dict.fromkeys(("kt", "kts"), "Kotlin"),
    "scala": "Scala",
    **dict.fromkeys(("c", "h"), "C"),
    **dict.fromkeys(("cc", "cpp", "cxx", "hh", "hpp", "hxx"), "C++"),
    "cs": "C#",
    "swift": "Swift",
    **dict.fromkeys(("m", "mm"), "Objective-C"),
    "rb": "Ruby",
    "php": "PHP",
    **dict.fromkeys(("ex", "exs"), "Elixir"),
    **dict.fromkeys(("erl", "hrl"), "Erlang"),
    "hs": "Haskell",
    **dict.fromkeys(("ml", "mli"), "OCaml"),
    "lua": "Lua",
    **dict.fromkeys(("r",), "R"),
    "jl": "Julia",
    "dart": "Dart",
    "zig": "Zig",
    **dict.fromkeys(("sh", "bash", "zsh", "fish", "bashrc", "zshrc"), "Shell"),
    "sql": "SQL",
    **dict.fromkeys(("html", "htm"), "HTML"),
    **dict.fromkeys(("css", "scss", "sass", "less"), "CSS"),
    "vue": "Vue",
    "svelte": "Svelte",
    **dict.fromkeys(("md", "markdown", "rst", "txt", "adoc"), "Docs"),
    **dict.fromkeys(("json", "jsonc", "yaml", "yml", "toml", "ini", "cfg", "xml"), "Config"),
}

_BY_NAME: dict[str, str] = {
    "makefile": "Make",
    "gnumakefile": "Make",
    "dockerfile": "Docker",
    "containerfile": "Docker",
    "rakefile": "Ruby",
    "gemfile": "Ruby",
    "justfile": "Just",
}


def language_of(path: str) -> str:
    """'src/app.py' -> 'Python'; also accepts what the rollups keep: '.py', 'makefile'."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name in _BY_NAME:
        return _BY_NAME[name]
    _, dot, ext = name.rpartition(".")
    if not dot:
        return OTHER
    return _BY_EXTENSION.get(ext, OTHER)
