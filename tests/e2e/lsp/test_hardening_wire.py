"""The wire never goes silent: a bad frame header is answered with a Parse error and the
stream picks up at the next frame, on every way the server is reached (a stdin pipe, a
stdin that is a regular file, TCP); requests after ``shutdown`` are answered with
InvalidRequest, notifications after it are dropped, and ``exit`` still ends the server."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from steadyhand.protocol import commands
from tests.torture.harness import SERVE, Server, frame

EXECUTE = "workspace/executeCommand"
PING = {"command": commands.PING}

#: Frames whose header does not give a usable length, each followed by a body.
BAD_FRAMES = {
    "not a number": b"Content-Length: abc\r\n\r\n" + b'{"jsonrpc":"2.0","id":90,"method":"x"}',
    "negative": b"Content-Length: -5\r\n\r\n" + b'{"jsonrpc":"2.0","id":91,"method":"x"}',
    "underscore": b"Content-Length: 1_0\r\n\r\n" + b'{"a":1234}',
    "plus sign": b"Content-Length: +10\r\n\r\n" + b'{"a":1234}',
    "no header at all": b'{"jsonrpc":"2.0","id":92,"method":"x"}',
    "no length header": b"Content-Type: application/json\r\n\r\n" + b'{"jsonrpc":"2.0"}',
    "garbage line": b"hello there\r\n\r\n",
    "huge length": b"Content-Length: 99999999999999999999999\r\n\r\n{}",
}


def _request(msg_id: int, method: str, params: Any) -> bytes:
    body = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
    return frame(json.dumps(body).encode())


def _init(ws: Path, msg_id: int = 1) -> bytes:
    params = {
        "processId": os.getpid(),
        "rootUri": ws.as_uri(),
        "workspaceFolders": [{"uri": ws.as_uri(), "name": "ws"}],
        "capabilities": {},
    }
    notify = {"jsonrpc": "2.0", "method": "initialized", "params": {}}
    return _request(msg_id, "initialize", params) + frame(json.dumps(notify).encode())


def _answers(out: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in a stream of frames (as the server writes them)."""
    msgs: list[dict[str, Any]] = []
    pos = 0
    while True:
        head_end = out.find(b"\r\n\r\n", pos)
        if head_end < 0:
            return msgs
        headers = dict(line.split(b":", 1) for line in out[pos:head_end].split(b"\r\n") if line)
        length = int({k.lower(): v for k, v in headers.items()}[b"content-length"])
        body = out[head_end + 4 : head_end + 4 + length]
        msgs.append(json.loads(body))
        pos = head_end + 4 + length


@pytest.mark.parametrize("bad", list(BAD_FRAMES), ids=list(BAD_FRAMES))
async def test_a_bad_frame_is_answered_and_the_next_request_too(tmp_path: Path, bad: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    server = await Server.start(ws, state_dir=tmp_path / "state")
    try:
        parse_error = server._future(None)  # type: ignore[arg-type]
        await server.send_bytes(BAD_FRAMES[bad])
        pong = await server.request(EXECUTE, PING, timeout=20)
        assert pong["result"]["ok"], pong
        error = await asyncio.wait_for(parse_error, 5)
        assert error["error"]["code"] == -32700 and error["id"] is None, error
        assert "frame" in error["error"]["message"], error
        # and the stream stays in step afterwards
        again = await server.request(EXECUTE, PING, timeout=20)
        assert again["result"]["ok"], again
    finally:
        await server.stop()


async def test_bad_frames_from_a_regular_file_on_stdin(tmp_path: Path) -> None:
    """stdin that is a regular file (a recorded session replayed) is framed the same way."""
    ws = tmp_path / "ws"
    ws.mkdir()
    stream = _init(ws)
    for n, bad in enumerate(BAD_FRAMES.values()):
        stream += bad + _request(100 + n, EXECUTE, PING)
    stream += _request(500, "shutdown", None)
    stream += frame(b'{"jsonrpc":"2.0","method":"exit"}')
    (tmp_path / "in.bin").write_bytes(stream)
    env = dict(os.environ, STEADYHAND_STATE_DIR=str(tmp_path / "state"))
    with open(tmp_path / "in.bin", "rb") as stdin:
        done = subprocess.run(SERVE, stdin=stdin, capture_output=True, env=env, timeout=60)
    answers = _answers(done.stdout)
    pongs = {a["id"] for a in answers if isinstance(a.get("result"), dict)}
    assert pongs >= {100 + n for n in range(len(BAD_FRAMES))}, (answers, done.stderr[-3000:])
    parse_errors = [a for a in answers if a.get("error", {}).get("code") == -32700]
    assert len(parse_errors) == len(BAD_FRAMES), answers
    assert any(a.get("id") == 500 for a in answers)  # shutdown answered


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_bad_frames_over_tcp(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    port = _free_port()
    env = dict(os.environ, STEADYHAND_STATE_DIR=str(tmp_path / "state"))
    proc = subprocess.Popen(
        [*SERVE, "--tcp", "--host", "127.0.0.1", "--port", str(port)],
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        for _ in range(200):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the TCP server did not start")
        writer.write(_init(ws))
        for n, bad in enumerate(BAD_FRAMES.values()):
            writer.write(bad + _request(100 + n, EXECUTE, PING))
        writer.write(_request(500, "shutdown", None))
        await writer.drain()
        seen: list[dict[str, Any]] = []
        buf = b""
        while not any(a.get("id") == 500 for a in seen):
            chunk = await asyncio.wait_for(reader.read(65536), 20)
            assert chunk, seen
            buf += chunk
            seen = _answers(buf)
        pongs = {a["id"] for a in seen if isinstance(a.get("result"), dict)}
        assert pongs >= {100 + n for n in range(len(BAD_FRAMES))}, seen
        assert len([a for a in seen if a.get("error", {}).get("code") == -32700]) == len(BAD_FRAMES)
        writer.write(frame(b'{"jsonrpc":"2.0","method":"exit"}'))
        await writer.drain()
        writer.close()
        assert await asyncio.to_thread(proc.wait, 20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_requests_after_shutdown_fail_with_invalid_request(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    server = await Server.start(ws, state_dir=tmp_path / "state")
    try:
        down = await server.request("shutdown", None, timeout=20)
        assert "error" not in down, down
        # Steadyhand's own command (the direct lane), another method (pygls's path), and
        # a second shutdown: each is answered InvalidRequest, at once
        for method, params in [
            (EXECUTE, PING),
            (EXECUTE, {"command": commands.READ, "arguments": [{"file_path": "a.txt"}]}),
            ("textDocument/hover", {"textDocument": {"uri": "file:///x"}, "position": {}}),
            ("shutdown", None),
        ]:
            answer = await server.request(method, params, timeout=10)
            assert answer["error"]["code"] == -32600, (method, answer)
            assert "shut" in answer["error"]["message"], answer
        # a notification is dropped without an answer, and the server is still there
        await server.notify("workspace/didChangeConfiguration", {"settings": {}})
        await server.notify("exit", None)
        assert await asyncio.wait_for(server.proc.wait(), 20) == 0
    finally:
        await server.stop()


async def test_a_tool_cannot_run_after_shutdown(tmp_path: Path) -> None:
    """A write sent after shutdown is refused, not carried out."""
    ws = tmp_path / "ws"
    ws.mkdir()
    server = await Server.start(ws, state_dir=tmp_path / "state")
    try:
        await server.request("shutdown", None, timeout=20)
        answer = await server.request(
            EXECUTE,
            {
                "command": commands.WRITE,
                "arguments": [{"file_path": "new.txt", "content": "x"}],
            },
            timeout=10,
        )
        assert answer["error"]["code"] == -32600, answer
        assert not (ws / "new.txt").exists()
    finally:
        await server.stop()
