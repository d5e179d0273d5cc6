"""Driving ``steadyhand mcp`` with the official MCP Python SDK's client, over stdio.

Every server the tests start gets the environment it needs passed explicitly (the SDK
starts servers with a filtered environment): its own ``XDG_RUNTIME_DIR`` (where the
sockets of running language servers are found) and a scratch history folder.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

SERVER = [sys.executable, "-m", "steadyhand", "mcp"]


def server_params(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> StdioServerParameters:
    return StdioServerParameters(
        command=SERVER[0],
        args=[*SERVER[1:], *args],
        cwd=str(cwd),
        env={**os.environ, **(env or {})},
    )


@contextlib.asynccontextmanager
async def mcp_session(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    roots: list[Path] | None = None,
    name: str = "steadyhand-tests",
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with ``steadyhand mcp ARGS`` (run in ``cwd``);
    ``roots``: the client offers these as its roots."""
    callback = None
    if roots is not None:
        listed = types.ListRootsResult(
            roots=[types.Root(uri=r.resolve().as_uri(), name=r.name) for r in roots]  # type: ignore[arg-type]
        )

        async def callback(context: Any) -> types.ListRootsResult:
            return listed

    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server_params(cwd, *args, env=env), errlog=quiet) as (read, write),
            ClientSession(
                read,
                write,
                list_roots_callback=callback,
                client_info=types.Implementation(name=name, version="1"),
            ) as session,
        ):
            await session.initialize()
            yield session


def structured(result: Any) -> dict[str, Any]:
    """A ``CallToolResult``'s structured content, checked against its text content."""
    data = result.structured_content
    assert isinstance(data, dict), result
    assert result.content and result.content[0].type == "text", result
    assert result.content[0].text == data["message"], result
    assert result.is_error is (not data["ok"]), result
    return data


class LspServer:
    """``steadyhand serve`` in a process of its own, started the way an editor starts it
    (initialize, initialized), that a test can stop or kill at will."""

    def __init__(self, workspace: Path, env: dict[str, str] | None = None) -> None:
        import subprocess

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workspace,
            env={**os.environ, **(env or {})},
        )
        uri = workspace.resolve().as_uri()
        self.request(
            1,
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uri,
                "capabilities": {},
                "workspaceFolders": [{"uri": uri, "name": "ws"}],
                "clientInfo": {"name": "test-editor"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def send(self, msg: dict[str, Any]) -> None:
        import json

        assert self.proc.stdin is not None
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        self.proc.stdin.flush()

    def request(self, msg_id: int, method: str, params: Any) -> Any:
        import json

        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = out.readline()
                assert line, "the server exited"
                if not line.strip():
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            msg = json.loads(out.read(length))
            if msg.get("id") == msg_id and "method" not in msg:
                return msg.get("result")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()
