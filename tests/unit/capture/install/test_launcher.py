"""The per-user launcher: where it goes, what it runs, and which files are capture's to rewrite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from capture.install.launcher import is_launcher, launcher_dir, launcher_text


def test_the_launcher_folder_follows_the_environment() -> None:
    assert launcher_dir({"HOME": "/h"}) == "/h/.local/bin"
    assert launcher_dir({"HOME": "/h", "XDG_BIN_HOME": "/x/bin"}) == "/x/bin"
    assert launcher_dir({"HOME": "/h", "XDG_BIN_HOME": "rel"}) == "/h/.local/bin"
    assert launcher_dir({"HOME": "/h", "CAPTURE_BIN_DIR": "/c", "XDG_BIN_HOME": "/x"}) == "/c"


def test_only_capture_s_own_launcher_is_rewritten() -> None:
    assert is_launcher(launcher_text("/usr/bin/python3", None))
    pip_script = "#!/venv/bin/python\nimport sys\nfrom capture.cli import main\n"
    assert not is_launcher(pip_script)


def test_the_launcher_runs_capture_with_its_import_root_first(tmp_path: Path) -> None:
    """A real shell runs the launcher text: the interpreter named, with a folder holding a
    quoted space on PYTHONPATH ahead of the caller's."""
    root = tmp_path / "with space"
    (root / "capture").mkdir(parents=True)
    (root / "capture" / "__init__.py").write_text("")
    (root / "capture" / "__main__.py").write_text(
        "import os, sys; print(sys.argv[1:], os.environ['PYTHONPATH'])\n"
    )
    script = tmp_path / "capture"
    script.write_text(launcher_text(sys.executable, str(root)))
    script.chmod(0o755)
    done = subprocess.run(
        [str(script), "hook", "claude-code"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "/theirs"},
        check=True,
    )
    assert done.stdout == f"['hook', 'claude-code'] {root}:/theirs\n"
