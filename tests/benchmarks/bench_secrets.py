"""Secret detection figures on the labelled corpus (tests/support/secrets/labelled_corpus.py),
in one run:

- per kind, recall of our pipeline (a secret counts as found when none of it is left in the
  redacted projection, what the collector would store), beside detect-secrets alone (all its
  plugins, `scan_file` on each episode written as a file) and trufflehog3 (`--no-history`, its
  default rules and entropy, as a process) on the same files; a tool finds a secret when it
  reports the line the secret starts on;
- false positives: the share of negative lines (digests, UUIDs, base64 images, minified code,
  lock files, identifiers) each flags;
- anonymization throughput of the corpus' episodes beside `json.dumps` of the same episodes.

trufflehog3 pins old dependencies (attrs 20), so it is run from a virtualenv of its own:
`python -m venv ~/th3-venv && ~/th3-venv/bin/pip install trufflehog3`, then
TRUFFLEHOG3=~/th3-venv/bin/trufflehog3 (default: `trufflehog3` on PATH; left out when absent).

Run: python tests/benchmarks/bench_secrets.py
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy  # noqa: E402
from sync.anonymize.pipeline import _episode_texts  # noqa: E402
from tests.support.secrets.labelled_corpus import Labelled, make_corpus, negative_lines  # noqa: E402

SALT = b"benchmark salt, 32 bytes long..!"


def _files(
    tmp: Path, episodes: list[dict], labelled: list[Labelled]
) -> tuple[dict[int, Path], dict[int, list[tuple[Labelled, int]]]]:
    """Each episode's texts as one file; for each, its secrets and the line each starts on."""
    files: dict[int, Path] = {}
    where: dict[int, list[tuple[Labelled, int]]] = defaultdict(list)
    texts = {i: "\n".join(_episode_texts(e)) for i, e in enumerate(episodes)}
    for i, text in texts.items():
        path = tmp / f"episode{i:04d}.txt"
        path.write_text(text, encoding="utf-8")
        files[i] = path
    for x in labelled:
        probe = x.probes[0]
        for i, text in texts.items():
            at = text.find(probe)
            if at >= 0:
                where[i].append((x, text.count("\n", 0, at) + 1))
                break
    return files, where


def _detect_secrets_lines(paths: list[Path]) -> dict[str, set[int]]:
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    out: dict[str, set[int]] = defaultdict(set)
    with default_settings():
        collection = SecretsCollection()
        for path in paths:
            collection.scan_file(str(path))
        for filename, secret in collection:
            out[Path(filename).name].add(secret.line_number)
    return out


def _trufflehog3_lines(directory: Path) -> dict[str, set[int]] | None:
    exe = os.environ.get("TRUFFLEHOG3") or shutil.which("trufflehog3")
    if not exe:
        return None
    run = subprocess.run(
        [exe, "--no-history", "-z", "-f", "json", str(directory)],
        capture_output=True, text=True, timeout=1800,
    )  # fmt: skip
    out: dict[str, set[int]] = defaultdict(set)
    for item in json.loads(run.stdout or "[]"):
        out[Path(item["path"]).name].add(int(item["line"]))
    return out


def main() -> None:
    episodes, labelled = make_corpus()
    anonymizer = Anonymizer(SALT, Identity(usernames=("alice",), hostnames=("devbox",)))
    policy = WorkspacePolicy(Level.REDACTED)
    anonymizer.project(episodes[0], policy)  # loads detect-secrets and the rule sets
    # Ours: what would be stored.
    start = time.process_time()
    projections = [anonymizer.project(e, policy) for e in episodes]
    ours_rate = len(episodes) / (time.process_time() - start)
    start = time.process_time()
    for e in episodes:
        json.dumps(e)
    dumps_rate = len(episodes) / (time.process_time() - start)
    sent = [p.serialized or "" for p in projections]
    quarantined = sum(bool(p.quarantine) for p in projections)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        corpus_dir = tmp / "corpus"
        corpus_dir.mkdir()
        files, where = _files(corpus_dir, episodes, labelled)
        neg_dir = tmp / "negatives"
        neg_dir.mkdir()
        negatives = negative_lines()
        for n, line in enumerate(negatives):
            (neg_dir / f"negative{n:04d}.py").write_text(line + "\n", encoding="utf-8")
        ds = _detect_secrets_lines([*files.values(), *sorted(neg_dir.iterdir())])
        th = _trufflehog3_lines(tmp)

    total: Counter[str] = Counter()
    found: dict[str, Counter[str]] = {"ours": Counter(), "detect-secrets": Counter()}
    if th is not None:
        found["trufflehog3"] = Counter()
    for i, items in where.items():
        name = files[i].name
        for x, line in items:
            total[x.kind] += 1
            if not any(p in sent[i] for p in x.probes):
                found["ours"][x.kind] += 1
            if line in ds.get(name, ()):
                found["detect-secrets"][x.kind] += 1
            if th is not None and line in th.get(name, ()):
                found["trufflehog3"][x.kind] += 1
    fp = {
        "ours": sum(bool(anonymizer.scanner.find(line, "x.py")) for line in negatives),
        "detect-secrets": sum(bool(ds.get(f"negative{n:04d}.py")) for n in range(len(negatives))),
    }
    if th is not None:
        fp["trufflehog3"] = sum(bool(th.get(f"negative{n:04d}.py")) for n in range(len(negatives)))
    tools = list(found)
    located = sum(total.values())
    print(f"{len(labelled)} secrets of {len(total)} kinds in {len(episodes)} episodes "
          f"({located} located in the episode files); {len(negatives)} negative lines")  # fmt: skip
    print(f"\n| kind | n | {' | '.join(tools)} |")
    print("|---|---:|" + "---:|" * len(tools))
    for kind in sorted(total):
        cells = " | ".join(f"{found[t][kind] / total[kind]:.0%}" for t in tools)
        print(f"| {kind} | {total[kind]} | {cells} |")
    overall = " | ".join(f"**{sum(found[t].values()) / located:.1%}**" for t in tools)
    print(f"| **all** | {located} | {overall} |")
    fps = " | ".join(f"{fp[t] / len(negatives):.1%}" for t in tools)
    print(f"| false positives (negative lines flagged) | {len(negatives)} | {fps} |")
    print(
        f"\nanonymization of the corpus' episodes: {ours_rate:,.0f} episodes per CPU-second, "
        f"{ours_rate / dumps_rate:.3f}x json.dumps of the same ({dumps_rate:,.0f}/s); "
        f"quarantined: {quarantined}"
    )


if __name__ == "__main__":
    main()
