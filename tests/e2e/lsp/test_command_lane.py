"""``workspace/executeCommand`` over the raw wire: the direct lane for Steadyhand's own
commands and pygls's path for everything else give the answers a client expects."""

from __future__ import annotations

from pathlib import Path

from steadyhand.protocol import commands
from tests.torture.harness import Server

EXECUTE = "workspace/executeCommand"


async def test_commands_answer_on_the_raw_wire(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "u.txt").write_text("héllo ✓ — naïve\n", encoding="utf-8")
    server = await Server.start(ws, state_dir=tmp_path / "state")
    try:
        # no `arguments` at all, and a work-done token beside the command
        pong = await server.request(EXECUTE, {"command": commands.PING})
        assert pong["result"]["ok"] and pong["result"]["message"] == "pong", pong
        token = await server.request(
            EXECUTE, {"command": commands.PING, "arguments": [], "workDoneToken": "t1"}
        )
        assert token["result"]["ok"], token

        # non-ASCII text: the frame's Content-Length counts the UTF-8 bytes (the reader
        # reads exactly that many and parses them)
        read = await server.call(commands.READ, file_path="u.txt")
        assert "héllo ✓ — naïve" in read["message"], read

        # an unknown command and arguments that are not a list: InvalidParams errors
        unknown = await server.request(EXECUTE, {"command": "steadyhand.nope", "arguments": []})
        assert unknown["error"]["code"] == -32602 and "nope" in unknown["error"]["message"]
        not_list = await server.request(EXECUTE, {"command": commands.PING, "arguments": {"a": 1}})
        assert not_list["error"]["code"] == -32602, not_list

        # bad params inside the one object: InvalidParams naming the field
        bad = await server.request(EXECUTE, {"command": commands.READ, "arguments": [{}]})
        assert bad["error"]["code"] == -32602 and "file_path" in bad["error"]["message"]

        # a cancel for a request already answered changes nothing
        await server.notify("$/cancelRequest", {"id": 1})
        again = await server.request(EXECUTE, {"command": commands.PING})
        assert again["result"]["ok"], again
    finally:
        await server.stop()
