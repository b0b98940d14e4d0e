"""The labelled corpus through the real anonymizer: every secret of every kind, in every place,
is gone from the redacted projection; code that holds no secret survives it."""

from __future__ import annotations

from collections import Counter

import pytest

from sync.anonymize import Anonymizer, Identity, Level, WorkspacePolicy
from tests.support.secrets.labelled_corpus import KINDS, PLACES, make_corpus, negative_lines

SALT = b"corpus salt, thirty-two bytes!!!"


@pytest.fixture(scope="module")
def anonymizer() -> Anonymizer:
    return Anonymizer(SALT, Identity(usernames=("alice",), hostnames=("devbox",)))


def test_the_corpus_is_what_the_issue_asks() -> None:
    episodes, labelled = make_corpus()
    assert len(labelled) >= 300
    assert len({x.kind for x in labelled}) >= 40
    assert {x.place for x in labelled} == set(PLACES)
    for kind in KINDS:
        assert {x.place for x in labelled if x.kind == kind} >= {"prose", "code", "command"}


def test_no_secret_of_the_corpus_survives_redaction(anonymizer: Anonymizer) -> None:
    episodes, labelled = make_corpus()
    policy = WorkspacePolicy(Level.REDACTED)
    out = [anonymizer.project(e, policy) for e in episodes]
    sent = "\n".join(p.serialized or "" for p in out if not p.quarantine)
    leaked = Counter(x.kind for x in labelled for probe in x.probes if probe in sent)
    total = Counter(x.kind for x in labelled)
    recall = {k: 1 - leaked[k] / total[k] for k in total}
    print("per-kind recall:", {k: round(v, 2) for k, v in sorted(recall.items())})
    print("quarantined:", sum(bool(p.quarantine) for p in out), "of", len(out))
    assert dict(leaked) == {}


def test_code_without_secrets_survives_redaction(anonymizer: Anonymizer) -> None:
    lines = negative_lines()
    changed = [line for line in lines if anonymizer.scanner.find(line, "x.py")]
    survival = 1 - len(changed) / len(lines)
    print(f"negative lines kept whole: {survival:.1%}; changed: {sorted(set(changed))[:10]}")
    assert survival >= 0.95
