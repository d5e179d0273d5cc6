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
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from lsprotocol.types import EXIT
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol

from steadyhand.lsp.framing import FrameError, FrameParser
from steadyhand.lsp.pygls_compat import fail_request, is_shut_down, send_message, set_stop_event
from steadyhand.protocol.answers import MalformedAnswer
from steadyhand.runtime.allocator import IdleTrim
from steadyhand.runtime.pipes import widen_pipes
from steadyhand.runtime.wire import loads

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
        if msg_id is not None and isinstance(data, dict) and "method" not in data:
            # the client's answer to a request of ours, in a shape that cannot be read
            fail_request(protocol, msg_id, MalformedAnswer(f"the answer is malformed: {problem}"))
        return
    if "method" in data and data["method"] != EXIT and is_shut_down(protocol):
        # After `shutdown` only `exit` is taken: a request fails at once (LSP says
        # InvalidRequest), a notification is dropped.
        if "id" in data:
            _reply_error(
                protocol,
                msg_id,
                -32600,
                "Invalid Request: the server is shutting down (`shutdown` was received), "
                "so it takes no more requests; send `exit`.",
            )
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
        elif msg_id is not None:
            # An answer to a request of ours that pygls cannot take (an error object of
            # the wrong shape, no result): the request fails now rather than never.
            fail_request(protocol, msg_id, MalformedAnswer(f"the answer is malformed ({exc})"))


def frame_error(protocol: JsonRPCProtocol, error: FrameError) -> None:
    """Answer a frame that could not be read: a Parse error with a null id (its id cannot
    be known), and a log line."""
    log.warning("unreadable frame from the client (%s); skipped to the next", error.reason)
    _reply_error(
        protocol,
        None,
        -32700,
        f"Parse error: unreadable frame ({error.reason}); it was skipped, and reading "
        "goes on at the next `Content-Length` header.",
    )


class MessageFramer(asyncio.Protocol):
    """``Content-Length`` framing (:class:`steadyhand.lsp.framing.FrameParser`) straight from
    the pipe or socket: each complete message is handled in the same turn of the event
    loop that read it (a stream reader would wake a waiting task first, one more turn per
    message). A frame whose header cannot be read is answered with a Parse error (null
    id), logged, and the stream picks up at the next frame."""

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
        self._parser = FrameParser()
        #: Called with the transport once connected (a socket: answers go back on it).
        self.on_connect: Callable[[asyncio.BaseTransport], None] | None = None

    def data_received(self, data: bytes) -> None:
        if self._done.done():
            return
        for item in self._parser.feed(data):
            if self._stop.is_set():
                break
            if isinstance(item, FrameError):
                frame_error(self._protocol, item)
                continue
            if self._idle is not None:
                self._idle.message()
            handle_body(self._protocol, item)
            if self._stop.is_set():
                break
        if self._stop.is_set():
            self._finish()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if self.on_connect is not None:
            self.on_connect(transport)

    @property
    def finished(self) -> bool:
        return self._done.done()

    def connection_lost(self, exc: Exception | None) -> None:
        self._finish()

    def _finish(self) -> None:
        if not self._done.done():
            self._done.set_result(None)


#: Bytes read at a time from a stdin that is a regular file.
FILE_CHUNK = 1 << 20

#: Opens the input: given the event loop and a maker of framers, it starts feeding one
#: and returns what closes the input.
Opener = Callable[
    [asyncio.AbstractEventLoop, Callable[[], MessageFramer]], Awaitable[Callable[[], None]]
]


def serve_stdio(server: LanguageServer) -> None:
    """Serve LSP on stdin/stdout. A stdin that is a pipe, socket or terminal is read as it
    arrives; one that is a regular file (a recorded session replayed) is read in chunks,
    through the same framing."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    widen_pipes(stdin, stdout)
    server.protocol.set_writer(StdoutWriter(stdout))

    async def open_pipe(
        loop: asyncio.AbstractEventLoop, make: Callable[[], MessageFramer]
    ) -> Callable[[], None]:
        pipe, _ = await loop.connect_read_pipe(make, stdin)
        return pipe.close

    async def open_file(
        loop: asyncio.AbstractEventLoop, make: Callable[[], MessageFramer]
    ) -> Callable[[], None]:
        framer = make()

        async def pump() -> None:
            fd = stdin.fileno()
            while not framer.finished:
                data = os.read(fd, FILE_CHUNK)  # a regular file: a read never waits long
                if not data:
                    break
                framer.data_received(data)
                await asyncio.sleep(0)  # what the messages started runs in between
            framer.connection_lost(None)

        task = loop.create_task(pump())

        def close() -> None:
            task.cancel()

        return close

    _serve(server, open_pipe if _is_pipe_or_socket(stdin) else open_file)


def serve_tcp(server: LanguageServer, host: str, port: int) -> None:
    """Serve LSP to one client over TCP: the first connection is served, with the same
    framing as stdio; the server ends when it closes."""

    async def open_socket(
        loop: asyncio.AbstractEventLoop, make: Callable[[], MessageFramer]
    ) -> Callable[[], None]:
        taken = False
        listener: asyncio.Server | None = None

        def connected(transport: asyncio.BaseTransport) -> None:
            server.protocol.set_writer(transport)  # type: ignore[arg-type]
            if listener is not None:
                # One client per process: no more connections are taken. (Not from the
                # protocol factory: a server closed there cannot attach the transport.)
                loop.call_soon(listener.close)

        def accept() -> asyncio.Protocol:
            nonlocal taken
            if taken:
                return _Refuse()
            taken = True
            framer = make()
            framer.on_connect = connected
            return framer

        listener = await loop.create_server(accept, host, port)
        addresses = ", ".join(str(sock.getsockname()) for sock in listener.sockets)
        log.info("serving on %s", addresses)
        return listener.close

    _serve(server, open_socket)


class _Refuse(asyncio.Protocol):
    """A connection after the first: closed at once."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        transport.close()


def _serve(server: LanguageServer, open_input: Opener) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
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
        close = await open_input(loop, lambda: MessageFramer(server.protocol, stop, done, idle))
        try:
            await done
        finally:
            close()
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
