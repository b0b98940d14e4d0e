"""Patches an agent ran through its shell tool, which no post-tool-use hook reports: Codex
(0.17x) applies an `apply_patch <<'EOF'` heredoc with its shell tool and sends only the
PreToolUse for Bash. The reader announces the edit (a pending record, like any pre-tool-use
edit); the next hook call of the same session looks at the disk: a file that now holds the
patch's new text makes the edit applied, one that does not leaves it to be judged a denial
when the turn ends."""

from __future__ import annotations

from capture.files import MAX_TRACKED_BYTES, decode_text
from capture.hooks.agents.codex import SHELL_PATCH_KEY
from capture.hooks.agents.facts import Call, Edit, Stage
from capture.hooks.snapshot import take
from capture.store.database import Store
from capture.store.hook_rows import session_pending

__all__ = ["landed_shell_patches"]


def landed_shell_patches(store: Store, call: Call) -> list[Edit]:
    """The session's announced shell patches that are on disk now, as applied edits."""
    if call.agent != "codex" or not call.session_id:
        return []
    landed: list[Edit] = []
    for key, proposal in session_pending(store.conn, call.agent, call.session_id, SHELL_PATCH_KEY):
        snapshot = take(proposal.path, MAX_TRACKED_BYTES)
        text = decode_text(snapshot.content) if snapshot.content is not None else None
        if text is None:
            continue
        added = [h.new_text for h in proposal.hunks if h.new_text]
        if not added or not all(new in text for new in added):
            continue
        landed.append(
            Edit(
                path=proposal.path,
                hunks=list(proposal.hunks),
                stage=Stage.APPLIED,
                key=key,
                tool=proposal.tool,
                tool_use_id=proposal.tool_use_id,
                created_file=proposal.created_file,
            )
        )
    return landed
