"""Newline-delimited JSON-RPC 2.0 on asyncio: the framing MCP's stdio transport uses, and
the socket an MCP server attaches through.

Each complete line is handed on in the callback that read it (no reader task, no queue),
answers are written at once, and a handler that never waits is answered within the same
turn of the event loop (:func:`start`). Nothing here knows MCP's methods.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import select
import threading
from collections.abc import Callable, Coroutine
from typing import Any

from steadyhand.runtime.tasks import run_now
from steadyhand.runtime.wire import MAX_MESSAGE_BYTES, dumps
from steadyhand.system import stdio

PARSE_ERROR = -32700
#: The parse error's message for a line over the size limit (dropped unread).
TOO_LONG = (
    f"Parse error: a message may be at most {MAX_MESSAGE_BYTES:,} bytes; the line was dropped."
)
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

#: Bytes of answers waiting to be written before no new request is taken, and the level
#: they must drain to before requests are taken again.
OUT_HIGH_WATER = 1 << 20
OUT_LOW_WATER = 256 << 10

#: Calls running at once for one peer before no new request is taken from it.
MAX_IN_FLIGHT = 64


class LineFramer(asyncio.Protocol):
    """Splits what arrives into lines and hands each non-empty one to ``on_line``.

    While the framer is held (:meth:`hold`: the answers cannot be written as fast as the
    requests come, too many calls are running) it hands on no more lines: the rest of
    what arrived waits, and the transport stops reading, so the peer's writes wait in the
    kernel. What is held is one chunk at most, whatever the peer sends.
    """

    def __init__(
        self,
        on_line: Callable[[bytes], None],
        on_close: Callable[[Exception | None], None],
        on_connect: Callable[[asyncio.BaseTransport], None] | None = None,
        on_too_long: Callable[[], None] | None = None,
        max_line: int = MAX_MESSAGE_BYTES,
        on_write_full: Callable[[bool], None] | None = None,
    ) -> None:
        self._on_line = on_line
        self._on_close = on_close
        self._on_connect = on_connect
        #: called once for a line over ``max_line`` bytes, which is dropped unread (the
        #: lines after it are read as usual): memory never grows without bound
        self._on_too_long = on_too_long
        #: told when the transport's write buffer goes over its high-water mark (True)
        #: and when it has drained below its low one (False)
        self._on_write_full = on_write_full
        self._max_line = max_line
        self._skipping = False
        self._rest = bytearray()
        self.closed = False
        self.transport: asyncio.BaseTransport | None = None
        #: why no more lines are handed on (empty: they are)
        self._holds: set[str] = set()
        #: chunks read and not split yet (only while held)
        self._stash: collections.deque[bytes] = collections.deque()
        self._pumping = False
        #: set while lines are taken: a reader thread waits on it (stdin read on a thread)
        self.taking = threading.Event()
        self.taking.set()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        if self._on_connect is not None:
            self._on_connect(transport)

    # -- holding --------------------------------------------------------------------------

    @property
    def held(self) -> bool:
        return bool(self._holds)

    def hold(self, why: str) -> None:
        """Hand on no more lines, and read no more, until :meth:`release` of ``why``."""
        if why in self._holds:
            return
        self._holds.add(why)
        if len(self._holds) == 1:
            self.taking.clear()
            reading = self.transport
            if isinstance(reading, asyncio.ReadTransport) and not self.closed:
                with contextlib.suppress(Exception):
                    reading.pause_reading()

    def release(self, why: str) -> None:
        if why not in self._holds:
            return
        self._holds.discard(why)
        if self._holds:
            return
        self._pump()
        if not self._holds:
            self.taking.set()
            reading = self.transport
            if isinstance(reading, asyncio.ReadTransport) and not self.closed:
                with contextlib.suppress(Exception):
                    reading.resume_reading()

    def pause_writing(self) -> None:
        if self._on_write_full is not None:
            self._on_write_full(True)

    def resume_writing(self) -> None:
        if self._on_write_full is not None:
            self._on_write_full(False)

    # -- reading --------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        self._stash.append(data)
        self._pump()

    def _pump(self) -> None:
        if self._pumping:
            return  # released from inside a line's handler: the running loop goes on
        self._pumping = True
        try:
            while self._stash and not self._holds and not self.closed:
                self._split(self._stash.popleft())
        finally:
            self._pumping = False

    def _split(self, data: bytes) -> None:
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
            if self._holds:  # the rest waits for the release
                if start < len(data):
                    self._stash.appendleft(data[start:])
                return
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
            self._stash.clear()
            self.taking.set()
            self._on_close(exc)


class OutWriter:
    """Writes whole lines to a file descriptor (stdout) without ever blocking the event
    loop: what the descriptor does not take at once waits in a queue and is written as the
    reader drains it. Past ``high`` bytes waiting, ``on_full(True)`` is called (the caller
    stops taking work that makes answers), and ``on_full(False)`` once below ``low``.

    A descriptor that is not a pipe or socket (a regular file, a terminal), or any on
    Windows, whose pipes cannot be waited on by the loop, is written in place instead,
    blocking until written: memory stays bounded either way.
    """

    def __init__(
        self,
        fd: int,
        *,
        high: int = OUT_HIGH_WATER,
        low: int = OUT_LOW_WATER,
        on_full: Callable[[bool], None] | None = None,
    ) -> None:
        self.fd = fd
        self.broken = False
        self.high = high
        self.low = low
        self.on_full = on_full
        self._queue: collections.deque[memoryview] = collections.deque()
        #: bytes waiting in the queue
        self.waiting = 0
        self.full = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._was_blocking: bool | None = None
        self._drained: asyncio.Future[None] | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Write without blocking from now on, when the descriptor allows it."""
        self._was_blocking = stdio.make_nonblocking(self.fd)
        if self._was_blocking is not None:
            self._loop = loop

    def write_line(self, line: bytes) -> None:
        """``line`` and a newline, without copying the line to join them."""
        if self.broken:
            return
        if self._queue or not hasattr(os, "writev"):
            self.write(line + b"\n")
            return
        try:
            n = os.writev(self.fd, (line, b"\n"))
        except BlockingIOError:
            n = 0
        except OSError:
            self._broke()
            return
        if n < len(line) + 1:
            self.write((line + b"\n")[n:])

    def write(self, data: bytes) -> None:
        if self.broken or not data:
            return
        view = memoryview(data)
        if not self._queue:
            try:
                n = os.write(self.fd, view)
            except BlockingIOError:
                n = 0
            except OSError:
                self._broke()
                return
            view = view[n:]
            if not view:
                return
        if self._loop is None:  # a descriptor written in place: wait until it takes all
            self._write_blocking(view)
            return
        if not self._queue:
            self._loop.add_writer(self.fd, self._drain)
        self._queue.append(view)
        self.waiting += len(view)
        if not self.full and self.waiting > self.high:
            self.full = True
            if self.on_full is not None:
                self.on_full(True)

    def _write_blocking(self, view: memoryview) -> None:
        try:
            while view:
                try:
                    n = os.write(self.fd, view)
                except BlockingIOError:
                    select.select([], [self.fd], [])
                    continue
                view = view[n:]
        except OSError:
            self._broke()

    def _drain(self) -> None:
        while self._queue:
            head = self._queue[0]
            try:
                n = os.write(self.fd, head)
            except BlockingIOError:
                return
            except OSError:
                self._broke()
                return
            self.waiting -= n
            if n < len(head):
                self._queue[0] = head[n:]
                return
            self._queue.popleft()
        self._stop_waiting()
        if self.full and self.waiting <= self.low:
            self.full = False
            if self.on_full is not None:
                self.on_full(False)

    def _stop_waiting(self) -> None:
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_writer(self.fd)
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        if self.full and not self._queue:
            self.full = False
            if self.on_full is not None:
                self.on_full(False)

    def _broke(self) -> None:
        self.broken = True
        self._queue.clear()
        self.waiting = 0
        self._stop_waiting()

    async def flush(self, timeout: float) -> None:
        """Wait until everything queued is written (or ``timeout`` seconds)."""
        if not self._queue or self._loop is None:
            return
        self._drained = self._loop.create_future()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._drained), timeout)

    def close(self) -> None:
        """Stop writing; the descriptor is left as blocking as it was found."""
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_writer(self.fd)
            stdio.restore_blocking(self.fd, self._was_blocking)
            self._loop = None


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
    """Run ``coro`` at once (:func:`~steadyhand.runtime.tasks.run_now`); ``done(result,
    error)`` when it ends. If it has to wait, a task drives it on from there (returned,
    so that it can be cancelled)."""

    def finished(outcome: asyncio.Future[Any]) -> None:
        if outcome.cancelled():
            done(None, asyncio.CancelledError())
            return
        exc = outcome.exception()
        done(None, exc) if exc is not None else done(outcome.result(), None)

    return run_now(coro, finished)


def close_quietly(transport: asyncio.BaseTransport | None) -> None:
    if transport is not None:
        with contextlib.suppress(Exception):
            transport.close()
