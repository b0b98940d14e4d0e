"""Schemathesis against the collector's own OpenAPI description: generated valid and invalid
requests, every check on (no 5xx, status codes, content types, headers and bodies as documented,
invalid data refused, valid data accepted, no route working without its token)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.collector.conftest import StartCollector
from tests.support.collector_support import make_token, stored_keys

SEED = os.environ.get("SCHEMATHESIS_SEED", "20261202")


def schemathesis(
    url: str, token: str, config: Path, *selection: str, examples: int
) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("schemathesis", path=str(Path(sys.executable).parent)) or shutil.which(
        "schemathesis"
    )
    assert exe, "schemathesis is in the test extra: pip install -e '.[test]'"
    return subprocess.run(
        [
            exe,
            "--config-file",
            str(config),
            "run",
            f"{url}/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            str(examples),
            "--seed",
            SEED,
            "--header",
            f"Authorization: Bearer {token}",
            *selection,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=config.parent,
        env={**os.environ, "NO_COLOR": "1", "SCHEMATHESIS_TELEMETRY": "false"},
    )


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_schemathesis_finds_nothing(
    backend: str,
    request: pytest.FixtureRequest,
    start_collector: StartCollector,
    tmp_path: Path,
) -> None:
    db = request.getfixturevalue("sqlite_url" if backend == "sqlite" else "pg_url")
    ingest = make_token(db, "fuzz", "ingest")
    export = make_token(db, "fuzz", "export")
    # Generous rate limits: 429 is documented, but valid data should meet a 2xx here.
    collector = start_collector(db, "--rate", "10000", "--burst", "10000")
    config = tmp_path / "schemathesis.toml"
    # The team in report and export paths is the token's, so that the success paths are explored;
    # other teams' 403 has its own tests.
    config.write_text('[parameters]\nteam = "fuzz"\n')
    runs = [
        schemathesis(collector.url, ingest, config, "--include-path", "/v1/episodes", examples=25),
        schemathesis(
            collector.url,
            export,
            config,
            *("--exclude-path", "/v1/episodes"),
            # signed deliveries have tests of their own (test_collector_webhooks)
            *("--exclude-path", "/webhooks/github", "--exclude-path", "/webhooks/gitlab"),
            examples=40,
        ),
    ]
    for run in runs:
        assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-2000:]
        assert "No issues found" in run.stdout, run.stdout[-3000:]
    assert "Tested: 1" in runs[0].stdout and "Tested: 3" in runs[1].stdout
    # Valid generated batches were stored, not merely answered.
    assert sum(stored_keys(db, "fuzz").values()) > 0
