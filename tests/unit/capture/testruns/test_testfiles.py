from __future__ import annotations

import pytest

from capture.testruns.testfiles import file_of_test_id, is_test_path, lives_in, workspace_relative


@pytest.mark.parametrize(
    "path",
    [
        "tests/test_a.py",
        "test_a.py",
        "pkg/a_test.py",
        "conftest.py",
        "tests/fixtures/data.json",
        "pkg/calc_test.go",
        "src/sum.test.ts",
        "src/sum.spec.jsx",
        "src/__tests__/sum.js",
        "src/test/java/com/x/FooTest.java",
        "app/FooIT.java",
        "spec/models/user_spec.rb",
    ],
)
def test_test_paths(path: str) -> None:
    assert is_test_path(path)


@pytest.mark.parametrize(
    "path", ["src/app.py", "contest.py", "testing_utils.md", "src/latest.ts", "Main.java"]
)
def test_source_paths(path: str) -> None:
    assert not is_test_path(path)


def test_file_of_test_id() -> None:
    assert file_of_test_id("tests/test_a.py::TestX::test_y[1-2]") == "tests/test_a.py"
    assert file_of_test_id("src/a.test.ts > sum > adds") == "src/a.test.ts"
    assert file_of_test_id("tests/test_b.py") == "tests/test_b.py"
    assert file_of_test_id("TestB") is None
    assert file_of_test_id("tests::b") is None
    assert file_of_test_id("math › adds") is None


def test_workspace_relative() -> None:
    assert workspace_relative("tests/test_a.py", "") == "tests/test_a.py"
    assert workspace_relative("tests/test_a.py", "sub") == "sub/tests/test_a.py"
    assert workspace_relative("../x.py", "sub") == "x.py"
    assert workspace_relative("../x.py", "") is None
    assert workspace_relative("/ws/sub/t.py", "/ws") == "sub/t.py"
    assert workspace_relative("/elsewhere/t.py", "/ws") is None


def test_lives_in_by_path() -> None:
    edited = {"tests/test_a.py", "pkg/sub/test_b.py"}
    assert lives_in("tests/test_a.py", None, edited)
    assert lives_in("./tests/test_a.py", None, edited)
    assert lives_in("sub/test_b.py", None, edited)  # a report written from pkg/
    assert lives_in("/home/u/ws/tests/test_a.py", None, edited)  # an absolute file attribute
    assert not lives_in("tests/test_c.py", None, edited)
    assert not lives_in(None, None, edited)


def test_lives_in_by_classname() -> None:
    edited = {"tests/test_a.py", "src/test/java/com/example/FooTest.java", "test_root.py"}
    assert lives_in(None, "tests.test_a", edited)
    assert lives_in(None, "tests.test_a.TestClass", edited)
    assert lives_in(None, "com.example.FooTest", edited)
    assert lives_in(None, "com.example.FooTest$Inner", edited)
    assert lives_in(None, "test_root", edited)
    assert not lives_in(None, "com.example.BarTest", edited)
    # A one-part name must name the whole file, not the end of a longer module path.
    assert not lives_in(None, "FooTest", edited)
