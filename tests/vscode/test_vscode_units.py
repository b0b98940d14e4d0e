"""The extension's plain functions (status text, where `capture` is found, which agents a
workspace shows, the report's webview policy), compiled and run with node's test runner."""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import ROOT, missing_tool
from tests.vscode.codeserver import SKIP_VAR

EXTENSION = ROOT / "editors" / "vscode"


def test_extension_units() -> None:
    if os.environ.get(SKIP_VAR, "") == "1":
        pytest.skip(f"{SKIP_VAR}=1")
    if not (EXTENSION / "node_modules" / "typescript").exists():
        missing_tool("editors/vscode/node_modules is not installed; run .ci/vscode-setup")
    compiled = subprocess.run(
        ["npm", "run", "-s", "compile"], cwd=EXTENSION, capture_output=True, text=True
    )
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    result = subprocess.run(
        ["node", "--test", "test/"], cwd=EXTENSION, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# fail 0" in result.stdout and "# pass 6" in result.stdout, result.stdout
