"""`capture episodes` at 80 columns shows ids that `capture show` takes back: each the shortest
prefix no other episode shares, never cut by the table."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.conftest import RunCapture


def test_the_ids_listed_at_80_columns_are_unique_and_show_takes_them(
    tmp_path: Path, run_capture: RunCapture
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    recorded = []
    for turn in range(4):  # one episode per turn, started within the same second or so
        (ws / f"f{turn}.py").write_text(f"x = {turn}\n")
        body = {"file": f"f{turn}.py", "new_text": f"x = {turn}\n", "turn_id": f"turn-{turn}"}
        done = run_capture("propose", "--json", input=json.dumps(body), cwd=ws, check=True)
        recorded.append(json.loads(done.stdout)["episode"])
    assert len(set(recorded)) == 4
    table = run_capture("episodes", check=True, env={"COLUMNS": "80", "NO_COLOR": "1"}).stdout
    assert max(len(line) for line in table.splitlines()) <= 80
    shown = [m for line in table.splitlines() for m in re.findall(r"^│ ([0-9a-f]{7,}) ", line)]
    assert len(shown) == 4 and len(set(shown)) == 4, table
    assert all(any(full.startswith(s) for full in recorded) for s in shown)
    for short in shown:
        episode = json.loads(run_capture("show", short, "--json", check=True).stdout)
        assert episode["id"].startswith(short)
