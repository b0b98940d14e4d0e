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

Peer mode: the same corpus through this tree's anonymizer and another commit's, loaded side by
side in this process (tests/benchmarks/peer_code.py), e.g. the code before secret detection was
put behind one engine boundary:

    python tests/benchmarks/bench_secrets.py --peer 861ac66 --rounds 5

prints, for both: whether their projections are identical (every episode of the synthetic,
labelled and planted-secrets corpora, at each level), the anonymization throughput of the
labelled corpus and of synthetic episodes at the redacted level (episodes per CPU-second in each
round, fresh anonymizers each, the two trees taking turns of a few episodes; and the ratio of the
medians), recall on the labelled corpus and the negative lines flagged.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy  # noqa: E402
from sync.anonymize.pipeline import _episode_texts  # noqa: E402
from tests.benchmarks.peer_code import CodeTree, load_commit, this_tree  # noqa: E402
from tests.support.secrets.labelled_corpus import Labelled, make_corpus, negative_lines  # noqa: E402
from tests.support.secrets.planted_secrets import make_corpus as make_planted  # noqa: E402
from tests.support.synthetic_episodes import make_episode  # noqa: E402

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


def _located(episodes: list[dict], labelled: list[Labelled]) -> list[tuple[Labelled, int]]:
    """Each secret and the episode it stands in (the first whose texts hold its first probe)."""
    texts = ["\n".join(_episode_texts(e)) for e in episodes]
    out = []
    for x in labelled:
        at = next((i for i, text in enumerate(texts) if x.probes[0] in text), None)
        if at is not None:
            out.append((x, at))
    return out


def _anonymizer(anonymize: ModuleType) -> Any:
    return anonymize.Anonymizer(
        SALT,
        anonymize.Identity(usernames=("alice", "dev"), hostnames=("devbox",)),
    )


def _projections(tree: CodeTree, episodes: list[dict], level: str) -> list[tuple[str, tuple]]:
    """(serialized, quarantine) of each episode by `tree`'s anonymizer, one made for them."""
    with tree.active():
        anonymize = importlib.import_module("sync.anonymize")
        anonymizer = _anonymizer(anonymize)
        policy = anonymize.WorkspacePolicy(anonymize.Level(level))
        out = []
        for e in episodes:
            p = anonymizer.project(e, policy)
            out.append((p.serialized or "", tuple(p.quarantine)))
        return out


#: Episodes each tree projects in turn: the machine's load changes within a round, and short
#: turns make both trees meet it alike.
_TURN = 25


def _timed(
    trees: list[CodeTree], episodes: list[dict], warm_up: dict
) -> dict[str, tuple[float, list[str]]]:
    """For each tree: episodes per CPU-second at the redacted level by a fresh anonymizer (its
    rule sets and detect-secrets loaded first, on another episode), the trees taking turns of
    `_TURN` episodes; and what it would send, with the negative lines it flags last."""
    made: dict[str, tuple[Any, Any]] = {}
    for tree in trees:
        with tree.active():
            anonymize = importlib.import_module("sync.anonymize")
            anonymizer = _anonymizer(anonymize)
            policy = anonymize.WorkspacePolicy(anonymize.Level.REDACTED)
            anonymizer.project(warm_up, policy)
            made[tree.name] = (anonymizer, policy)
    used = dict.fromkeys(made, 0.0)
    sent: dict[str, list[str]] = {name: [] for name in made}
    for turn, at in enumerate(range(0, len(episodes), _TURN)):
        part = episodes[at : at + _TURN]
        for tree in trees if turn % 2 == 0 else trees[::-1]:
            anonymizer, policy = made[tree.name]
            with tree.active():
                start = time.process_time()
                projections = [anonymizer.project(e, policy) for e in part]
                used[tree.name] += time.process_time() - start
            sent[tree.name] += [p.serialized or "" for p in projections]
    out = {}
    negatives = negative_lines()
    for tree in trees:
        anonymizer, _ = made[tree.name]
        with tree.active():
            flagged = sum(bool(anonymizer.scanner.find(line, "x.py")) for line in negatives)
        out[tree.name] = (len(episodes) / used[tree.name], [*sent[tree.name], str(flagged)])
    return out


def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def peer_main(commit: str, rounds: int, synthetic_count: int) -> None:
    labelled_episodes, labelled = make_corpus()
    planted_episodes, _ = make_planted()
    rng = random.Random(2026)
    synthetic = [make_episode(rng, i, root="/ws") for i in range(synthetic_count)]
    warm_up = make_episode(random.Random(1), 10**6, root="/ws")
    head = subprocess.run(
        ["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    ours = this_tree("sync.anonymize")
    ours.name = f"this tree ({head})"
    with tempfile.TemporaryDirectory() as tmp:
        peer = load_commit(commit, Path(tmp), "sync.anonymize")
        peer.name = f"peer ({commit})"
        trees = [peer, ours]
        corpora = {
            "synthetic": synthetic,
            "labelled": labelled_episodes,
            "planted secrets": planted_episodes,
        }
        print(f"{ours.name} against {peer.name}, loaded side by side in one process; load "
              f"average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")  # fmt: skip
        print("\nprojections identical (serialized episode and quarantine, episode by episode):")
        print("\n| corpus | episodes | metrics | redacted | full |\n|---|---:|---:|---:|---:|")
        for name, episodes in corpora.items():
            cells = []
            for level in ("metrics", "redacted", "full"):
                a, b = (_projections(tree, episodes, level) for tree in trees)
                cells.append(f"{sum(x == y for x, y in zip(a, b, strict=True))}/{len(episodes)}")
            print(f"| {name} | {len(episodes)} | {' | '.join(cells)} |")

        timed = {"labelled": labelled_episodes, "synthetic": synthetic}
        rates: dict[str, dict[str, list[float]]] = {t.name: {c: [] for c in timed} for t in trees}
        sent: dict[str, list[str]] = {}
        for r in range(rounds):
            for corpus, episodes in timed.items():
                measured = _timed(trees if r % 2 == 0 else trees[::-1], episodes, warm_up)
                for name, (rate, out) in measured.items():
                    rates[name][corpus].append(rate)
                    if corpus == "labelled":
                        sent[name] = out
    print(f"\nanonymization at the redacted level, episodes per CPU-second, {rounds} rounds "
          f"(fresh anonymizers each; the trees take turns of {_TURN} episodes):")  # fmt: skip
    print("\n| tree | labelled corpus, each round | median | synthetic, each round | median |")
    print("|---|---|---:|---|---:|")
    for tree in trees:
        cells = []
        for corpus in timed:
            each = ", ".join(f"{v:,.0f}" for v in rates[tree.name][corpus])
            cells += [each, f"{_median(rates[tree.name][corpus]):,.0f}"]
        print(f"| {tree.name} | {' | '.join(cells)} |")
    for corpus in timed:
        ratio = _median(rates[ours.name][corpus]) / _median(rates[peer.name][corpus])
        print(f"ratio (this tree / peer, medians), {corpus}: {ratio:.2f}x")

    located = _located(labelled_episodes, labelled)
    negatives = len(negative_lines())
    print(f"\nrecall on the labelled corpus ({len(located)} secrets located in "
          f"{len(labelled_episodes)} episodes; found: none of the secret left in what would be "
          f"sent), and the {negatives} negative lines flagged:")  # fmt: skip
    print("\n| tree | secrets found | recall | negative lines flagged |\n|---|---:|---:|---:|")
    for tree in trees:
        out = sent[tree.name]
        found = sum(not any(p in out[i] for p in x.probes) for x, i in located)
        print(f"| {tree.name} | {found} | {found / len(located):.1%} | {out[-1]} |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--peer", metavar="COMMIT", help="this tree against COMMIT's code")
    parser.add_argument("--rounds", type=int, default=5, help="peer mode: rounds per tree")
    parser.add_argument("--synthetic", type=int, default=2000, help="peer mode: episodes")
    args = parser.parse_args()
    if args.peer:
        peer_main(args.peer, args.rounds, args.synthetic)
    else:
        main()
