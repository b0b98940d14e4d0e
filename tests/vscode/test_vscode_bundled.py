"""The per-platform package carries its server: on a machine where `capture` is not installed
and no pip step ran (a PATH with Debian's own python3 and nothing else of ours, no project on
PYTHONPATH), the linux-x64 .vsix is installed, a workspace opened, the server starts from the
package's bundled/libs, Claude Code's hooks are installed through the extension's command, the
hook command they name records an edit, and the status bar counts it."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from tests.conftest import NETGUARD
from tests.support.hook_support import example, make_workspace
from tests.vscode.codeserver import CACHE, CodeServer, needs_vscode, read_trace, run_driver

pytestmark = pytest.mark.slow

#: built by .ci/vscode-setup with editors/vscode/scripts/package_platform.py
BUNDLED_VSIX = CACHE / "agent-capture-linux-x64.vsix"
SYSTEM_PATH = "/usr/bin:/bin"


def _serve_environ(capture_home: Path) -> list[dict[str, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            raw = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if (
            b"serve" in argv
            and b"capture" in argv
            and f"CAPTURE_HOME={capture_home}".encode() in raw
        ):
            env = dict(x.decode("utf-8", "replace").split("=", 1) for x in raw if b"=" in x)
            env["argv"] = " ".join(a.decode() for a in argv if a)
            found.append(env)
    return found


def test_the_bundled_server_records_a_hook_edit_with_nothing_installed(
    tmp_path: Path, capture_home: Path
) -> None:
    needs_vscode()
    # the control: without the package's libraries, this python3 has no capture to run
    bare = subprocess.run(
        ["/usr/bin/python3", "-P", "-c", "import capture"],
        env={"PATH": SYSTEM_PATH},
        capture_output=True,
        check=False,
    )
    assert bare.returncode != 0
    if not BUNDLED_VSIX.exists():
        from tests.conftest import missing_tool

        missing_tool(f"{BUNDLED_VSIX} is not built; run .ci/vscode-setup")
    ws = make_workspace(tmp_path)
    (ws / ".claude").mkdir()
    base = tmp_path / "vscode"
    base.mkdir()
    launcher_dir = capture_home / "bin"
    env = {
        "PATH": SYSTEM_PATH,
        "VSCODE_CLI": "1",
        # the network guard only: this project's source is not importable
        "PYTHONPATH": str(NETGUARD),
        "CAPTURE_BIN_DIR": str(launcher_dir),
    }
    payload = json.dumps(example("claude_code_posttooluse_edit.json", ws))
    settings = {"agentCapture.statusBar.refreshSeconds": 1}
    # The server is read while the session lasts: once the driver's page closes, the extension
    # host may stop it before the driver hands back.
    serving: list[dict[str, str]] = []
    done = threading.Event()

    def watch_for_the_server() -> None:
        while not done.is_set() and not serving:
            serving.extend(_serve_environ(capture_home))
            done.wait(0.5)

    watcher = threading.Thread(target=watch_for_the_server, daemon=True)
    with CodeServer(base, capture_home, env=env, settings=settings, vsix=BUNDLED_VSIX) as server:
        watcher.start()
        seen = run_driver(
            "bundled.js",
            server,
            {
                "folder": str(ws),
                "payload": payload,
                "agentPath": f"{launcher_dir}{os.pathsep}{SYSTEM_PATH}",
            },
            timeout=400,
        )
        done.set()
        watcher.join()
        trace = read_trace(server)
    # the server runs Debian's python3 on the package's libraries, through the launcher
    assert serving, seen
    extensions = str(base / "extensions")
    for proc in serving:
        first = proc.get("PYTHONPATH", "").split(os.pathsep)[0]
        assert first.startswith(extensions) and "/bundled/libs/cp" in first, proc
        assert proc["argv"].startswith("/usr/bin/python3") or "python3" in proc["argv"], proc
    launcher = launcher_dir / "capture"
    assert "# agent-capture launcher" in launcher.read_text()
    bundled = [e for e in trace if e["event"] == "bundled"]
    assert bundled and bundled[0]["bundled"]["command"] == str(launcher), trace
    # the hooks name `capture` alone; the launcher answered it and the edit was recorded
    assert seen["command"] == "capture hook claude-code"
    assert seen["hook"]["status"] == 0 and seen["hook"]["stderr"] == "", seen["hook"]
    assert "1 proposal" in seen["after"]
    assert not [m for m in seen["notifications"] if "agent-capture" in m and "not" in m], seen
