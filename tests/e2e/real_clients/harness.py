"""Runs a scripted scenario in a real editor (headless) against the real server.

Each run gets a fresh workspace and a fresh HOME/XDG folders, so nothing leaks between
runs or into the user's profile. The scenario script writes a JSON result file; the
tests assert on it. Without the editor the tests skip, except under ``CI=true``, where a
missing editor is a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
EDITORS_DOC = HERE.parents[2] / "docs" / "editors.md"

ORIGINAL = "first line\nthe color red, the color blue\nemoji 😀 漢字 cafe\u0301 end\nsecond line\n"
EDITED = ORIGINAL.replace("color", "colour")
UNICODE_EDITED = EDITED.replace("cafe\u0301 end", "cafe\u0301 END")
TYPED_LINE = "typed by the user\n"


def require(program: str, package: str, probe: list[str] | None = None) -> str:
    """The program's path; skip (or fail under CI=true) when it is not installed.

    ``probe``: extra arguments that must run successfully (e.g. loading a package).
    """
    found = shutil.which(program)
    if found and probe:
        ok = subprocess.run(
            [found, *probe], stdin=subprocess.DEVNULL, capture_output=True, timeout=60
        )
        if ok.returncode != 0:
            found = None
    if found:
        return found
    reason = f"{program} (with {package}) is not installed: apt-get install -y {package}"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must run the real-editor tests", pytrace=False)
    pytest.skip(reason)


def seed(workspace: Path) -> None:
    # "café" spelled with a combining accent; the line also holds a surrogate pair
    # (emoji) and CJK, so UTF-16 positions differ from code points and bytes.
    (workspace / "notes.txt").write_bytes(ORIGINAL.replace("cafe\u0301", "caf\u0301").encode())
    (workspace / "closed.txt").write_bytes(b"closed file on disk\n")


def texts(s: str) -> str:
    """The scenario's texts with the seeded spelling of "café" mapped back."""
    return s.replace("caf\u0301", "cafe\u0301")


def doc_config(*names: str) -> str:
    """The code blocks of docs/editors.md marked ``<!-- tested: NAME -->``, joined."""
    text = EDITORS_DOC.read_text()
    blocks = []
    for name in names:
        marker = f"<!-- tested: {name} -->"
        assert marker in text, f"{marker} is missing from {EDITORS_DOC}"
        after = text.split(marker, 1)[1]
        fence = after.index("```")
        body_start = after.index("\n", fence) + 1
        blocks.append(after[body_start : after.index("```", body_start)])
    return "\n".join(blocks)


def run(
    argv: list[str],
    tmp_path: Path,
    config: str,
    user_config: str | None = None,
    timeout: float = 90,
) -> dict[str, Any]:
    """Run one editor scenario; return its JSON result (texts normalized by ``texts``).

    ``user_config``: the editor configuration to load (docs/editors.md) when ``config``
    is "recommended". ``steadyhand`` on PATH runs this checkout's server.
    """
    workspace = tmp_path / "ws"
    workspace.mkdir()
    seed(workspace)
    home = tmp_path / "home"
    home.mkdir()
    result = tmp_path / "result.json"
    log = tmp_path / "server.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "steadyhand"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m steadyhand "$@" --log-file "{log}"\n')
    shim.chmod(0o755)
    user_file = tmp_path / "user-config"
    if user_config is not None:
        user_file.write_text(user_config)
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "SH_WORKSPACE": str(workspace.resolve()),
        "SH_RESULT": str(result),
        "SH_CONFIG": config,
        "SH_USER_CONFIG": str(user_file),
    }
    proc = subprocess.Popen(
        argv,
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    finally:
        # the language server is the editor's child: never leave it behind
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    transcript = output.decode(errors="replace")[-4000:]
    server_log = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    assert result.exists(), (
        f"the editor wrote no result (exit {proc.returncode}):\n{transcript}\n{server_log}"
    )
    data = json.loads(texts(result.read_text()))
    assert not data.get("fatal"), f"{data['fatal']}\n{transcript}\n{server_log}"
    assert data.get("initialized"), f"the server did not start:\n{transcript}\n{server_log}"
    return data  # type: ignore[no-any-return]


def check_common(r: dict[str, Any]) -> None:
    """What every real editor must show, whatever its configuration."""
    steps = r["steps"]
    # 1. reading an open file returns the buffer
    read = steps["read"]
    assert read["ok"] and read["source"] == "buffer" and read["unsaved"] is False, read
    assert "the color red" in read["message"]
    # 2. the edit lands in the buffer as one undo step, and disk agrees
    edit = steps["edit"]
    assert edit["ok"] and edit["via"] == "workspaceEdit" and edit["on_disk"] is True, edit
    assert r["after_edit"]["buffer"] == EDITED
    assert r["after_edit"]["disk"] == EDITED
    assert r["after_undo"]["restored"] is True, r["after_undo"]
    assert r["after_redo"]["buffer"] == EDITED
    # 3. positions on a line with a surrogate pair, CJK and a combining accent
    uni = steps["unicode"]
    assert uni["ok"] and uni["on_disk"] is True, uni
    assert r["after_unicode"]["buffer"] == UNICODE_EDITED == r["after_unicode"]["disk"]
    # 4. typing in the buffer makes the next edit stale; the buffer and disk are untouched
    stale = steps["stale"]
    assert stale["ok"] is False and stale["error"] == "stale", stale
    assert "+typed by the user" in stale["diff"]
    after = r["after_stale"]
    assert after["typed"] == UNICODE_EDITED + TYPED_LINE == after["buffer"]
    assert after["disk"] == after["disk_before"] == UNICODE_EDITED
    assert r["after_take_back"]["buffer"] == UNICODE_EDITED == r["after_take_back"]["disk"]
    # 5. an edit racing the user's typing is refused; nothing reaches the disk
    race = steps["race"]
    assert race["ok"] is False and race["error"] == "edit_rejected", race
    assert r["after_race"]["disk"] == r["after_race"]["disk_before"] == UNICODE_EDITED
    # 6. files that are not open are written on disk directly, not opened in the editor
    assert steps["closed_read"]["ok"] and steps["closed_read"]["source"] == "disk"
    closed = steps["closed_edit"]
    assert closed["ok"] and closed["via"] == "disk" and closed["on_disk"] is True, closed
    created = steps["create"]
    assert created["ok"] and created["type"] == "create" and created["via"] == "disk", created
    files = r["after_closed"]
    assert files["disk"] == "closed file ON DISK\n"
    assert files["created"] == "brand new\n"
