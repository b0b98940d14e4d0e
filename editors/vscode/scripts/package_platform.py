"""Build the VS Code extension's per-platform .vsix files, each carrying agent-capture and its
dependencies' wheels for that platform in bundled/libs (no code-server needed).

    python editors/vscode/scripts/package_platform.py --target linux-x64 [--target ...]
        [--python 3.11 --python 3.12 ...] [--out DIR]

For each target and each Python version, pip installs this project's wheel and its
dependencies for that platform (`--platform ... --only-binary=:all:`) into
bundled/libs/cpXY; whatever is identical for every version moves to bundled/libs/common. The
extension runs `python -P -m capture` with those two folders on PYTHONPATH, using the
interpreter the Python extension selected or a `python3` >= 3.11 on PATH. Then
`vsce package --target` writes agent-capture-<target>.vsix. Needs the extension's node modules
(`npm ci` in editors/vscode) and a package index that serves the target's wheels.

Dependency markers: pip evaluates the markers of transitive dependencies for the machine that
builds, not the target; this project's own dependencies are evaluated here for the target, and
a target's known marker-only needs are added (colorama on Windows).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

EXTENSION = Path(__file__).resolve().parent.parent
REPO = EXTENSION.parent.parent

#: vsce target -> (pip platform tags, marker environment, extra requirements)
TARGETS: dict[str, tuple[list[str], dict[str, str], list[str]]] = {
    "linux-x64": (
        [f"manylinux_2_{v}_x86_64" for v in (28, 17, 5)] + ["manylinux2014_x86_64"],
        {"sys_platform": "linux", "platform_machine": "x86_64", "platform_system": "Linux"},
        [],
    ),
    "linux-arm64": (
        [f"manylinux_2_{v}_aarch64" for v in (28, 17)] + ["manylinux2014_aarch64"],
        {"sys_platform": "linux", "platform_machine": "aarch64", "platform_system": "Linux"},
        [],
    ),
    "darwin-x64": (
        [f"macosx_{v}_x86_64" for v in ("10_9", "10_12", "10_15", "11_0", "12_0", "13_0")]
        + [f"macosx_{v}_universal2" for v in ("10_9", "10_12", "11_0")],
        {"sys_platform": "darwin", "platform_machine": "x86_64", "platform_system": "Darwin"},
        [],
    ),
    "darwin-arm64": (
        [f"macosx_{v}_arm64" for v in ("11_0", "12_0", "13_0", "14_0")]
        + [f"macosx_{v}_universal2" for v in ("10_9", "10_12", "11_0")],
        {"sys_platform": "darwin", "platform_machine": "arm64", "platform_system": "Darwin"},
        [],
    ),
    "win32-x64": (
        ["win_amd64"],
        {"sys_platform": "win32", "platform_machine": "AMD64", "platform_system": "Windows"},
        ["colorama"],
    ),
}

#: not needed at run time (sqlite-utils names pip for its own `install` command)
DROP = ("pip", "pip-*.dist-info", "bin", "__pycache__")


def _run(argv: list[str], cwd: Path | None = None) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise SystemExit(f"failed: {' '.join(argv)}\n{tail}")


def build_wheel(work: Path) -> Path:
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work), str(REPO)])
    (wheel,) = work.glob("agent_capture-*.whl")
    return wheel


def requirements(wheel: Path, target: str, python: str) -> list[str]:
    """This project's dependencies whose markers hold on the target."""
    import zipfile

    from packaging.requirements import Requirement

    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = z.read(name).decode()
    environment = dict(TARGETS[target][1], python_version=python, extra="")
    found = []
    for line in metadata.splitlines():
        if not line.startswith("Requires-Dist: "):
            continue
        req = Requirement(line.removeprefix("Requires-Dist: "))
        if req.marker is None or req.marker.evaluate(environment):
            req.marker = None
            found.append(str(req))
    return found + TARGETS[target][2]


def install(wheel: Path, target: str, python: str, into: Path) -> None:
    platform_args = [a for tag in TARGETS[target][0] for a in ("--platform", tag)]
    common = [
        sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check",
        "--target", str(into), *platform_args, "--python-version", python,
        "--implementation", "cp", "--only-binary=:all:",
    ]  # fmt: skip
    _run([*common, "--no-deps", str(wheel)])
    _run([*common, *requirements(wheel, target, python)])
    for name in DROP:
        for path in into.glob(name):
            shutil.rmtree(path, ignore_errors=True)
    for cache in into.rglob("__pycache__"):
        shutil.rmtree(cache, ignore_errors=True)


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        h.update(str(f.relative_to(path.parent)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def share(libs: Path, versions: list[str]) -> None:
    """Entries identical under every version move to libs/common."""
    dirs = [libs / version for version in versions]
    common = libs / "common"
    common.mkdir()
    for entry in sorted(p.name for p in dirs[0].iterdir()):
        if len({_digest(d / entry) if (d / entry).exists() else "" for d in dirs}) == 1:
            shutil.move(str(dirs[0] / entry), str(common / entry))
            for d in dirs[1:]:
                target = d / entry
                shutil.rmtree(target) if target.is_dir() else target.unlink()


def package(target: str, pythons: list[str], wheel: Path, out: Path) -> Path:
    bundled = EXTENSION / "bundled"
    shutil.rmtree(bundled, ignore_errors=True)
    libs = bundled / "libs"
    tags = []
    try:
        for python in pythons:
            tag = "cp" + python.replace(".", "")
            install(wheel, target, python, libs / tag)
            tags.append(tag)
        share(libs, tags)
        manifest = {"target": target, "pythons": pythons, "wheel": wheel.name}
        (bundled / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
        out.mkdir(parents=True, exist_ok=True)
        vsix = out / f"agent-capture-{target}.vsix"
        _run(["npx", "vsce", "package", "--target", target, "-o", str(vsix)], cwd=EXTENSION)
        return vsix
    finally:
        shutil.rmtree(bundled, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", choices=sorted(TARGETS), required=True)
    parser.add_argument("--python", action="append", help="Python versions (3.11, 3.12, 3.13)")
    parser.add_argument("--out", type=Path, default=REPO / "dist")
    parser.add_argument("--wheel", type=Path, help="this project's wheel, already built")
    args = parser.parse_args()
    pythons = args.python or ["3.11", "3.12", "3.13"]
    with tempfile.TemporaryDirectory() as work:
        wheel = args.wheel or build_wheel(Path(work))
        failed = []
        for target in args.target:
            try:
                vsix = package(target, pythons, wheel, args.out.resolve())
            except SystemExit as exc:
                failed.append(target)
                print(f"{target}: not built\n{exc}", file=sys.stderr)
                continue
            print(f"{target}: {vsix} ({vsix.stat().st_size / 1e6:.1f} MB)")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
