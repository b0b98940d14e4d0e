"""Our block in a repository's post-commit hook: merged into the user's hook, never clobbering it.

The block is delimited by two marker lines, so uninstalling takes out exactly what installing
put in. A hook that is not a shell script (another interpreter's shebang) cannot take a block:
installing refuses it rather than break it. The block runs the late pass in the background so
a commit never waits for it, and never fails the commit.
"""

from __future__ import annotations

__all__ = ["BEGIN", "END", "HOOK_NAME", "hook_block", "install_hook_text", "uninstall_hook_text"]

HOOK_NAME = "post-commit"
BEGIN = "# >>> agent-capture late signals >>>"
END = "# <<< agent-capture late signals <<<"
_SHELLS = ("sh", "bash", "dash", "zsh", "ksh")


def hook_block(command: str) -> str:
    """The lines we add: `command` (a shell-quoted `capture` argv) run detached, quietly."""
    return (
        f"{BEGIN}\n"
        "# what became of coding agents' edits in this commit (capture uninstall git removes it)\n"
        f'({command} observe --late --quiet --repo "$(git rev-parse --show-toplevel)" '
        ">/dev/null 2>&1 &) || true\n"
        f"{END}\n"
    )


def _is_shell(text: str) -> bool:
    first = text.splitlines()[0] if text else ""
    if not first.startswith("#!"):
        return True  # no shebang: git runs it with sh
    words = first[2:].split()
    program = words[0].rsplit("/", 1)[-1] if words else ""
    if program == "env" and len(words) > 1:
        program = words[1]
    return program in _SHELLS


def _without_block(text: str) -> str:
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    inside = False
    for line in lines:
        if line.rstrip("\n") == BEGIN:
            inside = True
            continue
        if inside:
            if line.rstrip("\n") == END:
                inside = False
            continue
        out.append(line)
    return "".join(out)


def install_hook_text(existing: str | None, command: str) -> str:
    """The hook with our block (replacing an older one of ours, the user's lines kept).

    Raises ValueError for a hook in a language other than the shell."""
    if existing is None or not existing.strip():
        return "#!/bin/sh\n" + hook_block(command)
    if not _is_shell(existing):
        raise ValueError("the post-commit hook is not a shell script; add our line to it by hand")
    kept = _without_block(existing)
    if not kept.endswith("\n"):
        kept += "\n"
    return kept + hook_block(command)


def uninstall_hook_text(existing: str) -> str | None:
    """The hook without our block; None when nothing but a shebang would be left."""
    kept = _without_block(existing)
    rest = [line for line in kept.splitlines() if line.strip() and not line.startswith("#!")]
    return None if not rest else kept
