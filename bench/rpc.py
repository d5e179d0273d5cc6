"""A minimal, blocking JSON-RPC 2.0 client over a child process's stdio.

The same client drives every server in the benchmark, so its own cost (one ``orjson.dumps``,
one ``os.write``, reads until the answer, one ``orjson.loads``) is the same for all of them.
It is kept small on purpose: its cost is added to every contender's time alike, so a slow
client would pull every ratio towards 1.
Two framings: LSP (``Content-Length`` headers) and newline-delimited JSON (MCP stdio).
Requests the server sends to the client are answered with ``null``; notifications are
dropped.
"""

from __future__ import annotations

import os
import select
import subprocess
import time
from collections.abc import Sequence
from typing import Any, Literal

import orjson

Framing = Literal["lsp", "ndjson"]


class RpcError(RuntimeError):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error


class ServerGone(RuntimeError):
    pass


class RpcClient:
    def __init__(
        self,
        argv: Sequence[str],
        framing: Framing,
        *,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        stderr_path: str | None = None,
    ) -> None:
        self.framing = framing
        err = open(stderr_path, "ab") if stderr_path else subprocess.DEVNULL  # noqa: SIM115
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=cwd,
            env=env,
            bufsize=0,
        )
        if stderr_path:
            err.close()  # type: ignore[union-attr]
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin.fileno()
        self._out = self.proc.stdout.fileno()
        self._buf = bytearray()
        self._next_id = 0
        #: Notifications from the server, kept only when ``keep_notifications`` is set.
        self.keep_notifications = False
        self.notifications: list[dict[str, Any]] = []

    @property
    def pid(self) -> int:
        return self.proc.pid

    # -- framing ------------------------------------------------------------------------

    def _send(self, msg: dict[str, Any]) -> None:
        body = orjson.dumps(msg)
        if self.framing == "lsp":
            data = b"Content-Length: %d\r\n\r\n%b" % (len(body), body)
        else:
            data = body + b"\n"
        view = memoryview(data)
        while view:
            n = os.write(self._in, view)
            view = view[n:]

    def _fill(self) -> None:
        chunk = os.read(self._out, 1 << 20)
        if not chunk:
            raise ServerGone(f"server exited (code {self.proc.poll()})")
        self._buf += chunk

    def _recv(self) -> dict[str, Any]:
        buf = self._buf
        if self.framing == "ndjson":
            while True:
                i = buf.find(b"\n")
                if i >= 0:
                    line = bytes(buf[:i])
                    del buf[: i + 1]
                    if line.strip():
                        msg: dict[str, Any] = orjson.loads(line)
                        return msg
                    continue
                self._fill()
        while True:
            i = buf.find(b"\r\n\r\n")
            if i >= 0:
                length = -1
                for header in bytes(buf[:i]).split(b"\r\n"):
                    name, _, value = header.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                start = i + 4
                while len(buf) < start + length:
                    self._fill()
                body = bytes(buf[start : start + length])
                del buf[: start + length]
                msg = orjson.loads(body)
                return msg
            self._fill()

    # -- calls --------------------------------------------------------------------------

    def notify(self, method: str, params: Any = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def send_request(self, method: str, params: Any = None) -> int:
        self._next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        return self._next_id

    def wait(self, request_id: int) -> Any:
        while True:
            msg = self._recv()
            if "method" in msg:
                self._server_message(msg)
                continue
            if msg.get("id") != request_id:
                continue
            if "error" in msg:
                raise RpcError(msg["error"])
            return msg.get("result")

    def _server_message(self, msg: dict[str, Any]) -> None:
        if "id" in msg:  # a request from the server: answer it plainly
            self._send({"jsonrpc": "2.0", "id": msg["id"], "result": None})
        elif self.keep_notifications:
            self.notifications.append(msg)

    def _buffered_frame(self) -> bool:
        return (b"\n" if self.framing == "ndjson" else b"\r\n\r\n") in self._buf

    def poll_notifications(self, timeout: float) -> None:
        """Read what the server sends for up to ``timeout`` seconds (no request pending)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ready = self._buffered_frame() or (
                left > 0 and bool(select.select([self._out], [], [], left)[0])
            )
            if not ready:
                return
            msg = self._recv()
            if "method" in msg:
                self._server_message(msg)

    def request(self, method: str, params: Any = None) -> Any:
        return self.wait(self.send_request(method, params))

    def pipelined(self, method: str, params_list: Sequence[Any], depth: int = 64) -> list[Any]:
        """Send many requests keeping ``depth`` in flight; answers in order."""
        results: list[Any] = []
        pending: list[int] = []
        for params in params_list:
            pending.append(self.send_request(method, params))
            if len(pending) >= depth:
                results.append(self.wait(pending.pop(0)))
        for rid in pending:
            results.append(self.wait(rid))
        return results

    def close(self, *, lsp_shutdown: bool = True) -> None:
        if self.proc.poll() is None:
            try:
                if self.framing == "lsp" and lsp_shutdown:
                    self.request("shutdown")
                    self.notify("exit")
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except Exception:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM (peak) of a process, in KiB."""
    out: dict[str, int] = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                key, value = line.split(":", 1)
                out[key] = int(value.split()[0])
    return out


def reset_peak(pid: int) -> bool:
    """Reset a process's peak RSS (VmHWM) to its current RSS; False if not permitted."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False
