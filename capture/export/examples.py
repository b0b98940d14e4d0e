"""What one edit becomes as a training example: its prompt, the agent's text, the user's text.

One example per hunk (one span of one file the agent replaced):

- the *prompt* is the user's request for the episode, the file's path, and the file around the
  edit as it was before it, with the replaced span marked `<edit>...</edit>` (the hunk's context
  lines from the store; the span alone when the store has no context, e.g. uploaded episodes);
- the *agent's text* is the hunk's new text: what the agent wrote in place of the span;
- the *user's final text* is the region's text now, when the region is still tracked and the
  user changed it (not the agent's text, not the old text back, not empty);
- a *kept sibling* is another proposal of the same episode, on the same file, that replaced the
  same old text and earned a positive tier (the agent tried again and that attempt was kept).

Pure: an episode dict in (the store's episode JSON, projected or not, with `tier` and
`hunk_context` as `capture.export.selection` adds them), examples out.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "NEGATIVE_TIERS",
    "NO_REQUEST",
    "POSITIVE_TIERS",
    "Example",
    "examples_of",
    "prompt_text",
    "tier_of",
]

#: Tiers whose agent text is worth learning as it is.
POSITIVE_TIERS = frozenset({"gold", "silver"})
#: Tiers whose agent text a model should learn not to write.
NEGATIVE_TIERS = frozenset({"edited", "rejected", "undone", "debt"})
#: The prompt's first paragraph when the agent's transcript did not give the user's request.
NO_REQUEST = "(no request recorded)"


@dataclass(frozen=True, slots=True)
class Example:
    id: str  # proposal id and hunk index: `P:0`
    episode_id: str
    proposal_id: str
    tier: str | None
    agent: str | None
    model: str | None
    language: str | None
    file: str
    prompt: str
    agent_text: str
    final_text: str | None
    sibling_text: str | None

    @property
    def chosen(self) -> str | None:
        """The better answer than the agent's: the user's final version, else a kept sibling."""
        return self.final_text if self.final_text is not None else self.sibling_text


def tier_of(subject: dict[str, Any]) -> str | None:
    tier = subject.get("tier")
    if isinstance(tier, dict):
        value = tier.get("tier")
        return value if isinstance(value, str) else None
    return tier if isinstance(tier, str) else None


def prompt_text(request: str | None, path: str, before: str, old: str, after: str) -> str:
    parts = [request.strip() if request and request.strip() else NO_REQUEST, f"File: {path}"]
    if before or after:
        parts.append(
            "The code around the change, the part to replace between <edit> and </edit>; "
            "answer with the replacement only:"
        )
        parts.append(f"{before}<edit>{old}</edit>{after}")
    elif old:
        parts.append("Replace this code; answer with the replacement only:")
        parts.append(old)
    else:
        parts.append("Write the new code; answer with the code only:")
    return "\n\n".join(parts)


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _final(context: dict[str, Any], old: str, new: str) -> str | None:
    final = context.get("final")
    if not isinstance(final, str) or not final.strip() or final in (new, old):
        return None
    return final


def examples_of(episode: dict[str, Any]) -> Iterator[Example]:
    proposals = [p for p in episode.get("proposals") or () if isinstance(p, dict)]
    # old text -> the new text of a kept attempt, per file
    kept: dict[tuple[str, str], tuple[str, str]] = {}
    for p in proposals:
        if tier_of(p) in POSITIVE_TIERS:
            for h in p.get("hunks") or ():
                key = (_str(p.get("file")), _str(h.get("old_text")))
                kept.setdefault(key, (_str(p.get("id")), _str(h.get("new_text"))))
    request = episode.get("prompt")
    for p in proposals:
        contexts = p.get("hunk_context") or []
        path = _str(p.get("file"))
        pid = _str(p.get("id"))
        tier = tier_of(p)
        for i, h in enumerate(p.get("hunks") or ()):
            context = contexts[i] if i < len(contexts) and isinstance(contexts[i], dict) else {}
            old, new = _str(h.get("old_text")), _str(h.get("new_text"))
            sibling = kept.get((path, old))
            yield Example(
                id=f"{pid}:{i}",
                episode_id=_str(episode.get("id")),
                proposal_id=pid,
                tier=tier,
                agent=p.get("agent") or episode.get("agent"),
                model=p.get("model") or episode.get("model"),
                language=p.get("language"),
                file=path,
                prompt=prompt_text(
                    request, path, _str(context.get("before")), old, _str(context.get("after"))
                ),
                agent_text=new,
                final_text=_final(context, old, new),
                sibling_text=(
                    sibling[1]
                    if sibling is not None and sibling[0] != pid and sibling[1] != new
                    else None
                ),
            )
