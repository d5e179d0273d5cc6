"""Attached mode's macOS branch, run under an emulated macOS (``emulated_darwin/``:
``sys.platform`` is darwin, Linux-only socket names are gone; the kernel is still Linux).

What this can check: the server listens, with its socket and descriptor private; the
macOS peer check runs, and since a Linux kernel answers neither ``LOCAL_PEERCRED`` nor
``getpeereid``, no peer can be identified, so none is trusted (both ends fail closed)
and ``--attach auto`` goes on standalone. What it cannot check is the answer of a macOS
kernel: the test that attaches for real runs on macOS only (skipped here).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.mcp.helpers import SERVER, LspServer, RawMcp

EMULATION = Path(__file__).resolve().parent / "emulated_darwin"

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="emulated on a Linux kernel")


def _env(run: Path, *, emulated: bool) -> dict[str, str]:
    env = {**os.environ, "STEADYHAND_RUNTIME_DIR": str(run)}
    if emulated:
        path = os.environ.get("PYTHONPATH")
        env["PYTHONPATH"] = str(EMULATION) + (os.pathsep + path if path else "")
        env["STEADYHAND_EMULATE_PLATFORM"] = "darwin"
    return env


@linux_only
def test_the_emulation_takes() -> None:
    probe = "import sys, socket, fcntl; print(sys.platform, hasattr(socket, 'SO_PEERCRED'))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=_env(Path("/nonexistent"), emulated=True),
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["darwin", "False"], out


@linux_only
def test_under_an_emulated_macos_no_peer_that_cannot_be_identified_is_trusted(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("on disk\n")
    run = tmp_path / "run"
    editor = LspServer(ws, environ=_env(run, emulated=True))
    try:
        sock, desc = run / f"{editor.proc.pid}.sock", run / f"{editor.proc.pid}.json"
        assert sock.is_socket() and stat.S_IMODE(sock.stat().st_mode) == 0o600
        assert json.loads(desc.read_text())["roots"] == [str(ws.resolve())]
        assert stat.S_IMODE(run.stat().st_mode) == 0o700
        # an MCP server under the same emulation cannot identify the editor's: it does
        # not attach (require fails, auto goes on standalone and works)
        done = subprocess.run(
            [*SERVER, "--attach", "require"],
            input="",
            capture_output=True,
            text=True,
            cwd=ws,
            env=_env(run, emulated=True),
            timeout=60,
        )
        assert done.returncode == 1, done.stderr
        assert "cannot tell which user runs the server" in done.stderr, done.stderr
        raw = RawMcp(ws, "--attach", "auto", env=_env(run, emulated=True))
        try:
            assert "Standalone" in raw.initialize()["result"]["instructions"]
            raw.call(1, "read_file", file_path="f.txt")
            assert raw.answer_of(1)["result"]["structuredContent"]["source"] == "disk"
        finally:
            raw.close()
        # nor does the emulated editor's server serve a client it cannot identify
        done = subprocess.run(
            [*SERVER, "--attach", "require"],
            input="",
            capture_output=True,
            text=True,
            cwd=ws,
            env=_env(run, emulated=False),
            timeout=60,
        )
        assert done.returncode == 1, done.stderr
    finally:
        editor.kill()


@pytest.mark.skipif(
    sys.platform != "darwin",
    reason="needs a macOS kernel: under the emulation on Linux, LOCAL_PEERCRED cannot be "
    "judged (the same option number is Linux's IP_TOS)",
)
def test_attached_on_macos(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    run = tmp_path / "run"
    editor = LspServer(ws, env={"STEADYHAND_RUNTIME_DIR": str(run)})
    try:
        raw = RawMcp(ws, "--attach", "require", env=_env(run, emulated=False))
        try:
            assert "Attached to" in raw.initialize()["result"]["instructions"]
        finally:
            raw.close()
    finally:
        editor.kill()
