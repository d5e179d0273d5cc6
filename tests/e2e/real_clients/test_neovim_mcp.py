"""An agent over MCP while a real headless Neovim holds the file open with unsaved typing.

Neovim runs ``steadyhand serve`` as its language server (Neovim's own client, as
shipped); ``steadyhand mcp``, started in the same folder and driven by the official MCP
SDK's client, attaches to that server. The agent's read sees Neovim's buffer, its edit
lands in the buffer, and the disk never gets the user's typing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.mcp.helpers import mcp_session, structured
from tests.e2e.real_clients.harness import HERE, require

ORIGINAL = "first line\nthe color red\nlast line\n"
TYPED = "typed by the user\n"


async def _wait_for(path: Path, proc: subprocess.Popen[bytes], seconds: float) -> None:
    for _ in range(int(seconds * 20)):
        if path.exists() or proc.poll() is not None:
            return
        await asyncio.sleep(0.05)


async def test_mcp_edit_lands_in_neovims_buffer_and_never_saves_the_typing(
    tmp_path: Path,
) -> None:
    nvim = require("nvim", "neovim")
    ws = tmp_path / "ws"
    ws.mkdir()
    notes = ws / "notes.txt"
    notes.write_text(ORIGINAL)
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "server.log"
    shim = bin_dir / "steadyhand"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m steadyhand "$@" --log-file "{log}"\n')
    shim.chmod(0o755)
    result, ready, go = tmp_path / "result.json", tmp_path / "ready", tmp_path / "go"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "SH_WORKSPACE": str(ws.resolve()),
        "SH_RESULT": str(result),
        "SH_READY": str(ready),
        "SH_GO": str(go),
    }
    argv = [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n"]
    argv += ["-c", f"luafile {HERE / 'mcp_scenario.lua'}"]
    proc = subprocess.Popen(
        argv,
        cwd=ws,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    steps: dict[str, Any] = {}
    try:
        await _wait_for(ready, proc, 60)
        assert ready.exists(), f"Neovim did not get ready (exit {proc.poll()})"
        async with mcp_session(ws, "--attach", "require") as s:
            steps["instructions"] = s.initialize_result.instructions  # type: ignore[union-attr]
            read = await s.call_tool("read_file", {"file_path": "notes.txt"})
            steps["read"] = structured(read)
            edit = await s.call_tool(
                "edit_file",
                {"file_path": "notes.txt", "old_string": "color", "new_string": "colour"},
            )
            steps["edit"] = structured(edit)
        go.write_text("go")
        await _wait_for(result, proc, 30)
        proc.wait(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    server_log = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    assert result.exists(), f"Neovim wrote no result\n{server_log}"
    r = json.loads(result.read_text())
    assert not r.get("fatal"), f"{r['fatal']}\n{server_log}"
    assert r["typed"] == ORIGINAL + TYPED
    assert "Attached to Neovim" in steps["instructions"], steps["instructions"]
    # the agent read Neovim's buffer, typing included
    read = steps["read"]
    assert read["ok"] and read["source"] == "buffer" and read["unsaved"] is True, read
    assert "typed by the user" in read["message"]
    # its edit landed in the buffer, next to the typing; the disk never got the typing
    edit = steps["edit"]
    assert edit["ok"] and edit["via"] == "workspaceEdit" and edit["on_disk"] is False, edit
    assert r["buffer"] == ORIGINAL.replace("color", "colour") + TYPED
    assert r["modified"] is True
    assert r["disk"] == ORIGINAL
