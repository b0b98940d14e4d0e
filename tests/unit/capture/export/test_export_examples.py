"""What an edit becomes as an example: the prompt, the user's final text, a kept sibling."""

from __future__ import annotations

from typing import Any

from capture.export.examples import NO_REQUEST, examples_of, prompt_text, tier_of


def proposal(pid: str, tier: str | None, old: str, new: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "file": extra.pop("file", "a.py"),
        "tier": None if tier is None else {"tier": tier, "reasons": [], "rules_version": 1},
        "hunks": [{"old_text": old, "new_text": new, "status": "tracking"}],
        **extra,
    }


def episode(*proposals: dict[str, Any], prompt: str | None = "fix it") -> dict[str, Any]:
    return {
        "id": "e1",
        "agent": "codex",
        "model": "m",
        "prompt": prompt,
        "proposals": list(proposals),
    }


def test_the_prompt_marks_the_replaced_span_in_its_context() -> None:
    text = prompt_text("Rename x.", "src/a.py", "def f():\n", "    x = 1\n", "    return x\n")
    assert text.startswith("Rename x.\n\nFile: src/a.py\n\n")
    assert text.endswith("def f():\n<edit>    x = 1\n</edit>    return x\n")


def test_a_prompt_without_context_or_request_says_so() -> None:
    assert prompt_text(None, "a.py", "", "x = 1\n", "").startswith(f"{NO_REQUEST}\n\nFile: a.py")
    assert prompt_text("  ", "a.py", "", "x = 1\n", "").endswith("x = 1\n")
    assert "Write the new code" in prompt_text("new file", "a.py", "", "", "")


def test_the_final_text_is_the_users_own_version_only() -> None:
    def final_of(final: str) -> str | None:
        p = proposal("p", "edited", "old\n", "new\n", hunk_context=[{"final": final}])
        (example,) = examples_of(episode(p))
        return example.final_text

    assert final_of("mine\n") == "mine\n"
    assert final_of("new\n") is None  # still the agent's: nothing better
    assert final_of("old\n") is None  # the old text back: an undo, not an answer
    assert final_of("  \n") is None


def test_a_kept_sibling_is_the_kept_retry_of_the_same_code_in_the_same_file() -> None:
    rejected = proposal("p1", "rejected", "x = 1\n", "x = 2\n")
    kept = proposal("p2", "gold", "x = 1\n", "x = 3\n")
    other_file = proposal("p3", "gold", "x = 1\n", "x = 4\n", file="b.py")
    other_code = proposal("p4", "silver", "y = 1\n", "y = 2\n")
    by_id = {e.proposal_id: e for e in examples_of(episode(rejected, kept, other_file, other_code))}
    assert by_id["p1"].sibling_text == "x = 3\n" and by_id["p1"].chosen == "x = 3\n"
    assert by_id["p2"].sibling_text is None  # not its own sibling
    assert by_id["p4"].sibling_text is None


def test_the_users_version_wins_over_a_sibling() -> None:
    edited = proposal("p1", "edited", "x = 1\n", "x = 2\n", hunk_context=[{"final": "x = 9\n"}])
    kept = proposal("p2", "gold", "x = 1\n", "x = 3\n")
    first = next(iter(examples_of(episode(edited, kept))))
    assert first.chosen == "x = 9\n"


def test_one_example_per_hunk_with_the_proposals_tier() -> None:
    p = proposal("p", "silver", "a\n", "b\n", language="Python")
    p["hunks"].append({"old_text": "c\n", "new_text": "d\n", "status": "lost"})
    examples = list(examples_of(episode(p)))
    assert [(e.id, e.tier, e.agent_text, e.language) for e in examples] == [
        ("p:0", "silver", "b\n", "Python"),
        ("p:1", "silver", "d\n", "Python"),
    ]
    assert examples[0].agent == "codex"  # the episode's, when the proposal names none


def test_tier_of_reads_a_decision_a_name_or_nothing() -> None:
    assert tier_of({"tier": {"tier": "gold"}}) == "gold"
    assert tier_of({"tier": "debt"}) == "debt"
    assert tier_of({"tier": None}) is None and tier_of({}) is None
