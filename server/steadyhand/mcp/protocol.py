"""Newline-delimited JSON-RPC 2.0 on asyncio: the framing MCP's stdio transport uses, and
the socket an MCP server attaches through.

Each complete line is handed on in the callback that read it (no reader task, no queue),
answers are written at once, and a handler that never waits is answered within the same
turn of the event loop (:func:`start`). Nothing here knows MCP's methods.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
from collections.abc import Callable, Coroutine
from typing import Any

from steadyhand.runtime.tasks import Resume
from steadyhand.runtime.wire import MAX_MESSAGE_BYTES, dumps

PARSE_ERROR = -32700
#: The parse error's message for a line over the size limit (dropped unread).
TOO_LONG = (
    f"Parse error: a message may be at most {MAX_MESSAGE_BYTES:,} bytes; the line was dropped."
)
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class LineFramer(asyncio.Protocol):
    """Splits what arrives into lines and hands each non-empty one to ``on_line``."""

    def __init__(
        self,
        on_line: Callable[[bytes], None],
        on_close: Callable[[Exception | None], None],
        on_connect: Callable[[asyncio.BaseTransport], None] | None = None,
        on_too_long: Callable[[], None] | None = None,
        max_line: int = MAX_MESSAGE_BYTES,
    ) -> None:
        self._on_line = on_line
        self._on_close = on_close
        self._on_connect = on_connect
        #: called once for a line over ``max_line`` bytes, which is dropped unread (the
        #: lines after it are read as usual): memory never grows without bound
        self._on_too_long = on_too_long
        self._max_line = max_line
        self._skipping = False
        self._rest = bytearray()
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self._on_connect is not None:
            self._on_connect(transport)

    def data_received(self, data: bytes) -> None:
        rest = self._rest
        start = 0
        if self._skipping:  # the rest of a line too long to keep
            end = data.find(b"\n")
            if end < 0:
                return
            self._skipping = False
            data = data[end + 1 :]
        if rest:  # a line begun in an earlier chunk: copied once, when it is whole
            end = data.find(b"\n")
            if end < 0:
                if len(rest) + len(data) > self._max_line:
                    self._too_long()
                    return
                rest += data
                return
            rest += memoryview(data)[:end]
            line = bytes(rest)
            rest.clear()
            if line and line != b"\r":
                self._on_line(line)
            start = end + 1
        while not self.closed:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if end - start > self._max_line:
                if self._on_too_long is not None:
                    self._on_too_long()
            elif end > start:
                line = data[start:end]
                if line != b"\r":
                    self._on_line(line)
            start = end + 1
        if start < len(data) and not self.closed:
            if len(data) - start > self._max_line:
                self._too_long()
                return
            rest += data[start:]

    def _too_long(self) -> None:
        self._rest.clear()
        self._skipping = True
        if self._on_too_long is not None:
            self._on_too_long()

    def eof_received(self) -> bool | None:
        return None  # close the transport: the peer is done

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed:
            self.closed = True
            self._on_close(exc)


class FdWriter:
    """Writes whole lines to a file descriptor (stdout): blocking until written, also when
    the descriptor was made non-blocking (it may share its file with stdin)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken = False

    def write_line(self, line: bytes) -> None:
        """``line`` and a newline, without copying the line to join them."""
        if self.broken:
            return
        if not hasattr(os, "writev"):  # not a POSIX system
            self.write(line + b"\n")
            return
        try:
            n = os.writev(self.fd, (line, b"\n"))
        except BlockingIOError:
            n = 0
        except OSError:
            self.broken = True
            return
        if n < len(line) + 1:
            self.write((line + b"\n")[n:])

    def write(self, data: bytes) -> None:
        if self.broken:
            return
        view = memoryview(data)
        try:
            while view:
                try:
                    n = os.write(self.fd, view)
                except BlockingIOError:
                    select.select([], [self.fd], [])
                    continue
                view = view[n:]
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.broken = True


def encode(message: dict[str, Any]) -> bytes:
    data = dumps(message)
    if data is None:  # not plain JSON: a bug, but the peer must still get an answer
        data = dumps(error_message(message.get("id"), INTERNAL_ERROR, "unencodable result"))
        assert data is not None
    return data + b"\n"


def result_message(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_message(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def shape_problem(msg: Any) -> str | None:
    """What makes ``msg`` an invalid JSON-RPC 2.0 message (None if nothing)."""
    if not isinstance(msg, dict):
        return "a message must be one JSON object."
    if msg.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0".'
    msg_id = msg.get("id")
    if "id" in msg and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str)):
        return "`id` must be an integer or a string."
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return "`method` must be a string."
        if msg.get("params") is not None and not isinstance(msg["params"], dict | list):
            return "`params` must be an object or an array."
    elif "id" not in msg:
        return "a message needs a `method` or an `id`."
    return None


def start(
    coro: Coroutine[Any, Any, Any],
    done: Callable[[Any, BaseException | None], None],
) -> asyncio.Task[Any] | None:
    """Run ``coro`` at once; ``done(result, error)`` when it ends. If it has to wait, a
    task drives it on from there (returned, so that it can be cancelled)."""
    try:
        waiting_on = coro.send(None)
    except StopIteration as stop:
        done(stop.value, None)
        return None
    except BaseException as exc:  # handed to ``done``, which answers it
        done(None, exc)
        return None
    task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(Resume(coro, waiting_on))

    def finished(t: asyncio.Task[Any]) -> None:
        if t.cancelled():
            done(None, asyncio.CancelledError())
            return
        exc = t.exception()
        done(None, exc) if exc is not None else done(t.result(), None)

    task.add_done_callback(finished)
    return task


def close_quietly(transport: asyncio.BaseTransport | None) -> None:
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()
