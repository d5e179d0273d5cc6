"""A faster stdio transport for pygls: messages framed as they arrive from an asyncio pipe,
instead of a thread per read."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import stat
import sys
import threading
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol

from steadyhand.allocator import IdleTrim
from steadyhand.pygls_compat import send_message, set_stop_event
from steadyhand.wire import loads

log = logging.getLogger(__name__)


def _is_pipe_or_socket(stream: BinaryIO) -> bool:
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _reply_error(protocol: JsonRPCProtocol, msg_id: Any, code: int, message: str) -> None:
    error = {"code": code, "message": message}
    send_message(protocol, {"jsonrpc": "2.0", "id": msg_id, "error": error})


def _shape_problem(data: Any) -> tuple[str | None, Any]:
    """What makes ``data`` an invalid JSON-RPC message (None if nothing), and its id."""
    if not isinstance(data, dict):
        return "a message must be one JSON object (batches are not used by LSP).", None
    msg_id = data.get("id")
    if "id" in data and (isinstance(msg_id, bool) or not isinstance(msg_id, int | str)):
        return "`id` must be an integer or a string.", None
    if data.get("jsonrpc") != "2.0":
        return '`jsonrpc` must be "2.0".', msg_id
    if "method" in data:
        if not isinstance(data["method"], str):
            return "`method` must be a string.", msg_id
        if data.get("params") is not None and not isinstance(data["params"], dict | list):
            return "`params` must be an object or an array.", msg_id
    elif "id" not in data:
        return "a message needs a `method` or an `id`.", None
    return None, msg_id


def handle_body(protocol: JsonRPCProtocol, body: bytes) -> None:
    """Hand one message to pygls; answer what pygls would drop with a JSON-RPC error.

    A body that is not JSON (or not UTF-8, or nested too deep to parse) gets a Parse error,
    a message of the wrong shape an Invalid Request, a request whose params pygls cannot
    structure an Invalid Params error: a client never waits for an answer that will not come.
    """
    try:
        data = loads(body)
    except (ValueError, RecursionError):
        _reply_error(protocol, None, -32700, "Parse error: the message is not valid JSON.")
        return
    problem, msg_id = _shape_problem(data)
    if problem is not None:
        notification = isinstance(data, dict) and "method" in data and "id" not in data
        if not notification:  # notifications are never answered
            _reply_error(protocol, msg_id, -32600, f"Invalid Request: {problem}")
        return
    fast = getattr(protocol, "execute_fast", None)
    if fast is not None and fast(data):
        return
    try:
        protocol.handle_message(json.loads(body, object_hook=protocol.structure_message))
    except Exception as exc:
        log.exception("Unable to handle message")
        if msg_id is not None and "method" in data:
            code = exc.code if isinstance(exc, JsonRpcException) else -32603
            _reply_error(
                protocol, msg_id, code, f"{type(exc).__name__}: the request was not handled."
            )


class MessageFramer(asyncio.Protocol):
    """``Content-Length`` framing, any header order or case, straight from the pipe: each
    complete message is handled in the same turn of the event loop that read it (a stream
    reader would wake a waiting task first, one more turn per message)."""

    def __init__(
        self,
        protocol: JsonRPCProtocol,
        stop: threading.Event,
        done: asyncio.Future[None],
        idle: IdleTrim | None = None,
    ) -> None:
        self._protocol = protocol
        self._stop = stop
        self._done = done
        self._idle = idle
        self._rest = bytearray()  # bytes received but not yet handled
        self._length: int | None = None  # Content-Length seen in the current headers
        self._body: int | None = None  # length of the body being waited for

    def data_received(self, data: bytes) -> None:
        rest = self._rest
        if rest:
            rest += data
            if self._body is not None and len(rest) < self._body:
                return  # the body is still coming: nothing to copy yet
            if self._body is None and b"\n" not in data:
                return  # so is the header line
            data = bytes(rest)
            rest.clear()
        used = self._handle(data)
        if used < len(data) and not self._done.done():
            self._rest += data[used:]

    def _handle(self, data: bytes) -> int:
        """Handle each complete message in ``data``; how many bytes were used."""
        pos = 0
        while not self._stop.is_set():
            if self._body is None:  # in the headers: one line at a time
                end = data.find(b"\n", pos)
                if end < 0:
                    return pos
                line = data[pos : end + 1]
                pos = end + 1
                if not line.strip():
                    if self._length is not None:
                        self._body, self._length = self._length, None
                    continue
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    try:
                        length: int | None = int(value.strip())
                    except ValueError:
                        length = None
                    self._length = length if length is not None and length >= 0 else None
                continue
            end = pos + self._body
            if len(data) < end:
                return pos
            body = data[pos:end]
            pos = end
            self._body = None
            if self._idle is not None:
                self._idle.message()
            handle_body(self._protocol, body)
        self._finish()
        return pos

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)


#: Pipe capacity asked for on stdin and stdout (Linux; the default is 64 KiB).
PIPE_BYTES = 1 << 20


def widen_pipes(*streams: BinaryIO) -> None:
    """Let a whole answer (a read of 1,000 lines is about 75 KB) fit in the pipe at once,
    so that writing it never waits for the client to drain the first 64 KiB."""
    try:
        import fcntl
    except ImportError:  # not a POSIX system
        return
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is None:
        return
    for stream in streams:
        with contextlib.suppress(OSError, ValueError):
            fd = stream.fileno()
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                fcntl.fcntl(fd, set_size, PIPE_BYTES)


def serve_stdio(server: LanguageServer) -> None:
    """Serve LSP on stdin/stdout; falls back to pygls's own reader for regular files."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    widen_pipes(stdin, stdout)
    if not _is_pipe_or_socket(stdin):
        server.start_io(stdin, stdout)
        return

    async def main() -> None:
        loop = asyncio.get_running_loop()
        server.protocol.set_writer(StdoutWriter(stdout))
        stop = threading.Event()
        set_stop_event(server, stop)
        idle = IdleTrim()
        idle.start(loop)
        done: asyncio.Future[None] = loop.create_future()
        # Asked to stop (a client ending its session, a closed terminal): end the way a
        # closed stdin ends, so what waits to be written after an answer (the history
        # entry of the last change) is written first.
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, lambda: None if done.done() else done.set_result(None))
        pipe, _ = await loop.connect_read_pipe(
            lambda: MessageFramer(server.protocol, stop, done, idle), stdin
        )
        try:
            await done
        finally:
            pipe.close()
            idle.stop()

    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        flush = getattr(server, "flush_pending", None)
        if flush is not None:
            flush()
        server.shutdown()  # type: ignore[no-untyped-call]
