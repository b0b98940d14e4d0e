"""`capture run` is transparent: the same bytes, the same exit status, stdin passed, signals
forwarded, colours kept on a terminal; and a database it cannot write costs one warning."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import ROOT, capture_env

PY = sys.executable


def wrapped(*cmd: str) -> list[str]:
    return [PY, "-m", "capture", "run", "--", *cmd]


def run_both(
    home: Path, cmd: list[str], **kwargs: object
) -> tuple[subprocess.CompletedProcess[bytes], subprocess.CompletedProcess[bytes]]:
    env = capture_env(home)
    direct = subprocess.run(cmd, capture_output=True, env=env, timeout=60, **kwargs)  # type: ignore[call-overload]
    through = subprocess.run(wrapped(*cmd), capture_output=True, env=env, timeout=60, **kwargs)  # type: ignore[call-overload]
    return direct, through


@pytest.mark.parametrize("code", [0, 1, 2, 5])
def test_exit_codes_come_back_unchanged(tmp_path: Path, code: int) -> None:
    direct, through = run_both(tmp_path / "home", ["sh", "-c", f"exit {code}"])
    assert direct.returncode == through.returncode == code
    assert through.stderr == b""


def test_killed_and_interrupted_commands_end_the_wrapper_the_same_way(tmp_path: Path) -> None:
    home = tmp_path / "home"
    kill9 = ["sh", "-c", "kill -9 $$"]
    interrupt = [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGINT)"]
    for cmd, signo in ((kill9, signal.SIGKILL), (interrupt, signal.SIGINT)):
        direct, through = run_both(home, cmd)
        assert direct.returncode == through.returncode == -signo
    # As a shell reports it: 137 and 130.
    script = " ; ".join(
        f'"$@" {c} ; echo "exit=$?"'
        for c in ("sh -c 'kill -9 $$'", f"{PY} -c 'import os; os.kill(os.getpid(), 2)'")
    )
    out = subprocess.run(
        ["sh", "-c", script, "sh", *wrapped()],
        capture_output=True,
        env=capture_env(home),
        timeout=60,
    )
    assert out.stdout.decode().split() == ["exit=137", "exit=130"], out.stderr


def test_output_is_byte_identical_and_streams_stay_apart(tmp_path: Path) -> None:
    program = (
        "import random, sys\n"
        "data = bytes(range(256))\n"
        "sys.stdout.buffer.write(random.Random(7).randbytes(1_000_000))\n"
        "for i in range(2000):\n"
        "    line = b'line %d \\x1b[31mred\\x1b[0m \\r\\n' % i\n"
        "    sys.stdout.buffer.write(line + data[: i % 256])\n"
        "sys.stdout.buffer.write(b'\\x00\\xff no newline at the end')\n"
        "sys.stderr.buffer.write(b'to stderr \\xfe\\n' * 50)\n"
    )
    direct, through = run_both(tmp_path / "home", [PY, "-c", program])
    assert len(direct.stdout) > 1_250_000
    assert through.stdout == direct.stdout
    assert through.stderr == direct.stderr
    assert through.returncode == 0


def test_interleaving_is_kept_when_stdout_and_stderr_are_one_file(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "for i in range(300):\n"
        "    stream = sys.stdout if i % 3 else sys.stderr\n"
        "    stream.write(f'{i} ' + ('out' if i % 3 else 'err') + '\\n'); stream.flush()\n"
    )
    outputs = []
    for cmd in ([PY, "-c", program], wrapped(PY, "-c", program)):
        log = tmp_path / f"log{len(outputs)}"
        with log.open("wb") as fh:
            env = capture_env(tmp_path / "h")
            subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT, env=env, timeout=60)
        outputs.append(log.read_bytes())
    assert outputs[0] == outputs[1]
    assert outputs[0].count(b"err") == 100


def test_stdin_is_passed(tmp_path: Path) -> None:
    cmd = [PY, "-c", "import sys; sys.stdout.write(sys.stdin.read()[::-1])"]
    direct, through = run_both(tmp_path / "home", cmd, input=b"hello\nworld")
    assert through.stdout == direct.stdout == b"dlrow\nolleh"


SIGNAL_COUNTER = """
import os, signal, sys, time
got = []
signal.signal(signal.SIGINT, lambda s, f: got.append(s))
signal.signal(signal.SIGTERM, lambda s, f: got.append(s))
print("ready", flush=True)
deadline = time.time() + 20
while not got and time.time() < deadline:
    time.sleep(0.01)
time.sleep(0.5)  # a second, duplicated signal would arrive by now
print(f"signals={[signal.Signals(s).name for s in got]}", flush=True)
sys.exit(130 if got == [signal.SIGINT] else 143)
"""


def wait_for(stream: object, marker: bytes, timeout: float = 20.0) -> bytes:
    seen = b""
    deadline = time.time() + timeout
    fd = stream if isinstance(stream, int) else stream.fileno()  # type: ignore[attr-defined]
    while marker not in seen and time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    assert marker in seen, seen
    return seen


@pytest.mark.parametrize(("signo", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_sent_to_the_wrapper_reach_the_command_once(
    tmp_path: Path, signo: int, code: int
) -> None:
    proc = subprocess.Popen(
        wrapped(PY, "-c", SIGNAL_COUNTER),
        stdout=subprocess.PIPE,
        env=capture_env(tmp_path / "home"),
    )
    assert proc.stdout is not None
    wait_for(proc.stdout, b"ready")
    proc.send_signal(signo)
    out, _ = proc.communicate(timeout=30)
    assert f"signals=['{signal.Signals(signo).name}']".encode() in out
    assert proc.returncode == code


def spawn_in_terminal(argv: list[str], env: dict[str, str]) -> tuple[int, int]:
    """Start argv as the session leader of a new pseudo-terminal (as a terminal emulator
    would); returns (pid, master fd)."""
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.chdir(ROOT)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    return pid, master


def read_all(master: int, timeout: float = 30.0) -> bytes:
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        out += chunk
    return out


COLOURS = (
    "import os, sys\n"
    "tty = sys.stdout.isatty()\n"
    "print('\\x1b[32mcoloured\\x1b[0m' if tty else 'plain', os.get_terminal_size().columns)\n"
    "print('err on a tty' if sys.stderr.isatty() else 'err elsewhere', file=sys.stderr)\n"
)


def test_on_a_terminal_the_command_sees_a_terminal_and_output_is_identical(
    tmp_path: Path,
) -> None:
    env = capture_env(tmp_path / "home")
    outputs = []
    for argv in ([PY, "-c", COLOURS], wrapped(PY, "-c", COLOURS)):
        pid, master = spawn_in_terminal(argv, env)
        os.set_blocking(master, True)
        import fcntl
        import struct
        import termios

        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 132, 0, 0))
        outputs.append(read_all(master))
        _, status = os.waitpid(pid, 0)
        os.close(master)
        assert os.waitstatus_to_exitcode(status) == 0
    assert b"\x1b[32mcoloured\x1b[0m 132\r\n" in outputs[0]
    assert b"err on a tty" in outputs[0]
    assert outputs[1] == outputs[0]


def test_ctrl_c_on_the_terminal_reaches_the_command_once(tmp_path: Path) -> None:
    program = SIGNAL_COUNTER.replace(
        "sys.exit(130 if got == [signal.SIGINT] else 143)",
        "signal.signal(signal.SIGINT, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGINT)",
    )
    pid, master = spawn_in_terminal(wrapped(PY, "-c", program), capture_env(tmp_path / "home"))
    seen = wait_for(master, b"ready")
    os.write(master, b"\x03")  # the terminal turns this into SIGINT for its foreground group
    seen += read_all(master)
    _, status = os.waitpid(pid, 0)
    os.close(master)
    assert b"signals=['SIGINT']" in seen
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGINT  # the shell: 130


def test_an_unwritable_database_still_runs_the_command_and_warns_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "data").write_text("not a directory")  # the database cannot be created under it
    cmd = ["sh", "-c", "echo out; echo err >&2; exit 3"]
    direct = subprocess.run(cmd, capture_output=True, timeout=60)
    through = subprocess.run(wrapped(*cmd), capture_output=True, env=capture_env(home), timeout=60)
    assert through.returncode == 3
    assert through.stdout == direct.stdout == b"out\n"
    lines = through.stderr.decode().splitlines()
    assert lines[0] == "err"
    assert len(lines) == 2 and lines[1].startswith("capture: warning: this run was not recorded")


def test_a_command_that_does_not_exist(tmp_path: Path) -> None:
    through = subprocess.run(
        wrapped("no-such-command-anywhere"),
        capture_output=True,
        env=capture_env(tmp_path / "home"),
        timeout=60,
    )
    assert through.returncode == 127
    assert through.stderr.decode().strip() == (
        "capture: error: no-such-command-anywhere: command not found"
    )


def test_a_run_with_only_output_is_queued_and_recorded_in_the_background(
    tmp_path: Path,
) -> None:
    import re

    from tests.support.hook_support import rows, wait_for_queue

    home = tmp_path / "home"
    env = capture_env(home)
    # The first run creates the store, in the wrapper (the queue lives in the store).
    assert subprocess.run(wrapped("true"), env=env, timeout=60).returncode == 0
    summary = "print('==== 1 failed, 2 passed in 0.12s ===='); raise SystemExit(1)"
    cmd = [PY, "-X", "importtime", "-m", "capture", "run", "--name", "unit", "--", PY, "-c"]
    proc = subprocess.run([*cmd, summary], capture_output=True, env=env, timeout=60)
    assert proc.returncode == 1
    assert proc.stdout == b"==== 1 failed, 2 passed in 0.12s ====\n"
    imported = set(re.findall(r"^import time:.*\|\s+(\S+)$", proc.stderr.decode(), re.M))
    assert "capture.testruns.sources.handoff" in imported
    # Recording is left to the detached process: the wrapper loads neither the store (but the
    # queue's rows, `capture.store.inbox_rows`) nor the model, nor what they cost (dataclasses,
    # argparse).
    loaded = imported & {
        "capture.store.database",
        "capture.model",
        "capture.recording",
        "dataclasses",
    }
    assert loaded == set()
    store = sorted(m for m in imported if m.startswith("capture.store"))
    assert store == ["capture.store", "capture.store.inbox_rows"]

    wait_for_queue(home)
    found = rows(
        home,
        "SELECT name, exit_code, passed, failed, results_from FROM test_runs "
        "WHERE source = 'wrapper' ORDER BY started_at",
    )
    assert [tuple(r) for r in found] == [(None, 0, None, None, None), ("unit", 1, 2, 1, "summary")]


def test_a_store_removed_right_after_a_run_is_not_made_again(tmp_path: Path) -> None:
    import shutil

    home = tmp_path / "home"
    env = capture_env(home)
    assert subprocess.run(wrapped("true"), env=env, timeout=60).returncode == 0  # creates it
    for _ in range(3):  # a script's temporary home, removed as soon as its command returns
        assert subprocess.run(wrapped("true"), env=env, timeout=60).returncode == 0
        shutil.rmtree(home, ignore_errors=True)
        time.sleep(1.0)
        assert not (home / "data" / "capture.db").exists()
        assert subprocess.run(wrapped("true"), env=env, timeout=60).returncode == 0


def test_closed_output_descriptors_change_nothing(tmp_path: Path) -> None:
    env = capture_env(tmp_path / "home")
    assert subprocess.run(wrapped("true"), env=env, timeout=60).returncode == 0
    for closed in (1, 2):
        for code in (0, 3):
            script = f'"$@" sh -c "exit {code}" {closed}>&-'
            proc = subprocess.run(
                ["sh", "-c", script, "sh", *wrapped()], capture_output=True, env=env, timeout=60
            )
            assert proc.returncode == code, proc.stderr
            assert b"capture:" not in proc.stderr + proc.stdout


RUNNER_OUTPUT = ROOT / "tests" / "fixtures" / "runner-output"

#: A real runner's output (tests/fixtures/runner-output), replayed by a fake runner with the
#: real exit code; what the stored run must say, read from the output by hand: runner,
#: passed, failed, errors, skipped, failing ids. None: the output does not say.
REPLAYED = {
    "go/ok-only.plain.txt": ("go", None, 0, 0, None, []),
    "go/all.tty.txt": (
        "go",
        None,
        4,
        1,
        None,
        ["TestPanics", "example.com/calc/broken", "TestAreaWrong", "TestTable", "TestTable/zero"],
    ),
    "vitest/run.tty.txt": (
        "vitest",
        3,
        2,
        0,
        1,
        ["calc.test.js > calc > divides", "calc.test.js > calc > nested > slow"],
    ),
    "mix/run.plain.txt": ("exunit", 3, 1, 0, 1, ["test divides (CalcTest)"]),
    "phpunit/run.plain.txt": (
        "phpunit",
        3,
        1,
        1,
        1,
        ["CalcTest::testBroken", "CalcTest::testDivides"],
    ),
    "zig/test.plain.txt": ("zig", 2, 1, 0, 1, ["divides"]),
}


@pytest.mark.parametrize("fixture", sorted(REPLAYED))
def test_a_real_runners_output_is_recorded_with_its_counts(tmp_path: Path, fixture: str) -> None:
    import json

    from tests.support.hook_support import rows, wait_for_queue

    runner, file = fixture.split("/")
    exit_code = json.loads((RUNNER_OUTPUT / runner / "runs.json").read_text())[file]["exit_code"]
    fake = tmp_path / "fake-runner"
    fake.write_text(
        f"#!{PY}\nimport sys\n"
        f"sys.stdout.buffer.write(open({str(RUNNER_OUTPUT / fixture)!r}, 'rb').read())\n"
        f"raise SystemExit({exit_code})\n"
    )
    fake.chmod(0o755)
    home = tmp_path / "home"
    env = capture_env(home)
    assert subprocess.run(wrapped("true"), env=env, timeout=60).returncode == 0  # the store
    proc = subprocess.run(wrapped(str(fake)), capture_output=True, env=env, timeout=60)
    assert proc.returncode == exit_code
    assert proc.stdout == (RUNNER_OUTPUT / fixture).read_bytes()
    wait_for_queue(home)
    found = rows(
        home,
        "SELECT exit_code, runner, passed, failed, errors, skipped, failing_ids, results_from "
        "FROM test_runs WHERE command LIKE '%fake-runner%'",
    )
    assert len(found) == 1
    row = found[0]
    assert row["exit_code"] == exit_code and row["results_from"] == "summary"
    stored = (row["runner"], row["passed"], row["failed"], row["errors"], row["skipped"])
    assert (*stored, json.loads(row["failing_ids"])) == REPLAYED[fixture]
