"""The Neovim plugin (``editors/nvim``) in headless Neovim against the real server: its
commands to list, diff and take back agent changes, set checkpoints and rewind.

``pack`` installs it on the native package path; ``rtp`` adds its folder to 'runtimepath',
which is what lazy.nvim and packer do for a plugin in a subfolder of a repository.
``STEADYHAND_NVIM`` names another Neovim to run them with (a current release, say).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.real_clients.harness import HERE, require, run

PLUGIN = HERE.parents[2] / "editors" / "nvim"
#: What the server's messages tell a model to do; never in what Neovim shows a person.
MODEL_WORDS = re.compile(
    r"\b(call|calls|pass|retry)\b|ask the user|file_path|old_string|force: true", re.IGNORECASE
)


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

    # :SteadyhandChanges: the changes, newest first, with the checkpoint where it was set
    qf = r["quickfix"]
    assert qf["title"] == "Steadyhand changes" and r["quickfix_open"] is True
    assert len(qf["items"]) == 4, qf
    id2, id8, id5 = r["ids"]
    checkpoint = r["steps"]["checkpoint"]["checkpoint"]
    assert [i["text"].split()[0] for i in qf["items"]] == [id5, "checkpoint", id8, id2]
    changes = [i for i in qf["items"] if i["valid"]]
    assert len(changes) == 3 and all(i["file"].endswith("app.py") for i in changes)
    assert "edit  +1/-1" in qf["items"][0]["text"] and "(current)" in qf["items"][0]["text"]
    mark = qf["items"][1]
    assert mark["file"] is None and mark["text"].startswith(f"checkpoint {checkpoint} before five")

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
    assert r["after_take_back"]["message"].startswith(f"Took back change {id2} in app.py (+1/-1)")
    assert ":SteadyhandChanges" in r["after_take_back"]["message"]

    # a conflict changes nothing and says which lines
    c = r["steps"]["conflict"]
    assert c["ok"] is False and c["error"] == "conflict", c
    assert r["after_conflict"]["unchanged"] is True
    assert "line 3" in r["after_conflict"]["message"]
    assert f":SteadyhandTakeBack {c['later'][-1]}" in r["after_conflict"]["message"]

    # :SteadyhandRewind to the checkpoint
    rw = r["steps"]["rewind"]
    assert rw["ok"] and len(rw["restored"]) == 1, rw
    at_checkpoint = original.replace("line_2 = 2", "second = 2").replace("line_8 = 8", "eighth = 8")
    assert r["after_rewind"]["buffer"] == at_checkpoint == r["after_rewind"]["disk"]
    assert r["after_rewind"]["message"].startswith("Rewound to checkpoint before five: 1 restored")

    # the user typed since the latest change: refused, with the way to force it
    st = r["steps"]["stale"]
    assert st["ok"] is False and st["error"] == "stale" and st["can_force"] is True, st
    assert r["after_stale"]["buffer"].startswith("# typed by the user\n")
    assert r["after_stale"]["message"].endswith(f":SteadyhandTakeBack! {st['version']}")
    assert r["steps"]["forced"]["ok"], r["steps"]["forced"]
    assert r["after_forced"]["buffer"] == at_checkpoint
    assert r["after_forced"]["message"].startswith(f"Took back change {st['version']} in app.py")

    # messages to the user speak of Neovim's commands, never of the calls a model makes
    assert r["checkpoint_message"].startswith(f"Checkpoint {checkpoint} (before five) set.")
    assert ":SteadyhandRewind before five" in r["checkpoint_message"]
    for name in ("unknown_id", "unknown_diff"):
        assert r[name]["result"]["error"] == "no_history", r[name]
        assert r[name]["message"].endswith(":SteadyhandChanges lists the changes and their ids.")
    assert r["unknown_checkpoint"]["result"]["error"] == "no_history"
    assert ":SteadyhandRewind takes a checkpoint id or label" in r["unknown_checkpoint"]["message"]
    assert len(r["messages"]) >= 10
    for m in r["messages"]:
        assert not MODEL_WORDS.search(m["msg"]), m


DELAY = 1.5


def test_commands_never_freeze_the_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """:SteadyhandChanges against a server that takes 1.5 s to answer: the command returns
    at once, a timer and typed keys run while the answer is on its way, then the answer
    fills the quickfix list. A server that stops meanwhile ends the wait with an error, and
    a command given while the server starts waits for it without blocking."""
    nvim = os.environ.get("STEADYHAND_NVIM") or require("nvim", "neovim")
    monkeypatch.setenv("SH_PLUGIN", str(PLUGIN))
    monkeypatch.setenv("SH_PYTHON", sys.executable)
    monkeypatch.setenv("SH_SLOW_SERVER", str(HERE / "slow_server.py"))
    monkeypatch.setenv("SH_DELAY", str(DELAY))
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["-c", f"luafile {HERE / 'async_scenario.lua'}"]
    r = run(argv, tmp_path, "slow", timeout=60)
    # a command given while the server starts is sent once it is ready
    early = r["early"]
    assert early["ready_when_sent"] is False and early["ready_when_answered"] is True, early
    assert early["answer"].get("ok") is True, early
    assert r["steps"]["edit"]["ok"], r["steps"]["edit"]
    events = r["events"]
    names = [e["name"] for e in events]
    # the command returned before anything else happened, with its request in flight
    assert names[0] == "returned" and events[0]["in_flight"] == 1, events
    assert events[0]["ms"] < 500, events
    assert not r.get("gave_up"), events
    # the timer fired and the typed keys were applied while the server had not answered
    assert names.index("timer") < names.index("answer"), events
    assert names.index("keys") < names.index("answer"), events
    answer = events[names.index("answer")]
    assert answer["ms"] >= DELAY * 1000 - 50, events
    assert answer["first_line"] == "typed while waiting" and answer["quickfix"] == 1, answer
    # waiting longer than timeout_ms is said once, in the user's terms, before the answer
    waiting = [m for m in r["messages"] if "still waiting" in m["msg"]]
    assert len(waiting) == 1 and ":SteadyhandChanges" in waiting[0]["msg"], r["messages"]
    assert waiting[0]["ms"] < answer["ms"], r["messages"]
    # a server that stops while a command waits: the command ends, with why
    assert names[-2:] == ["stop", "ended"], events
    ended = events[-1]
    assert ended["result"] is False and "stopped" in ended["error"], ended
    assert ended["ms"] - events[-2]["ms"] < 2000, events
