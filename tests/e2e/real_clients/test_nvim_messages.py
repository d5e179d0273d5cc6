"""What the Neovim plugin shows a person, in headless Neovim: the server's messages are
written for a model ("call undo again with force: true"); the plugin words results and
refusals with Neovim's commands, and never shows a sentence telling a model what to call.

The server's flows are in ``test_nvim_plugin.py``; here the wording functions get every
error code and every kind of result the plugin's commands can get.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from steadyhand.protocol.commands import CHANGE, CHANGES, CHECKPOINT, REWIND, UNDO
from steadyhand.protocol.errors import ErrorCode
from tests.e2e.real_clients.harness import HERE, require
from tests.e2e.real_clients.test_nvim_plugin import MODEL_WORDS, PLUGIN

INFO, WARN = 2, 3
COMMANDS = [
    CHANGES,
    CHANGE,
    UNDO,
    CHECKPOINT,
    REWIND,
]
#: Sentences of the kinds the server writes to a model, each to be left out.
TO_A_MODEL = [
    "Call undo again with force: true (what is there now will be kept in history).",
    "Pass a checkpoint id or label that checkpoint returned.",
    "Read the file to see what is there now.",
    "Ask the user to move it aside, then retry.",
    "Take back the later changes first, newest first, or undo with file_path to go back.",
]


def _answers(tmp_path: Path, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    nvim = os.environ.get("STEADYHAND_NVIM") or require("nvim", "neovim")
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "SH_PLUGIN": str(PLUGIN),
        "SH_CASES": str(tmp_path / "cases.json"),
        "SH_RESULT": str(tmp_path / "result.json"),
    }
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["-c", f"luafile {HERE / 'messages_scenario.lua'}"]
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60
    )
    result = tmp_path / "result.json"
    assert result.exists(), done.stdout.decode(errors="replace")[-2000:]
    data = json.loads(result.read_text())
    assert not data.get("fatal"), data["fatal"]
    answers: list[dict[str, Any]] = data["answers"]
    assert len(answers) == len(cases)
    return answers


def test_for_person_leaves_out_what_tells_a_model_what_to_do(tmp_path: Path) -> None:
    cases = {
        "app.py changed since. Call undo again with force: true. Nothing was changed.": (
            "app.py changed since. Nothing was changed."
        ),
        "Restored app.py (+1 / -2). Call undo again to redo it.": "Restored app.py (+1 / -2).",
        "It was written over it (read the file to see both) and kept.": (
            "It was written over it and kept."
        ),
        "skipped a.py: the session changed it while the rewind began; call rewind again": (
            "skipped a.py: the session changed it while the rewind began"
        ),
        "One; two; pass a plain file path.": "One; two.",
        "Rewound: 1 restored.\n- restored a.py\n- skipped b.py (ask the user first)": (
            "Rewound: 1 restored.\n- restored a.py\n- skipped b.py"
        ),
        "Call changes to list the changes and their ids.": "",
        "No recorded change has the id 'x' (the history keeps its newest entries only).": (
            "No recorded change has the id 'x' (the history keeps its newest entries only)."
        ),
        "Recall that the caller passes by.": "Recall that the caller passes by.",
    }
    answers = _answers(tmp_path, [{"fn": "for_person", "message": m} for m in cases])
    assert [a["text"] for a in answers] == list(cases.values())


def test_every_refusal_is_worded_for_a_person(tmp_path: Path) -> None:
    """Every error code, from every command: the facts stay, the model's next step goes,
    and what is left is never empty."""
    cases: list[dict[str, Any]] = []
    for command in COMMANDS:
        for code in ErrorCode:
            for told in ([], TO_A_MODEL):
                fact = f"The {code.value} refusal of {command} names app.py."
                result = {"ok": False, "error": code.value, "message": " ".join([fact, *told])}
                cases.append({"fn": "describe", "command": command, "params": {}, "result": result})
            only_told = {"ok": False, "error": code.value, "message": " ".join(TO_A_MODEL)}
            cases.append({"fn": "describe", "command": command, "params": {}, "result": only_told})
    answers = _answers(tmp_path, cases)
    for case, answer in zip(cases, answers, strict=True):
        text, code = answer["text"], case["result"]["error"]
        assert answer["level"] == WARN and text, (case, answer)
        assert not MODEL_WORDS.search(text), (case, answer)
        if case["result"]["message"].startswith("The "):
            assert text.startswith(f"The {code} refusal of {case['command']} names app.py."), answer
        else:
            assert text.startswith(f"Steadyhand refused ({code}); nothing was changed."), answer


def test_results_and_next_steps_name_neovims_commands(tmp_path: Path) -> None:
    told = " Call undo again to redo it."

    def undo(**fields: Any) -> dict[str, Any]:
        return {"ok": True, "message": "Restored it." + told, "path": "/w/app.py", **fields}

    cases: list[tuple[str, dict[str, Any], dict[str, Any], str, int]] = [
        (
            UNDO,
            {"id": "c1"},
            undo(type="restore", undone="c1", added=1, removed=2),
            "Took back change c1 in /w/app.py (+1/-2). It is recorded as a change of its own: "
            "taking that one back (:SteadyhandChanges) brings this back.",
            INFO,
        ),
        (
            UNDO,
            {"id": "c2"},
            undo(type="revert", undone="c2", added=1, removed=1, on_disk=False),
            "Took back change c2 in /w/app.py (+1/-1), keeping the later changes to other "
            "lines. It is in the buffer; the file on disk is not saved yet. It is recorded as "
            "a change of its own: taking that one back (:SteadyhandChanges) brings this back.",
            INFO,
        ),
        (
            UNDO,
            {"id": "c3"},
            undo(type="delete", undone="c3"),
            "Took back change c3, which created /w/app.py: the file was deleted. It is recorded "
            "as a change of its own: taking that one back (:SteadyhandChanges) brings this back.",
            INFO,
        ),
        (
            UNDO,
            {"id": "c4"},
            {
                "ok": False,
                "error": "stale",
                "can_force": True,
                "message": "app.py has changed since the edit, so undoing it would throw that "
                "newer work away; nothing was changed. Read the file to see what is there now. "
                "To restore the earlier version anyway, call undo again with force: true.",
            },
            "app.py has changed since the edit, so undoing it would throw that newer work away; "
            "nothing was changed. To take it back anyway (what is there now is kept in "
            "history): :SteadyhandTakeBack! c4",
            WARN,
        ),
        (
            UNDO,
            {"id": "c5"},
            {
                "ok": False,
                "error": "conflict",
                "later": ["c6", "c7"],
                "lines": [[1, 4]],
                "message": "The edit (change c5) cannot be taken back on its own: it created "
                "the file, and the file was changed since; nothing was changed. Take back the "
                "later changes first, newest first, or undo with file_path to go back.",
            },
            "The edit (change c5) cannot be taken back on its own: it created the file, and "
            "the file was changed since; nothing was changed. To start with the newest later "
            "change: :SteadyhandTakeBack c7",
            WARN,
        ),
        (
            CHECKPOINT,
            {"session": "default", "label": "before five"},
            {
                "ok": True,
                "checkpoint": "cp-1",
                "label": "before five",
                "session": "default",
                "message": "Checkpoint cp-1 set. To undo every change, call rewind with cp-1.",
            },
            "Checkpoint cp-1 (before five) set. :SteadyhandRewind before five puts back every "
            "file session default changes after it.",
            INFO,
        ),
        (
            CHECKPOINT,
            {"session": "s"},
            {"ok": True, "checkpoint": "cp-2", "label": "", "session": "s", "message": "Set."},
            "Checkpoint cp-2 set. :SteadyhandRewind cp-2 puts back every file session s changes "
            "after it.",
            INFO,
        ),
        (
            REWIND,
            {"session": "s", "checkpoint": "cp-2"},
            {
                "ok": True,
                "message": "Nothing to rewind.",
                "restored": [],
                "deleted": [],
                "skipped": [],
                "unchanged": [],
            },
            "Nothing to rewind: session s changed no file since checkpoint cp-2.",
            INFO,
        ),
        (
            REWIND,
            {"session": "s", "checkpoint": "start"},
            {
                "ok": True,
                "message": "Rewound. Skipped files: read them and decide with the user.",
                "restored": ["/w/a.py", "/w/b.py"],
                "restored_more": 3,
                "deleted": ["/w/c.py"],
                "skipped": [
                    {
                        "path": "/w/d.py",
                        "reason": "the session changed it while the rewind began; call "
                        "rewind again",
                    }
                ],
                "unchanged": ["/w/e.py"],
                "not_on_disk": ["/w/a.py"],
            },
            "Rewound to checkpoint start: 5 restored, 1 deleted, 1 skipped, 1 already as at "
            "the checkpoint.\nIn the buffer only, not yet on disk: /w/a.py\nskipped /w/d.py: "
            "the session changed it while the rewind began\nSkipped files keep what they hold "
            "now.",
            WARN,
        ),
        (
            REWIND,
            {"session": "s", "checkpoint": "nope"},
            {
                "ok": False,
                "error": "no_history",
                "checkpoint": "nope",
                "message": "Session 's' has no checkpoint 'nope' (its checkpoints: cp-2). Pass "
                "a checkpoint id or label that checkpoint returned.",
            },
            "Session 's' has no checkpoint 'nope' (its checkpoints: cp-2). :SteadyhandRewind "
            "takes a checkpoint id or label; :SteadyhandChanges lists the checkpoints and the "
            "changes still kept.",
            WARN,
        ),
        (
            CHANGE,
            {"id": "zz"},
            {
                "ok": False,
                "error": "no_history",
                "id": "zz",
                "message": "No recorded change has the id 'zz'. Call changes to list the "
                "changes and their ids.",
            },
            "No recorded change has the id 'zz'. :SteadyhandChanges lists the changes and "
            "their ids.",
            WARN,
        ),
    ]
    answers = _answers(
        tmp_path,
        [{"fn": "describe", "command": c, "params": p, "result": r} for c, p, r, _, _ in cases],
    )
    for (command, _, _, text, level), answer in zip(cases, answers, strict=True):
        assert answer == {"text": text, "level": level}, command
        assert not MODEL_WORDS.search(answer["text"])
        assert re.search(r":Steadyhand[A-Z]", answer["text"]) or command == REWIND
