"""The Neovim plugin (``editors/nvim``) in headless Neovim against the real server: its
commands to list, diff and take back agent changes, set checkpoints and rewind.

``pack`` installs it on the native package path; ``rtp`` adds its folder to 'runtimepath',
which is what lazy.nvim and packer do for a plugin in a subfolder of a repository.
``STEADYHAND_NVIM`` names another Neovim to run them with (a current release, say).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_clients.harness import HERE, require, run

PLUGIN = HERE.parents[2] / "editors" / "nvim"


def _nvim(tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    nvim = os.environ.get("STEADYHAND_NVIM") or require("nvim", "neovim")
    monkeypatch.setenv("SH_PLUGIN", str(PLUGIN))
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["-c", f"luafile {HERE / 'plugin_scenario.lua'}"]
    return run(argv, tmp_path, how, timeout=120)


@pytest.mark.parametrize("how", ["pack", "rtp"])
def test_plugin_lists_diffs_and_takes_back_agent_changes(
    tmp_path: Path, how: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    r = _nvim(tmp_path, how, monkeypatch)
    original: str = r["original"]
    assert r["loaded"] and r["root"] == str((tmp_path / "ws").resolve()), r.get("root")
    for name in ("edit2", "edit8", "edit5"):
        assert r["steps"][name]["ok"], r["steps"][name]
        assert r["steps"][name]["via"] == "workspaceEdit", r["steps"][name]
    edited = (
        original.replace("line_2 = 2", "second = 2")
        .replace("line_8 = 8", "eighth = 8")
        .replace("line_5 = 5", "fifth = 5")
    )
    # the plugin answers the server's save requests: the buffer is saved, not left modified
    assert r["after_edits"] == {"buffer": edited, "disk": edited, "modified": False}
    assert r["steps"]["checkpoint"]["ok"] and r["steps"]["checkpoint"]["label"] == "before five"

    # :SteadyhandChanges
    qf = r["quickfix"]
    assert qf["title"] == "Steadyhand changes" and r["quickfix_open"] is True
    assert len(qf["items"]) == 3, qf
    id2, id8, id5 = r["ids"]
    assert [i["text"].split()[0] for i in qf["items"]] == [id5, id8, id2]
    assert all(i["file"].endswith("app.py") for i in qf["items"])
    assert "edit  +1/-1" in qf["items"][0]["text"] and "(current)" in qf["items"][0]["text"]

    # :SteadyhandDiff
    d = r["diff"]
    assert d["tabs_added"] == 1 and len(d["windows"]) == 2, d
    before, after = d["windows"]
    assert before["name"].endswith(f"{id2}/before/app.py") and after["name"].endswith(
        f"{id2}/after/app.py"
    )
    assert before["text"] == original
    assert after["text"] == original.replace("line_2 = 2", "second = 2")
    for w in d["windows"]:
        assert w["diff"] is True and w["modifiable"] is False and w["buftype"] == "nofile", w
        assert w["filetype"] == "python", w

    # :SteadyhandTakeBack of the earlier change keeps the later ones
    tb = r["steps"]["take_back"]
    assert tb["ok"] and tb["type"] == "revert" and tb["via"] == "workspaceEdit", tb
    kept = edited.replace("second = 2", "line_2 = 2")
    assert r["after_take_back"]["buffer"] == kept == r["after_take_back"]["disk"]
    assert "Took back" in r["after_take_back"]["message"]

    # a conflict changes nothing and says which lines
    c = r["steps"]["conflict"]
    assert c["ok"] is False and c["error"] == "conflict", c
    assert r["after_conflict"]["unchanged"] is True
    assert "line 3" in r["after_conflict"]["message"]

    # :SteadyhandRewind to the checkpoint
    rw = r["steps"]["rewind"]
    assert rw["ok"] and len(rw["restored"]) == 1, rw
    at_checkpoint = original.replace("line_2 = 2", "second = 2").replace("line_8 = 8", "eighth = 8")
    assert r["after_rewind"] == {"buffer": at_checkpoint, "disk": at_checkpoint}

    # the user typed since the latest change: refused, with the way to force it
    st = r["steps"]["stale"]
    assert st["ok"] is False and st["error"] == "stale" and st["can_force"] is True, st
    assert r["after_stale"]["buffer"].startswith("# typed by the user\n")
    assert ":SteadyhandTakeBack! " in r["after_stale"]["message"]
    assert r["steps"]["forced"]["ok"], r["steps"]["forced"]
    assert r["after_forced"]["buffer"] == at_checkpoint
