"""Driving ``steadyhand mcp`` with the official MCP Python SDK's client, over stdio.

Every server the tests start gets the environment it needs passed explicitly (the SDK
starts servers with a filtered environment): its own ``STEADYHAND_RUNTIME_DIR`` (where
the sockets of running language servers are found: the tests' override of the per-user
folder) and a scratch history folder.
"""

from __future__ import annotations

import contextlib
import os
import queue
import sys
import threading
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
    errlog: Any = None,
) -> AsyncIterator[ClientSession]:
    """An initialized SDK client session with ``steadyhand mcp ARGS`` (run in ``cwd``);
    ``roots``: the client offers these as its roots; ``errlog``: a file for the server's
    stderr (else it is dropped)."""
    callback = None
    if roots is not None:
        listed = types.ListRootsResult(
            roots=[types.Root(uri=r.resolve().as_uri(), name=r.name) for r in roots]  # type: ignore[arg-type]
        )

        async def callback(context: Any) -> types.ListRootsResult:
            return listed

    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server_params(cwd, *args, env=env), errlog=errlog or quiet) as (
                read,
                write,
            ),
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
    (initialize, initialized), that a test can stop or kill at will. ``folders``: its
    workspace folders (default: ``workspace`` alone); ``env``: variables to set, or to
    remove when given as None; ``environ``: the whole environment instead of this one."""

    def __init__(
        self,
        workspace: Path,
        env: dict[str, str | None] | None = None,
        folders: list[Path] | None = None,
        environ: dict[str, str] | None = None,
    ) -> None:
        import subprocess

        full = dict(os.environ if environ is None else environ)
        for key, value in (env or {}).items():
            if value is None:
                full.pop(key, None)
            else:
                full[key] = value
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=workspace,
            env=full,
        )
        #: What the server sent, read as it comes (see :meth:`_read`).
        self.received: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        uris = [f.resolve().as_uri() for f in folders or [workspace]]
        self.request(
            1,
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": uris[0],
                "capabilities": {},
                "workspaceFolders": [{"uri": u, "name": f"f{i}"} for i, u in enumerate(uris)],
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

    def _read(self) -> None:
        """Read every message the server writes as soon as it comes, as an editor does:
        one left unread (the server's notifications of MCP calls) would fill the pipe,
        and the server, waiting to write, would serve nothing else (on Linux the server
        widens its stdout to 1 MiB, which only puts this off; macOS pipes hold 64 KiB)."""
        import json

        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = 0
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if not line.strip():
                        break
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                self.received.put(json.loads(out.read(length)))
        except (OSError, ValueError):
            return
        finally:
            self.received.put(None)

    def request(self, msg_id: int, method: str, params: Any, timeout: float = 60) -> Any:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            msg = self.received.get(timeout=timeout)
            assert msg is not None, "the server exited"
            if msg.get("id") == msg_id and "method" not in msg:
                return msg.get("result")

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        for f in (self.proc.stdin, self.proc.stdout):
            if f is not None:
                f.close()


class RawMcp:
    """``steadyhand mcp`` driven line by line, for clients the SDK cannot play: ones that
    answer badly, late or never, pick their own ids, or stop reading. ``env``: the whole
    environment of the server."""

    def __init__(
        self, cwd: Path, *args: str, env: dict[str, str] | None = None, stderr: Any = None
    ) -> None:
        import queue
        import subprocess
        import threading

        self.proc = subprocess.Popen(
            [*SERVER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr if stderr is not None else subprocess.DEVNULL,
            cwd=cwd,
            env=dict(os.environ) if env is None else env,
        )
        self.lines: queue.Queue[dict[str, Any] | None] = queue.Queue()

        def read() -> None:
            import json

            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.put(json.loads(line))
            self.lines.put(None)

        threading.Thread(target=read, daemon=True).start()

    def send(self, msg: dict[str, Any]) -> None:
        import json

        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30) -> dict[str, Any]:
        msg = self.lines.get(timeout=timeout)
        assert msg is not None, "the server closed its output"
        return msg

    def wait_for(self, pred: Any, timeout: float = 30) -> dict[str, Any]:
        """The next message ``pred`` accepts (the others are dropped)."""
        import time

        end = time.monotonic() + timeout
        while True:
            msg = self.receive(max(0.01, end - time.monotonic()))
            if pred(msg):
                return msg

    def answer_of(self, msg_id: Any, timeout: float = 30) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def initialize(
        self, protocol: str = "2025-11-25", roots: bool = False, name: str = "raw-client"
    ) -> dict[str, Any]:
        caps: dict[str, Any] = {"roots": {"listChanged": True}} if roots else {}
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": protocol,
                    "capabilities": caps,
                    "clientInfo": {"name": name, "version": "1"},
                },
            }
        )
        init = self.answer_of(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return init

    def call(self, msg_id: Any, tool: str, **arguments: Any) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": msg_id,
                "method": "tools/call",
                "params": {"name": tool, "arguments": arguments},
            }
        )

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=20)
        except Exception:
            self.proc.kill()
            self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()
