"""The core's layering, as `capture/__init__.py` and each package's docstring state it, and
where SQL may be written.

Read from the source: every import statement (those inside functions and `TYPE_CHECKING` blocks
included) and every string that names one of our modules (`importlib` tables), so a forbidden
import fails here before any process runs. Each failure names the file, the line and the rule.

The SQL map: a statement for a database (a string that begins as one: SELECT, INSERT, UPDATE,
DELETE, CREATE, WITH, ALTER, DROP, REPLACE, PRAGMA and the transaction statements), and a call
of a connection's `execute`, `executemany` or `executescript`, appear only in

    capture/store/              the local SQLite store: every table of the core's database
    sync/store/                 sync's own local tables (its settings, outbox, projections)
    sync/collector/storage*     the team collector's storage (SQLite and PostgreSQL)

Everything else (hooks, importers, the server, the CLI, test-run sources, report, export, sync)
calls the store's functions.
"""

from __future__ import annotations

import ast
import re

import pytest

from tests.support.source_tree import MODULES, PACKAGES, ROOT, run_at_import

#: The core's components, lowest first. A module may import its own component and the
#: components of lower layers; never another component of its own layer, never a higher layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "capture",
        "capture.errors",
        "capture.model",
        "capture.dirs",
        "capture.files",
        "capture.globs",
        "capture.connection",
        "capture.moments",
    ),
    ("capture.edits", "capture.paths", "capture.install", "capture.followups"),
    ("capture.testruns", "capture.config", "capture.tiers"),
    ("capture.episode",),
    ("capture.store",),
    ("capture.recording",),
    ("capture.testruns.sources",),
    ("capture.hooks", "capture.telemetry"),
    ("capture.importers", "capture.report", "capture.watch"),
    ("capture.export",),
    ("capture.cli",),
    ("capture.__main__",),
)
LAYER = {component: i for i, layer in enumerate(LAYERS) for component in layer}
SHARED = frozenset(LAYERS[0])

#: Where a package's docstring promises less than its layer would allow: all it may import.
MAY_IMPORT: dict[str, frozenset[str]] = {
    "capture.edits": frozenset({"capture.errors", "capture.model"}),
    "capture.install": SHARED,
    "capture.followups": frozenset(),
    "capture.testruns": frozenset({"capture.errors", "capture.model", "capture.globs"})
    | {"capture.edits"},
    "capture.tiers": frozenset({"capture.errors", "capture.model", "capture.edits"}),
    "capture.episode": frozenset(
        {"capture.model", "capture.edits", "capture.testruns", "capture.tiers"}
    ),
    "capture.store": frozenset({"capture.errors", "capture.model", "capture.edits"})
    | {"capture.testruns", "capture.tiers", "capture.connection", "capture.episode"}
    | {"capture.moments"},
    "capture.report": SHARED | {"capture.edits", "capture.store", "capture.tiers"},
}

#: What `capture hook` imports before it returns to the agent. Their module-level imports,
#: followed through the project's own modules, may reach only these.
FAST_LANE = ("capture.cli", "capture.cli.hook_cmd", "capture.hooks.inbox")
FAST_LANE_MAY_LOAD = frozenset(
    {"__future__", "os", "sys", "time", "sqlite3", "pysqlite3", "collections.abc"}
    | {"capture", "capture.cli", "capture.cli.hook_cmd", "capture.dirs"}
    | {"capture.hooks", "capture.hooks.inbox", "capture.hooks.payloads"}
    | {"capture.connection", "capture.store", "capture.store.inbox_rows"}
)

#: What the pure decisions never touch: files, processes, clocks, the database, the network
#: (the stdlib's modules for them, and ours).
IMPURE = frozenset(
    {"os", "pathlib", "shutil", "tempfile", "sqlite3", "pysqlite3", "subprocess", "socket"}
    | {"threading"}
    | {"asyncio", "time", "datetime", "select", "signal", "fcntl", "io", "glob"}
    | {"capture.files", "capture.dirs", "capture.paths", "capture.config", "capture.store"}
)


def imports_in(
    source: str, name: str, *, is_package: bool = False, module_level: bool = False
) -> list[tuple[int, str]]:
    """(line, module) for each module the source of module `name` imports: `from a import b` is
    `a.b` when that is a module of ours, else `a`; a string constant that is exactly the name
    of one of our modules counts too (`importlib.import_module` tables)."""
    tree = ast.parse(source)
    package = name if is_package else name.rpartition(".")[0]
    nodes = run_at_import(tree) if module_level else ast.walk(tree)
    found = []
    for node in nodes:
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                anchor = parts[: len(parts) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((node.lineno, full if full in MODULES else base))
        elif (
            not module_level
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and node.value in MODULES
            and "." in node.value
        ):
            found.append((node.lineno, node.value))
    return found


def imports_of(name: str, *, module_level: bool = False) -> list[tuple[int, str]]:
    path = MODULES[name]
    return imports_in(
        path.read_text(), name, is_package=path.name == "__init__.py", module_level=module_level
    )


def component_of(name: str) -> str | None:
    if name == "capture":
        return "capture"
    best = None
    for component in LAYER:
        inside = name == component or name.startswith(component + ".")
        if component != "capture" and inside and (best is None or len(component) > len(best)):
            best = component
    return best


def _where(name: str, line: int) -> str:
    path = MODULES.get(name)
    return f"{path.relative_to(ROOT) if path else name}:{line}"


def layering_violations(edges: list[tuple[str, int, str]]) -> list[str]:
    """What breaks the layering in (importer, line, imported) edges, one line each."""
    problems = []
    for source, line, target in edges:
        top, src_top = target.split(".")[0], source.split(".")[0]
        if top not in PACKAGES:
            continue
        in_cli = component_of(source) in ("capture.cli", "capture.__main__")
        if top != src_top and top != "capture" and not in_cli:
            # server and sync are shells over the core: only `capture serve`, `capture sync`
            # and `capture collector` start them, and neither imports the other
            problems.append(f"{_where(source, line)} imports {target}: only the CLI may")
            continue
        if src_top != "capture" or top != "capture":
            if component_of(target) == "capture.cli" and not in_cli:
                problems.append(f"{_where(source, line)} imports {target}: only the CLI may")
            continue
        mine, theirs = component_of(source), component_of(target)
        if mine is None or theirs is None or mine == theirs or theirs == "capture":
            continue
        if LAYER[theirs] >= LAYER[mine]:
            relation = "a sibling" if LAYER[theirs] == LAYER[mine] else "a higher layer"
            problems.append(
                f"{_where(source, line)} imports {target}: {mine} (layer {LAYER[mine]}) may not "
                f"import {theirs}, {relation} (layer {LAYER[theirs]})"
            )
        elif mine in MAY_IMPORT and theirs not in MAY_IMPORT[mine]:
            allowed = ", ".join(sorted(MAY_IMPORT[mine]))
            problems.append(
                f"{_where(source, line)} imports {target}: {mine} imports only {allowed}"
            )
    return problems


def all_edges() -> list[tuple[str, int, str]]:
    return [(name, line, target) for name in MODULES for line, target in imports_of(name)]


def test_the_scan_sees_the_project() -> None:
    assert len(MODULES) > 100 and "capture.cli.hook_cmd" in MODULES
    edges = {(s, t) for s, _, t in all_edges()}
    # a few imports that are there: if the scan missed them, every rule below would pass
    assert ("capture.store.run_rollups", "capture.store.proposal_rollups") in edges
    assert ("capture.cli", "capture.cli.hook_cmd") in edges  # a string in the COMMANDS table
    assert ("capture.store.proposal_rows", "capture.edits.hunks") in edges  # inside a function


def test_every_import_form_is_read() -> None:
    source = (
        "import capture.errors\n"
        "import capture.edits.hunks as h\n"
        "from . import outcomes\n"
        "from ..store.database import Store\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from capture.report.figures import Report\n"
        "else:\n"
        "    from capture.dirs import capture_dirs\n"
        "class A:\n"
        "    from capture.globs import glob_regex\n"
        "def f():\n"
        "    from capture.cli import hook_cmd\n"
        "TABLE = {'x': 'capture.hooks.ingest', 'y': 'not.a.module'}\n"
    )
    name = "capture.edits.regions"
    assert sorted(imports_in(source, name)) == [
        (1, "capture.errors"),
        (2, "capture.edits.hunks"),
        (3, "capture.edits.outcomes"),
        (4, "capture.store.database"),
        (5, "typing"),
        (7, "capture.report.figures"),
        (9, "capture.dirs"),
        (11, "capture.globs"),
        (13, "capture.cli.hook_cmd"),
        (14, "capture.hooks.ingest"),
    ]
    at_import = sorted(imports_in(source, name, module_level=True))
    assert at_import == [
        (1, "capture.errors"),
        (2, "capture.edits.hunks"),
        (3, "capture.edits.outcomes"),
        (4, "capture.store.database"),
        (5, "typing"),
        (9, "capture.dirs"),
        (11, "capture.globs"),
    ]


def test_every_core_module_has_a_place_in_the_layers() -> None:
    unplaced = [n for n in MODULES if n.startswith("capture") and component_of(n) is None]
    assert unplaced == [], "add these to LAYERS (and to capture/__init__.py's map)"


def test_the_core_imports_only_downwards() -> None:
    problems = layering_violations(all_edges())
    assert not problems, "imports against the layering:\n" + "\n".join(problems)


def test_a_forbidden_import_is_named() -> None:
    # The rule itself, on edges as the source would give them: if this passes while a real
    # violation exists, the test above would not see it either.
    edges = [
        ("capture.edits.regions", 1, "capture.store.database"),
        ("capture.hooks.ingest", 2, "capture.cli.hook_cmd"),
        ("capture.store.database", 3, "sync.service"),
        ("capture.store.proposal_rollups", 4, "capture.store.run_rollups"),
        ("capture.testruns.linking", 5, "capture.testruns.sources.wrapper"),
        ("capture.importers.aider", 6, "capture.report.figures"),
        ("capture.cli.serve_cmd", 7, "server.app"),
        ("capture.report.html", 8, "capture"),
        ("capture.edits.outcomes", 9, "capture.files"),
        ("server.app", 10, "sync.service"),
        ("capture.report.html", 11, "capture.recording.recorder"),
    ]
    problems = layering_violations(edges)
    assert [p.split(" ")[0] for p in problems] == [
        "capture/edits/regions.py:1",
        "capture/hooks/ingest.py:2",
        "capture/store/database.py:3",
        "capture/testruns/linking.py:5",
        "capture/importers/aider.py:6",
        "capture/edits/outcomes.py:9",
        "server/app.py:10",
        "capture/report/html.py:11",
    ]
    assert "may not import capture.store, a higher layer" in problems[0]
    assert "may not import capture.cli, a higher layer" in problems[1]
    assert "only the CLI may" in problems[2] and "only the CLI may" in problems[6]
    assert "a sibling" in problems[4]
    assert "capture.edits imports only capture.errors, capture.model" in problems[5]


def test_the_two_rollup_modules_import_one_way() -> None:
    edges = {(s, t) for s, _, t in all_edges()}
    assert ("capture.store.proposal_rollups", "capture.store.run_rollups") not in edges


def _module_level_closure(start: tuple[str, ...]) -> dict[str, str]:
    """Every module reached from `start` by module-level imports, with who imported it first
    (imports of a package run its `__init__` too)."""
    reached: dict[str, str] = {name: "(start)" for name in start}
    queue = list(start)
    while queue:
        name = queue.pop(0)
        parts = name.split(".")
        for parent in (".".join(parts[:i]) for i in range(1, len(parts))):
            if parent in MODULES and parent not in reached:
                reached[parent] = name
                queue.append(parent)
        if name not in MODULES:
            continue
        for _, target in imports_of(name, module_level=True):
            if target not in reached:
                reached[target] = name
                if target in MODULES:
                    queue.append(target)
    return reached


def test_the_hook_fast_lane_loads_nothing_heavy() -> None:
    reached = _module_level_closure(FAST_LANE)
    extra = [f"{m} (imported by {by})" for m, by in reached.items() if m not in FAST_LANE_MAY_LOAD]
    assert not extra, "loaded on the path every agent tool call takes:\n" + "\n".join(extra)


def test_the_pytest_plugin_imports_nothing_atrun_at_import() -> None:
    # every pytest session of the user's imports it: the store is opened at the session's end
    reached = _module_level_closure(("capture.testruns.sources.pytest_plugin",))
    ours = sorted(m for m in reached if m.split(".")[0] in PACKAGES)
    assert ours == [
        "capture",
        "capture.testruns",
        "capture.testruns.sources",
        "capture.testruns.sources.pytest_plugin",
    ]


def _is_impure(target: str) -> bool:
    # `capture.store` is a package: what is imported is one of its modules
    return any(target == m or target.startswith(m + ".") for m in IMPURE)


def test_the_decisions_are_pure() -> None:
    assert _is_impure("capture.store.database") and _is_impure("os.path")
    assert not _is_impure("capture.edits.hunks") and not _is_impure("ossaudiodev")
    found = [
        f"{_where(name, line)} imports {target}"
        for name in MODULES
        if component_of(name) == "capture.edits" or name.startswith("capture.hooks.agents")
        for line, target in imports_of(name)
        if _is_impure(target)
        # the readers turn the payload's paths into absolute ones (text only, no file read)
        if not (name == "capture.hooks.agents.fields" and target == "os")
    ]
    assert not found, "the decisions must not touch the world:\n" + "\n".join(found)


def test_the_documented_map_is_the_tested_one() -> None:
    doc = ast.get_docstring(ast.parse(MODULES["capture"].read_text())) or ""
    documented: dict[str, int] = {}
    for layer, names in re.findall(r"^\s+(\d+)\s{2}(\S.*?)(?:\s{2,}|$)", doc, re.M):
        for item in names.split(", "):
            item = item.strip().rstrip("/").replace("/", ".")
            documented["capture" if item == "capture" else f"capture.{item}"] = int(layer)
    tested = {c: i for c, i in LAYER.items() if c != "capture"}
    assert documented == tested


@pytest.mark.parametrize("package", ["capture", "server", "sync"])
def test_every_package_says_what_it_holds(package: str) -> None:
    missing = [
        str(path.relative_to(ROOT))
        for name, path in MODULES.items()
        if name.split(".")[0] == package
        and path.name == "__init__.py"
        and not ast.get_docstring(ast.parse(path.read_text()))
    ]
    assert missing == []


#: SQLite's DB-API modules. One library per process (see `capture/connection.py`): only the
#: connection factory imports one; every other module takes it from there.
SQLITE_MODULES = frozenset({"sqlite3", "pysqlite3", "sqlean", "apsw"})


def sqlite_library_imports() -> list[str]:
    found = []
    for name in MODULES:
        if name == "capture.connection":
            continue
        for line, imported in imports_of(name):
            if imported.split(".")[0] in SQLITE_MODULES:
                found.append(
                    f"{_where(name, line)} imports {imported}: take it from capture.connection"
                )
    return found


def test_only_the_connection_factory_imports_a_sqlite_library() -> None:
    assert sqlite_library_imports() == []


def test_a_sqlite_library_imported_elsewhere_is_found() -> None:
    assert imports_in("import sqlite3\n", "capture.store.database") == [(1, "sqlite3")]
    assert imports_in("from pysqlite3 import dbapi2\n", "sync.outbox") == [(1, "pysqlite3")]
    assert imports_in("from capture.connection import sqlite3\n", "sync.outbox") == [
        (1, "capture.connection")
    ]


#: Where SQL may be written (paths from the project's root, as prefixes): see the module's
#: docstring.
SQL_HOMES = ("capture/store/", "sync/store/", "sync/collector/storage")

#: A string that begins as a SQL statement. Keywords are upper case, as all of our SQL writes
#: them, and each is followed by what makes it a statement, so prose ("Replace the text",
#: "with sync off", "delete") and names ("BEGIN", "COMMIT") do not count; a bare "BEGIN" or
#: "COMMIT" run on a connection is found by its `execute` call.
SQL_STATEMENT = re.compile(
    r"""^\s*(?:
        SELECT\s+\S
      | INSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\s
      | REPLACE\s+INTO\s
      | UPDATE\s+(?:OR\s+[A-Z]+\s+)?\S+\s+SET\s
      | DELETE\s+FROM\s
      | CREATE\s+(?:(?:TEMP|TEMPORARY|UNIQUE|VIRTUAL|OR\s+REPLACE)\s+)*
            (?:TABLE|INDEX|TRIGGER|VIEW|FUNCTION)\b
      | ALTER\s+TABLE\s
      | DROP\s+(?:TABLE|INDEX|TRIGGER|VIEW)\b
      | WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\(
      | PRAGMA\s+\w
      | BEGIN\s+(?:DEFERRED|IMMEDIATE|EXCLUSIVE|TRANSACTION)\b
      | (?:COMMIT|END|ROLLBACK)\s+TRANSACTION\b
      | ROLLBACK\s+TO\s
      | (?:SAVEPOINT|RELEASE)\s+\S
    )""",
    re.X,
)

#: A connection's methods that run SQL.
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})


def _string_text(node: ast.AST) -> str | None:
    """A string constant's text; an f-string's with `{}` for each value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
            for v in node.values
        )
    return None


def sql_in(source: str) -> list[tuple[int, str]]:
    """(line, what) for each SQL statement and each SQL call in the source."""
    found = []
    inside_fstring: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr):
            inside_fstring.update(id(v) for v in node.values)
        text = _string_text(node)
        if text is not None and id(node) not in inside_fstring and SQL_STATEMENT.match(text):
            first = text.strip().splitlines()[0]
            found.append((node.lineno, f"SQL {first[:40]!r}"))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in SQL_CALLS
        ):
            found.append((node.lineno, f"a call of .{node.func.attr}()"))
    return sorted(found)


def _may_hold_sql(relative: str) -> bool:
    return relative.startswith(SQL_HOMES)


def sql_outside_the_stores() -> list[str]:
    problems = []
    for path in MODULES.values():
        relative = path.relative_to(ROOT).as_posix()
        if _may_hold_sql(relative):
            continue
        for line, what in sql_in(path.read_text()):
            problems.append(f"{relative}:{line}: {what} outside the store (see SQL_HOMES)")
    return problems


def test_sql_is_written_only_in_the_stores() -> None:
    """SQL statements and the calls that run them appear only under `capture/store/` (the local
    database), `sync/store/` (sync's own tables) and `sync/collector/storage*` (the collector's
    storage)."""
    problems = sql_outside_the_stores()
    assert not problems, "SQL outside the stores:\n" + "\n".join(problems)


def test_the_sql_scan_sees_the_stores_sql() -> None:
    # if the scan missed these, the rule above would pass whatever the code held
    for name in (
        "capture.store.proposal_rows",
        "capture.store.inbox_rows",
        "sync.store.outbox_rows",
    ):
        assert len(sql_in(MODULES[name].read_text())) > 3, name
    assert not any(_may_hold_sql(f"capture/{p}/x.py") for p in ("hooks", "recording", "cli"))
    assert not _may_hold_sql("server/stored.py") and _may_hold_sql("sync/collector/storage.py")


def test_a_sql_statement_is_told_from_prose() -> None:
    source = (
        'a = "SELECT id FROM proposals WHERE dedupe_key = ?"\n'
        'b = f"SELECT {key} AS k FROM report_counts"\n'
        'c = """\n    INSERT OR IGNORE INTO hunks (id) VALUES (?)"""\n'
        'd = "UPDATE hook_inbox SET error = ? WHERE id = ?"\n'
        'e = "DELETE FROM hook_pending WHERE key = ?"\n'
        'f = "CREATE TEMP TABLE incoming (team text)"\n'
        'g = "WITH linked AS (SELECT 1) SELECT * FROM linked"\n'
        'h = f"PRAGMA busy_timeout={ms}"\n'
        'i = "BEGIN IMMEDIATE"\n'
        'j = f"SAVEPOINT {name}"\n'
        "conn.executemany(statement, rows)\n"
        # prose and words that are not statements
        'k = "Replace this code; answer with the replacement only:"\n'
        'l = "with sync off: the level to show"\n'
        'm = ("update", "delete", "create", "replace", "select")\n'
        'n = "Drop the watches of directories that were deleted"\n'
        'o = "*** Begin Patch"\n'
        'p = "# >>> agent-capture late signals >>>"\n'
        'q = "one INSERT, then the answer"\n'
        '__all__ = ["BEGIN", "COMMIT", "END"]\n'
    )
    assert [line for line, _ in sql_in(source)] == [1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12]
