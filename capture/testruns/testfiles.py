"""Which files hold tests, and which file a test lives in. Plain functions over path strings
(POSIX, relative to the workspace); nothing here touches the disk."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from functools import cache, lru_cache

__all__ = ["is_test_path", "lives_in", "file_of_test_id", "workspace_relative"]

_TEST_DIRS = frozenset({"test", "tests", "__tests__", "spec", "specs", "testdata", "e2e"})
_TEST_NAME_PATTERN = r"""^(?:
        test_.+\.py | .+_tests?\.py | conftest\.py | tests\.py       # pytest, unittest
      | .+_test\.go                                                 # go
      | .+\.(?:test|spec)\.[cm]?[jt]sx?                             # jest, vitest, mocha
      | .+(?:Test|Tests|IT|TestCase)\.(?:java|kt|scala|groovy)      # JUnit, Surefire
      | .+Tests?\.cs                                                # .NET
      | .+_(?:spec|test)\.rb | test_.+\.rb                          # rspec, minitest
      | .+Test\.php | .+_test\.(?:exs|dart|cc|cpp|c)                 # others
    )$"""
_SOURCE_EXT = re.compile(r"\.[A-Za-z0-9]{1,6}$")


@cache
def _test_name() -> re.Pattern[str]:
    # Compiled on first use: most processes that import this never ask.
    return re.compile(_TEST_NAME_PATTERN, re.VERBOSE)


# Cached: loading episodes asks this of every edited file, and a workspace's agents edit the
# same files over and over.
@lru_cache(maxsize=4096)
def is_test_path(path: str) -> bool:
    """True for files that hold tests or their fixtures: under a tests directory, or named the
    way test runners find tests (test_x.py, x_test.go, x.test.ts, FooTest.java, ...)."""
    parts = path.replace("\\", "/").split("/")
    if not _TEST_DIRS.isdisjoint(parts[:-1]):
        return True
    return bool(_test_name().match(parts[-1]))


def file_of_test_id(test_id: str) -> str | None:
    """The file a test id names, when the id carries one: pytest node ids (`file.py::name`),
    vitest (`file.ts > suite > name`), a bare path. None for ids without a file (go, cargo)."""
    head: str | None = None
    if "::" in test_id:
        head = test_id.split("::", 1)[0]
    elif " > " in test_id:
        head = test_id.split(" > ", 1)[0]
    elif "/" in test_id or _SOURCE_EXT.search(test_id):
        head = test_id
    if head is None:
        return None
    head = head.strip()
    if not head or " " in head or not _SOURCE_EXT.search(head):
        return None
    return head


def workspace_relative(path: str, base: str) -> str | None:
    """`path` (relative to `base`, itself relative to the workspace; or absolute with `base`
    absolute) made relative to the workspace; None when it leaves the workspace."""
    path = path.replace("\\", "/")
    if posixpath.isabs(path):
        if not posixpath.isabs(base):
            return None
        rel = posixpath.relpath(posixpath.normpath(path), posixpath.normpath(base))
    else:
        rel = posixpath.normpath(posixpath.join(base, path)) if base else posixpath.normpath(path)
    if rel == ".." or rel.startswith("../") or rel == ".":
        return None
    return rel


def _module(path: str) -> str:
    """src/test/java/com/x/FooTest.java -> src.test.java.com.x.FooTest"""
    stem = path[: -len(m.group(0))] if (m := _SOURCE_EXT.search(path)) else path
    return stem.replace("/", ".")


def _classname_in(classname: str, path: str) -> bool:
    # A JUnit classname is the test's module (pytest: tests.test_a[.TestClass]) or its class
    # (Surefire: com.x.FooTest, inner classes with $). Its longest dotted prefix that names
    # the edited file decides; a one-part prefix must name the whole file, not a suffix of it.
    parts = classname.replace("$", ".").replace("/", ".").split(".")
    module = _module(path)
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if module == prefix or (n >= 2 and module.endswith("." + prefix)):
            return True
    return False


def lives_in(file: str | None, classname: str | None, edited: Collection[str]) -> bool:
    """Whether a test whose file (or JUnit classname) is given lives in one of the edited files.

    `file` is compared as a path (also as a suffix: reports written from a sub-directory name
    files relative to it); `classname` as a dotted module or class name."""
    if file:
        norm = posixpath.normpath(file.replace("\\", "/")).lstrip("/")
        for path in edited:
            if path == norm or path.endswith("/" + norm) or norm.endswith("/" + path):
                return True
        return False
    if classname:
        return any(_classname_in(classname, path) for path in edited)
    return False
