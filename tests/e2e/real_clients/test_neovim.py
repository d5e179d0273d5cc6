"""Neovim (0.7+, headless, built-in LSP client) against the real server.

``plain`` is Neovim's client as shipped: it does not advertise ``documentChanges`` (so
edits arrive as unversioned ``changes``) nor saving on request (so the server writes the
buffer's text to disk itself). ``recommended`` is the setup from docs/editors.md:
versioned edits, and Neovim saves the buffer when the server asks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_clients.harness import (
    HERE,
    UNICODE_EDITED,
    check_common,
    doc_config,
    require,
    run,
)


def _nvim(tmp_path: Path, config: str) -> dict[str, Any]:
    nvim = require("nvim", "neovim")
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["-c", f"luafile {HERE / 'scenario.lua'}"]
    return run(argv, tmp_path, config, doc_config("neovim-common", "neovim-0.7"))


@pytest.mark.parametrize("config", ["plain", "recommended"])
def test_neovim_edits_through_its_buffers(tmp_path: Path, config: str) -> None:
    r = _nvim(tmp_path, config)
    assert r["offset_encoding"] == "utf-16"
    check_common(r)
    files = r["after_closed"]
    assert files["loaded"] is False and files["created_loaded"] is False
    if config == "recommended":
        # the documented helper never waits: every call returned before its answer came
        assert r["helper_answered_later"] is True
        # Neovim saved the buffer itself: nothing unsaved, no "file changed" warning later
        assert r["after_edit"]["modified"] is False and r["after_edit"]["saves"] == 1
        assert len(r["saves"]) == 2  # the edit and the unicode edit; nothing else
        # the editor skipped the outdated versioned edit: only the user's typing is there
        assert r["after_race"]["buffer"] == "typed during the edit\n" + UNICODE_EDITED
        # the documented save handler leaves a buffer typed in since the edit unsaved
        h = r["save_handler"]
        assert h["refused"]["saved"] == [] and h["refused"]["results"][0]["saved"] is False
        assert h["disk_after_refusal"] == h["disk_before"] and h["modified"] is True
        assert h["saves"] == 0
        assert len(h["accepted"]["saved"]) == 1 and h["disk_after_save"] == h["typed"]
    else:
        # the server wrote the buffer's text; Neovim still counts the buffer as modified
        assert r["after_edit"]["modified"] is True and r["after_edit"]["saves"] == 0
        assert r["saves"] == []
        assert "does not show the change" in r["steps"]["race"]["message"]
