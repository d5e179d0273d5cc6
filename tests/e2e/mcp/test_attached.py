"""``steadyhand mcp`` attached to a running ``steadyhand serve``: tool calls go through
the editor's server, so open files are read from and edited in the editor's buffers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from steadyhand.mcp.rendezvous import MCP_CALL
from steadyhand.protocol.commands import EDIT, READ
from tests.conftest import call, client_with
from tests.e2e.mcp.helpers import LspServer, mcp_session, structured
from tests.editor import EditorState, open_doc, settle, type_text

editor = client_with(editor=True)


async def tool(client: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(name, arguments))


def _listen_for_mcp_calls(client: LanguageClient) -> list[Any]:
    seen: list[Any] = []

    @client.feature(MCP_CALL)
    def mcp_call(params: Any) -> None:
        seen.append(params)

    return seen


async def test_an_mcp_edit_lands_in_the_open_buffer_and_never_saves_the_typing(
    editor: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    calls = _listen_for_mcp_calls(editor)
    f = workspace / "notes.txt"
    f.write_text("alpha\nbeta\n")
    uri = open_doc(editor, state, f)
    type_text(editor, state, uri, "alpha\nbeta\ntyped, not saved\n")
    await settle()

    async with mcp_session(workspace, "--attach", "require", name="test-agent") as s:
        init = s.initialize_result
        assert init is not None and "Attached to " in (init.instructions or ""), init
        read = await tool(s, "read_file", file_path=str(f))
        assert read["ok"] and read["source"] == "buffer" and read["unsaved"] is True, read
        assert "typed, not saved" in read["message"]
        edit = await tool(s, "edit_file", file_path=str(f), old_string="beta", new_string="BETA")
        assert edit["ok"] and edit["via"] == "workspaceEdit", edit
        assert edit["on_disk"] is False, edit  # the buffer held unsaved typing
    await settle(0.2)
    assert state.buffers[uri].text == "alpha\nBETA\ntyped, not saved\n"
    assert f.read_text() == "alpha\nbeta\n"  # the disk never got the typing
    assert len(state.applied) == 1
    # the editor was told which calls came over MCP, and from which session and client
    assert [c.tool for c in calls] == ["read_file", "edit_file"], calls
    assert calls[1].command == EDIT and calls[1].result.ok is True
    assert calls[1].session.startswith("mcp-") and calls[1].client == "test-agent"
    assert calls[1].params.file_path == str(f)


async def test_the_in_editor_agent_and_mcp_sessions_are_apart(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    assert (await call(editor, READ, file_path=str(f)))["ok"]
    async with mcp_session(workspace, env={}) as s:
        refused = await tool(s, "edit_file", file_path=str(f), old_string="one", new_string="1")
        assert refused["error"] == "not_read", refused
    refused = await call(editor, EDIT, file_path=str(f), old_string="x", new_string="y")
    assert refused["error"] == "no_match", refused  # its own read still counts


CHANGES = [("line 1", "LINE 1"), ("line 3", "LINE 3"), ("line 5", "LINE 5")]


@pytest.mark.slow
async def test_two_mcp_clients_and_the_editor_agent_lose_no_update(
    editor: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor.editor  # type: ignore[attr-defined]
    lines = [f"line {i}\n" for i in range(1, 7)]
    opened, closed = workspace / "open.txt", workspace / "closed.txt"
    opened.write_text("".join(lines))
    closed.write_text("".join(lines))
    uri = open_doc(editor, state, opened)
    await settle()
    async with mcp_session(workspace) as one, mcp_session(workspace) as two:
        for f in (opened, closed):
            for s in (one, two):
                assert (await tool(s, "read_file", file_path=str(f)))["ok"]
            assert (await call(editor, READ, file_path=str(f)))["ok"]

            async def lsp_edit(old: str, new: str, f: Path = f) -> dict[str, Any]:
                return await call(editor, EDIT, file_path=str(f), old_string=old, new_string=new)

            def mcp_edit(s: Any, old: str, new: str, f: Path = f) -> Any:
                return tool(s, "edit_file", file_path=str(f), old_string=old, new_string=new)

            runs = [
                lambda: mcp_edit(one, *CHANGES[0]),
                lambda: mcp_edit(two, *CHANGES[1]),
                lambda: lsp_edit(*CHANGES[2]),
            ]
            results = await asyncio.gather(*(r() for r in runs))
            for result in results:
                assert result["ok"] or result["error"] in ("stale", "edit_rejected"), result
            # whoever was refused retries (a stale refusal refreshed its view)
            for _ in range(5):
                todo = [i for i, r in enumerate(results) if not r["ok"]]
                if not todo:
                    break
                for i in todo:
                    if results[i]["error"] == "edit_rejected":
                        reader = (one, two)[i] if i < 2 else None
                        if reader is None:
                            await call(editor, READ, file_path=str(f))
                        else:
                            await tool(reader, "read_file", file_path=str(f))
                    results[i] = await runs[i]()
            assert all(r["ok"] for r in results), results
            await settle(0.2)
            text = state.buffers[uri].text if f == opened else f.read_text()
            for _, new in CHANGES:
                assert new in text, (new, text)
            assert text.count("\n") == 6, text
            if f == opened:
                assert opened.read_text() == text  # a clean buffer is saved after each edit


@pytest.mark.slow
async def test_when_the_editor_goes_away_auto_goes_on_standalone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_text("one\ntwo\n")
    editor = LspServer(ws)
    try:
        async with mcp_session(ws) as s:
            assert "Attached" in (s.initialize_result.instructions or "")  # type: ignore[union-attr]
            assert (await tool(s, "read_file", file_path=str(f)))["ok"]
            editor.kill()
            await asyncio.sleep(1.0)
            after = await tool(s, "read_file", file_path=str(f))
            assert after["ok"] and "server went away" in after["message"], after
            assert "one" in after["message"]
            again = await tool(s, "edit_file", file_path=str(f), old_string="one", new_string="1")
            assert again["ok"] and "went away" not in again["message"], again
        assert f.read_text() == "1\ntwo\n"
    finally:
        editor.kill()


@pytest.mark.slow
async def test_when_the_editor_goes_away_require_answers_a_tool_error(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    f = ws / "f.txt"
    f.write_text("one\n")
    editor = LspServer(ws)
    try:
        async with mcp_session(ws, "--attach", "require") as s:
            assert (await tool(s, "read_file", file_path=str(f)))["ok"]
            editor.kill()
            await asyncio.sleep(1.0)
            gone = await tool(s, "edit_file", file_path=str(f), old_string="one", new_string="1")
            assert gone["ok"] is False and gone["error"] == "not_attached", gone
            # (had the call left before the loss was seen: "... whether it was applied is
            # unknown", with the same code)
            assert "nothing was done" in gone["message"] or "unknown" in gone["message"], gone
            # a new editor server for the folder: the next call attaches to it
            editor = LspServer(ws)
            back = await tool(s, "read_file", file_path=str(f))
            assert back["ok"] and back["source"] == "disk", back
        assert f.read_text() == "one\n"
    finally:
        editor.kill()


async def test_never_stays_standalone(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    editor = LspServer(ws)
    try:
        async with mcp_session(ws, "--attach", "never") as s:
            assert "Standalone" in (s.initialize_result.instructions or "")  # type: ignore[union-attr]
    finally:
        editor.kill()


# -- the socket ---------------------------------------------------------------------------


@contextlib.contextmanager
def _runtime_dir() -> Iterator[Path]:
    """A runtime folder outside pytest's own (which only root may enter)."""
    run = Path(tempfile.mkdtemp(prefix="steadyhand-run-"))
    try:
        yield run
    finally:
        shutil.rmtree(run, ignore_errors=True)


def _as_nobody(code: str) -> subprocess.CompletedProcess[str]:
    setpriv = shutil.which("setpriv")
    if os.getuid() != 0 or setpriv is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs as root with setpriv: the other-user test must run")
        pytest.skip("needs root and setpriv to run a client as another user")
    as_nobody = [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
    # an interpreter the other user may run (a root-only one, such as pyenv's, is not)
    for python in ("/usr/bin/python3", "/usr/local/bin/python3", sys.executable):
        probe = subprocess.run([*as_nobody, python, "-c", "pass"], capture_output=True, cwd="/")
        if probe.returncode == 0:
            break
    else:
        pytest.fail("no Python interpreter that the user nobody may run")
    return subprocess.run(
        [*as_nobody, python, "-c", code], capture_output=True, text=True, timeout=60, cwd="/"
    )


_CLIENT = """
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1] if len(sys.argv) > 1 else {path!r})
except OSError as e:
    print(json.dumps({{"connect": e.__class__.__name__}})); sys.exit(0)
s.settimeout(10)
call = {{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {{"name": "write_file",
        "arguments": {{"file_path": {target!r}, "content": "owned\\n"}}}}}}
try:
    s.sendall(json.dumps(call).encode() + b"\\n")
    data = s.recv(65536)
except OSError as e:
    print(json.dumps({{"connect": "ok", "error": e.__class__.__name__}})); sys.exit(0)
print(json.dumps({{"connect": "ok", "answer": data.decode()}}))
"""


def test_the_socket_refuses_a_client_of_another_user(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = ws / "f.txt"
    target.write_text("mine\n")
    with _runtime_dir() as run:
        editor = LspServer(ws, env={"STEADYHAND_RUNTIME_DIR": str(run)})
        try:
            folder = run
            sock = folder / f"{editor.proc.pid}.sock"
            assert sock.exists() and (folder / f"{editor.proc.pid}.json").exists()
            assert stat.S_IMODE(folder.stat().st_mode) == 0o700
            desc = json.loads((folder / f"{editor.proc.pid}.json").read_text())
            assert desc["roots"] == [str(ws.resolve())] and desc["editor"] == "test-editor"
            code = _CLIENT.format(path=str(sock), target=str(target))
            # the folder keeps others out
            out = _as_nobody(code)
            assert json.loads(out.stdout) == {"connect": "PermissionError"}, out
            # and were the folder and socket open to all, the server still refuses them
            folder.chmod(0o755)
            sock.chmod(0o777)
            out = _as_nobody(code)
            answer = json.loads(out.stdout)
            assert answer["connect"] == "ok" and not answer.get("answer"), answer
            assert target.read_text() == "mine\n"
            # the same user is served
            mine = socket.socket(socket.AF_UNIX)
            mine.connect(str(sock))
            mine.settimeout(10)
            hello = {"jsonrpc": "2.0", "method": "hello", "params": {"session": "t"}}
            mine.sendall(json.dumps(hello).encode() + b"\n")
            assert b'"pid":' in mine.recv(65536)
            mine.close()
        finally:
            editor.kill()
        # a server that is gone leaves files behind, which the next look removes
        assert sock.exists()
        subprocess.run(
            [sys.executable, "-m", "steadyhand", "mcp", "--attach", "auto"],
            input="",
            cwd=ws,
            env={**os.environ, "STEADYHAND_RUNTIME_DIR": str(run)},
            capture_output=True,
            timeout=60,
        )
        assert not sock.exists() and not (folder / f"{editor.proc.pid}.json").exists()


def test_a_server_that_stops_removes_its_socket(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with _runtime_dir() as run:
        editor = LspServer(ws, env={"STEADYHAND_RUNTIME_DIR": str(run)})
        sock = run / f"{editor.proc.pid}.sock"
        assert sock.exists()
        editor.request(2, "shutdown", None)
        assert not sock.exists()
        editor.send({"jsonrpc": "2.0", "method": "exit"})
        editor.proc.wait(timeout=20)
        editor.kill()


def test_no_tcp_listener(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    editor = LspServer(ws)
    try:
        fds = Path(f"/proc/{editor.proc.pid}/fd")
        inodes = {
            os.readlink(fd).removeprefix("socket:[").rstrip("]")
            for fd in fds.iterdir()
            if os.readlink(fd).startswith("socket:")
        }
        for table in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(table) as fh:
                listening = [row.split()[9] for row in list(fh)[1:] if row.split()[3] == "0A"]
            assert not inodes & set(listening), table
    finally:
        editor.kill()
