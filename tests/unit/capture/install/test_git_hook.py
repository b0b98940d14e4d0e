"""Our block in a post-commit hook: merged into the user's, taken out exactly."""

from __future__ import annotations

import pytest

from capture.install.git_hook import BEGIN, END, install_hook_text, uninstall_hook_text

CMD = "/usr/bin/capture"


def test_a_new_hook_is_a_shell_script_with_our_block_only() -> None:
    text = install_hook_text(None, CMD)
    assert text.startswith("#!/bin/sh\n")
    assert BEGIN in text and END in text
    assert f"{CMD} observe --late --quiet" in text
    assert uninstall_hook_text(text) is None


def test_the_users_hook_is_kept_and_our_block_replaced_not_doubled() -> None:
    users = "#!/usr/bin/env bash\nset -e\nmake lint\n"
    once = install_hook_text(users, CMD)
    assert once.startswith(users)
    twice = install_hook_text(once, "/other/capture")
    assert twice.count(BEGIN) == 1 and "/other/capture" in twice and CMD + " " not in twice
    assert uninstall_hook_text(twice) == users


def test_a_hook_without_a_final_newline_keeps_its_last_line() -> None:
    text = install_hook_text("#!/bin/sh\necho hi", CMD)
    assert "echo hi\n" + BEGIN in text


def test_a_hook_in_another_language_is_refused() -> None:
    with pytest.raises(ValueError, match="not a shell script"):
        install_hook_text("#!/usr/bin/env python3\nprint('hi')\n", CMD)
