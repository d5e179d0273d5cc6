"""Shared machinery of the torture suite: a raw LSP client over stdio, sizes, figures.

The client speaks JSON-RPC to a real ``steadyhand serve`` process with nothing in between,
so tests can also send bytes no well-behaved client would (malformed frames, invalid
UTF-8), run several servers at once, and SIGKILL one mid-write.

Sizes: a CI-friendly run by default, the full run with ``STEADYHAND_TORTURE=full``.
Figures: each test calls :func:`record`; with ``STEADYHAND_TORTURE_REPORT=<file>`` they
are appended there as JSON lines (``tests/torture/report.py`` prints them as a table).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

FULL = os.environ.get("STEADYHAND_TORTURE", "").lower() == "full"

SERVE = [sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING"]


def size(ci: int, full: int) -> int:
    """The CI size, or the full size under ``STEADYHAND_TORTURE=full``."""
    return full if FULL else ci


def record(area: str, **figures: Any) -> None:
    """Keep a test's figures for the report (and print them for ``pytest -s``)."""
    line = {"area": area, "full": FULL, **figures}
    print(f"[torture] {json.dumps(line)}")
    path = os.environ.get("STEADYHAND_TORTURE_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")


def frame(payload: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(payload) + payload


class ServerDied(RuntimeError):
    pass


class Server:
    """One ``steadyhand serve`` process and a client to it."""

    def __init__(self, proc: asyncio.subprocess.Process, stderr_path: Path) -> None:
        self.proc = proc
        self.stderr_path = stderr_path
        self._next = 0
        self._pending: dict[int | str, asyncio.Future[dict[str, Any]]] = {}
        self.notifications: list[dict[str, Any]] = []
        #: Answers a request from the server: given it, returns the answer's ``result``
        #: or ``error`` member (as a dict). None: every request gets a null result.
        self.on_request: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
        self._reader = asyncio.get_running_loop().create_task(self._read_loop())

    @staticmethod
    async def start(
        workspace: Path,
        *,
        state_dir: Path,
        env: dict[str, str] | None = None,
        options: dict[str, Any] | None = None,
        initialize: bool = True,
    ) -> Server:
        full_env = dict(os.environ)
        full_env["STEADYHAND_STATE_DIR"] = str(state_dir)
        full_env.pop("STEADYHAND_FAULTS", None)
        full_env.update(env or {})
        stderr_path = state_dir / f"server-{time.monotonic_ns()}.log"
        state_dir.mkdir(parents=True, exist_ok=True)
        with open(stderr_path, "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *SERVE,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=err,
                env=full_env,
                limit=1 << 26,
            )
        server = Server(proc, stderr_path)
        if initialize:
            await server.initialize(workspace, options)
        return server

    async def initialize(self, workspace: Path, options: dict[str, Any] | None = None) -> None:
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": workspace.as_uri(),
                "workspaceFolders": [{"uri": workspace.as_uri(), "name": "ws"}],
                "capabilities": {},
                "initializationOptions": options,
            },
        )
        await self.notify("initialized", {})

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    # -- wire ------------------------------------------------------------------------

    async def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        if self.proc.returncode is not None:
            raise ServerDied(self.stderr())
        self.proc.stdin.write(data)
        await self.proc.stdin.drain()

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_bytes(frame(json.dumps(message).encode("utf-8")))

    async def notify(self, method: str, params: Any) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def _future(self, key: int | str) -> asyncio.Future[dict[str, Any]]:
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[key] = fut
        return fut

    async def request(self, method: str, params: Any, timeout: float = 60) -> dict[str, Any]:
        """Send a request and return the whole response (``result`` or ``error``)."""
        self._next += 1
        key = self._next
        fut = self._future(key)
        await self.send({"jsonrpc": "2.0", "id": key, "method": method, "params": params})
        return await self._wait(fut, timeout)

    async def request_raw(
        self, keys: list[int | str | None], body: bytes, timeout: float = 60
    ) -> dict[str, Any]:
        """Send a hand-made body; return the first response carrying one of ``keys``
        (None: a response with a null id)."""
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        for key in keys:
            self._pending[key] = fut  # type: ignore[index]
        await self.send_bytes(frame(body))
        try:
            return await self._wait(fut, timeout)
        finally:
            for key in keys:
                self._pending.pop(key, None)  # type: ignore[arg-type]

    async def _wait(self, fut: asyncio.Future[dict[str, Any]], timeout: float) -> dict[str, Any]:
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            raise AssertionError(f"no answer within {timeout}s; log:\n{self.stderr()}") from None

    async def call(self, command: str, **params: Any) -> dict[str, Any]:
        """Run a Steadyhand command with one params object; return its result object."""
        resp = await self.request(
            "workspace/executeCommand", {"command": command, "arguments": [params]}
        )
        if "error" in resp:
            return {"ok": False, "rpc_error": resp["error"]}
        result = resp["result"]
        assert isinstance(result, dict), resp
        return result

    async def _read_loop(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = -1
                while True:
                    line = await out.readline()
                    if not line:
                        raise EOFError
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value)
                msg = json.loads(await out.readexactly(length))
                await self._dispatch(msg)
        except (EOFError, asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for fut in self._pending.values():
                if not fut.done():
                    fut.set_exception(ServerDied(self.stderr()))

    async def _dispatch(self, msg: dict[str, Any]) -> None:
        if "method" in msg:
            if "id" in msg:  # a request from the server (registerCapability, ...)
                reply = {"result": None} if self.on_request is None else await self.on_request(msg)
                with contextlib.suppress(ServerDied, ConnectionError):
                    await self.send({"jsonrpc": "2.0", "id": msg["id"], **reply})
            else:
                self.notifications.append(msg)
            return
        fut = self._pending.pop(msg.get("id"), None)  # type: ignore[arg-type]
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def rss_kib(self) -> int:
        with open(f"/proc/{self.pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    # -- ending ------------------------------------------------------------------------

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)

    async def stop(self) -> None:
        """Shut down politely; kill after a few seconds."""
        if self.alive:
            with contextlib.suppress(Exception):
                await self.request("shutdown", None, timeout=5)
                await self.notify("exit", None)
            try:
                await asyncio.wait_for(self.proc.wait(), 5)
            except TimeoutError:
                self.kill()
        await self.proc.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
