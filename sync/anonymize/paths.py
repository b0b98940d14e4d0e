"""File paths in an uploaded episode: which files may go at all, and how their names are hidden.

Paths are relative to the workspace. Directory names become a salted HMAC (10 hex digits) except
common names that say nothing about a project (src, tests, lib, ...), which stay readable; the
same name always gives the same digits, so a team still sees that two edits touched one folder.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

from capture.globs import glob_regex
from sync.anonymize.secrets.keyed import hmac_sha256

__all__ = [
    "ALWAYS_EXCLUDED",
    "COMMON_NAMES",
    "PathHasher",
    "always_excluded",
    "file_name",
    "glob_to_regex",
    "language_of",
    "selected",
]

#: Files never uploaded, whatever the settings: environment files, keys, keystores, credentials.
ALWAYS_EXCLUDED: tuple[str, ...] = (
    ".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.p8", "*.jks",
    "*.keystore", "*.kdbx", "*.gpg", "*.asc", "*.ovpn", "id_rsa*", "id_dsa*", "id_ecdsa*",
    "id_ed25519*", "*.ppk", ".netrc", "_netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials",
    ".htpasswd", "*.tfvars", "*.tfstate", "*.tfstate.*", "credentials", "credentials.json",
    "service-account*.json", "secrets.yml", "secrets.yaml", "secrets.json", ".dockercfg",
    "**/.ssh/**", "**/.aws/**", "**/.gnupg/**", "**/.docker/config.json", "**/.kube/config",
)  # fmt: skip

#: Directory (and, at the metrics level, file stem) names kept readable.
COMMON_NAMES = frozenset(
    {
        "src", "source", "lib", "libs", "pkg", "cmd", "internal", "app", "apps", "api", "bin",
        "include", "test", "tests", "testing", "spec", "specs", "__tests__", "e2e", "unit",
        "integration", "fixtures", "docs", "doc", "examples", "example", "scripts", "tools",
        "config", "configs", "conf", "utils", "util", "helpers", "common", "core", "shared",
        "models", "views", "controllers", "components", "pages", "routes", "services", "server",
        "client", "web", "static", "public", "assets", "styles", "templates", "migrations",
        "main", "index", "__init__", "__main__", "setup", "conftest", "mod", "build", "dist",
        "vendor", "packages", "crates", "modules", "node_modules", ".github", "workflows", "ci",
        "README", "readme", "CHANGELOG", "LICENSE", "Makefile", "Dockerfile", "pyproject",
        "package", "Cargo", "go", "benchmarks", "bench", "data", "resources", "res", "java",
        "kotlin", "python", "js", "ts", "types", "hooks", "store", "cli", "handlers", "db",
    }
)  # fmt: skip

_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript", ".tsx": "typescript",
    ".go": "go", ".rs": "rust", ".java": "java", ".kt": "kotlin", ".kts": "kotlin",
    ".scala": "scala", ".rb": "ruby", ".php": "php", ".cs": "csharp", ".fs": "fsharp",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp",
    ".hh": "cpp", ".m": "objective-c", ".mm": "objective-c", ".swift": "swift",
    ".dart": "dart", ".lua": "lua", ".r": "r", ".jl": "julia", ".ex": "elixir", ".exs": "elixir",
    ".erl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".clj": "clojure", ".sh": "shell",
    ".bash": "shell", ".zsh": "shell", ".fish": "shell", ".ps1": "powershell", ".sql": "sql",
    ".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".sass": "scss",
    ".less": "less", ".vue": "vue", ".svelte": "svelte", ".json": "json", ".yaml": "yaml",
    ".yml": "yaml", ".toml": "toml", ".xml": "xml", ".md": "markdown", ".rst": "rst",
    ".tf": "terraform", ".proto": "protobuf", ".zig": "zig", ".nim": "nim", ".el": "elisp",
    ".vim": "vim", ".tex": "latex", ".ipynb": "jupyter", ".gradle": "gradle",
}  # fmt: skip
_NAMED_LANGUAGES = {"Makefile": "make", "Dockerfile": "dockerfile", "CMakeLists.txt": "cmake"}


@lru_cache(maxsize=512)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """A glob over workspace-relative POSIX paths. `**` crosses directories, `*` and `?` do not.
    A pattern without `/` matches a file name at any depth (as in .gitignore); a pattern ending
    in `/` matches everything under such a directory."""
    pattern = pattern.strip()
    if pattern.endswith("/"):
        pattern += "**"
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    body = glob_regex(pattern)
    return re.compile(("" if anchored else "(?:.*/)?") + body + r"\Z", re.DOTALL)


@lru_cache(maxsize=256)
def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{glob_to_regex(p).pattern})" for p in patterns), re.DOTALL)


def _matches(path: str, patterns: Sequence[str]) -> bool:
    return bool(patterns) and _any_of(tuple(patterns)).match(path) is not None


def _required_literal(pattern: str) -> str:
    """The longest run of literal characters every path matching `pattern` holds."""
    runs = re.split(r"\*\*/|[*?]", pattern)
    return max(runs, key=len)


def _literal_hint(patterns: Sequence[str]) -> re.Pattern[str]:
    """An expression found in every path one of `patterns` matches: their literals, as one
    search (a literal holding another is left out: where it is, the other is too)."""
    literals = {_required_literal(p) for p in patterns}
    assert all(literals), "every pattern names something literal"
    minimal = sorted(a for a in literals if not any(b != a and b in a for b in literals))
    return re.compile("|".join(re.escape(a) for a in minimal))


#: Most paths hold none of the always-excluded patterns' literals, and skip their expression
#: (0.8 us instead of 5).
_EXCLUDED_HINT = _literal_hint(ALWAYS_EXCLUDED)


def always_excluded(path: str) -> bool:
    path = path.replace("\\", "/")
    return _EXCLUDED_HINT.search(path) is not None and _matches(path, ALWAYS_EXCLUDED)


@lru_cache(maxsize=65536)
def _selected(path: str, include: tuple[str, ...], exclude: tuple[str, ...]) -> bool:
    path = path.replace("\\", "/")
    if always_excluded(path):
        return False
    if include and not _matches(path, include):
        return False
    return not (exclude and _matches(path, exclude))


def selected(path: str, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> bool:
    """May this file's edits be uploaded? Never for the always-excluded files; otherwise when
    it matches an include pattern (or there are none) and no exclude pattern."""
    return _selected(path, tuple(include), tuple(exclude))


def file_name(path: str) -> str:
    """The last part of a path, `/` or `\\` separated: what `PathHasher.path` passes to `scrub`."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def language_of(path: str) -> str | None:
    name = file_name(path)
    if name in _NAMED_LANGUAGES:
        return _NAMED_LANGUAGES[name]
    dot = name.rfind(".")
    return _LANGUAGES.get(name[dot:].lower()) if dot > 0 else None


def _split_ext(name: str) -> tuple[str, str]:
    """('archive', '.tar.gz')-style split; a leading dot is part of the stem."""
    dot = name.find(".", 1)
    if dot <= 0:
        return name, ""
    ext = name[dot:]
    # Only short, plain extensions are kept: a long "extension" is part of the name.
    if len(ext) > 12 or not re.fullmatch(r"(?:\.[A-Za-z0-9]{1,8})+", ext):
        dot = name.rfind(".")
        ext = name[dot:]
        if dot <= 0 or len(ext) > 9 or not re.fullmatch(r"\.[A-Za-z0-9]{1,8}", ext):
            return name, ""
    return name[: len(name) - len(ext)], ext


class PathHasher:
    def __init__(self, key: bytes) -> None:
        self._key = key
        self._cache: dict[str, str] = {}
        self._directories: dict[str, str] = {}

    def name(self, name: str) -> str:
        """A readable common name, else its salted HMAC."""
        if name in COMMON_NAMES or name in ("", ".", ".."):
            return name
        return self.digest(name)

    def digest(self, name: str) -> str:
        """The salted HMAC of a name: 10 hex digits, cached (names recur)."""
        cached = self._cache.get(name)
        if cached is None:
            cached = hmac_sha256(self._key, name.encode("utf-8", "surrogatepass")).hex()
            cached = cached[:10]
            if len(self._cache) > 100_000:
                self._cache.clear()
            self._cache[name] = cached
        return cached

    def path(
        self,
        path: str,
        *,
        hash_file_name: bool,
        scrub: Callable[[str], str] | None = None,
    ) -> str:
        """Directories hashed; the file name hashed too (its extension kept) when asked, else
        passed through `scrub` (secrets and identity)."""
        path = path.replace("\\", "/")
        slash = path.rfind("/")
        name = path[slash + 1 :]
        if hash_file_name:
            stem, ext = _split_ext(name)
            name = self.name(stem) + ext
        elif scrub:
            name = scrub(name)
        if slash < 0:
            return name
        return f"{self._directory(path[:slash])}/{name}"

    def _directory(self, directory: str) -> str:
        """Each part hashed (or kept, if common), cached: the same directories recur."""
        hashed = self._directories.get(directory)
        if hashed is None:
            hashed = "/".join([self.name(d) for d in directory.split("/")])
            if len(self._directories) > 100_000:
                self._directories.clear()
            self._directories[directory] = hashed
        return hashed
