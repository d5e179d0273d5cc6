"""Emacs with eglot (headless, ``emacs --batch``) against the real server.

``plain`` is eglot as shipped (it does not save on request, so the server writes the
buffer's text to disk itself; Emacs then notices the file changed on disk and asks, which
the scenario answers as a user would). ``recommended`` is the setup from docs/editors.md:
eglot saves the buffer when the server asks.
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


def _emacs(tmp_path: Path, config: str) -> dict[str, Any]:
    probe = [
        "--batch",
        "--eval",
        "(progn (require 'package) (package-initialize) (require 'eglot))",
    ]
    emacs = require("emacs", "emacs-nox elpa-eglot", probe)
    argv = [emacs, "--batch", "-l", str(HERE / "scenario.el")]
    return run(argv, tmp_path, config, doc_config("emacs-eglot"))


@pytest.mark.parametrize("config", ["plain", "recommended"])
def test_emacs_eglot_edits_through_its_buffers(tmp_path: Path, config: str) -> None:
    r = _emacs(tmp_path, config)
    check_common(r)
    files = r["after_closed"]
    assert files["visited"] is False and files["created_visited"] is False
    # eglot refuses the versioned edit: the buffer holds only the user's typing
    race = r["after_race"]
    assert race["buffer"] == race["typed"] == "typed just now\n" + UNICODE_EDITED
    assert "require version" in r["steps"]["race"]["message"]
    if config == "recommended":
        assert r["after_edit"]["modified"] is False and r["after_edit"]["saves"] == 1
        assert r["supersession_prompts"] == 0
        # the documented save handler leaves a buffer typed in since the edit unsaved
        h = r["save_handler"]
        assert h["refused"] == 0 and h["saves"] == 0 and h["modified"] is True, h
        assert h["disk_after_refusal"] == h["disk_before"]
        assert h["accepted"] == 1 and h["disk_after_save"] == h["typed"], h
    else:
        assert r["after_edit"]["modified"] is True and r["after_edit"]["saves"] == 0
