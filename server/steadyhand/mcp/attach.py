"""The client side of the socket: ``steadyhand mcp`` attached to a running ``steadyhand
serve`` (see ``rendezvous.py``).

A ``tools/call`` line from the host is sent on over one persistent connection (unchanged,
unless a relative path in it had to be made absolute against this side's root), and the
server's answer, which carries the host's own request id, goes back to the host unchanged:
no parsing or re-encoding on the way back, no handshake per call.

Only a server of this same user is used: its descriptor and socket must be this user's
and private, and the kernel must say the process at the other end runs as this user
before anything is sent (``system/local_socket.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from steadyhand.mcp import jsonrpc as rpc
from steadyhand.mcp.rendezvous import HELLO, Descriptor, available, find
from steadyhand.runtime.wire import loads
from steadyhand.system import local_socket, runtime_dir

log = logging.getLogger(__name__)

#: How every answer the server writes starts (``protocol.result_message`` and
#: ``error_message`` put the keys in this order).
_PREFIX = b'{"jsonrpc":"2.0","id":'
#: How a notification from the server starts (the ``hello`` that answers ours).
_NOTIFICATION = b'{"jsonrpc":"2.0","method":'


def answer_id(line: bytes) -> Any:
    """The id of an answer line, read from its start (parsed whole only if it must be)."""
    if line.startswith(_PREFIX):
        at = len(_PREFIX)
        if line[at : at + 1] == b'"':
            text = line.decode("utf-8", "surrogateescape")
            value, _ = scanstring(text, at + 1)
            return value
        end = line.find(b",", at)
        if end > at:
            token = line[at:end]
            if token.lstrip(b"-").isdigit():
                return int(token)
            if token == b"null":
                return None
    try:
        msg = loads(line)
    except (ValueError, RecursionError):
        return None
    return msg.get("id") if isinstance(msg, dict) else None


class Attachment:
    """One connection to an editor's server."""

    def __init__(
        self,
        descriptor: Descriptor,
        on_answer: Callable[[bytes], None],
        on_lost: Callable[[Attachment, dict[Any, dict[str, Any]]], None],
        on_write_full: Callable[[bool], None] | None = None,
    ) -> None:
        self.descriptor = descriptor
        self._on_answer = on_answer
        self._on_lost = on_lost
        self._on_write_full = on_write_full
        self.framer = rpc.LineFramer(self._line, self._closed, on_write_full=self._write_full)
        self.transport: asyncio.Transport | None = None
        #: Requests sent and not answered yet: id -> the host's message.
        self.pending: dict[Any, dict[str, Any]] = {}
        self._hello: asyncio.Future[Any] | None = None
        self.lost = False
        #: closed on purpose (the session ended, or another server took over): no warning
        self.closing = False
        self._when_idle: Callable[[], None] | None = None
        self._idle: asyncio.Future[None] | None = None

    async def connect(self, session: str, client: str, timeout: float = 5.0) -> bool:
        where = self.descriptor.socket
        if not runtime_dir.socket_is_private(where):
            return False
        try:
            self.transport = await local_socket.connect(where, lambda: self.framer, timeout)
        except PermissionError as exc:
            log.warning("not attaching to server %d: %s", self.descriptor.pid, exc)
            return False
        except (OSError, TimeoutError) as exc:
            log.info("cannot attach to server %d: %s", self.descriptor.pid, exc)
            return False
        return await self.hello(session, client, timeout)

    async def hello(self, session: str, client: str, timeout: float = 5.0) -> bool:
        """Name this connection's session and its host to the server (again, to rename)."""
        self._hello = asyncio.get_running_loop().create_future()
        params = {"session": session, "client": client}
        self._write(rpc.encode({"jsonrpc": "2.0", "method": HELLO, "params": params}))
        try:
            info = await asyncio.wait_for(self._hello, timeout)
        except (TimeoutError, ConnectionError) as exc:
            log.info("server %d did not answer: %s", self.descriptor.pid, exc)
            self.close()
            return False
        return isinstance(info, dict)

    def rename(self, session: str, client: str) -> None:
        """Tell the server this connection's session and host again (no answer awaited)."""
        params = {"session": session, "client": client}
        self._write(rpc.encode({"jsonrpc": "2.0", "method": HELLO, "params": params}))

    def when_idle(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once no request waits for its answer here."""
        self._when_idle = callback
        if not self.pending:
            self._went_idle()

    async def idle(self, timeout: float) -> None:
        """Wait until no request waits for its answer (or ``timeout`` seconds)."""
        if not self.pending or self.lost:
            return
        self._idle = asyncio.get_running_loop().create_future()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._idle), timeout)

    def _went_idle(self) -> None:
        if self._idle is not None and not self._idle.done():
            self._idle.set_result(None)
        callback, self._when_idle = self._when_idle, None
        if callback is not None:
            callback()

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def _write_full(self, full: bool) -> None:
        if self._on_write_full is not None:
            self._on_write_full(full)

    def forward(self, msg: dict[str, Any], line: bytes) -> None:
        """Send the host's request ``line`` (``msg`` parsed) to the server."""
        self.pending[msg.get("id")] = msg
        self._write(line + b"\n")

    def cancel(self, line: bytes, request_id: Any) -> bool:
        """Pass the host's cancellation on; the cancelled request gets no answer. False
        when no such request is waiting here."""
        if self.pending.pop(request_id, None) is None:
            return False
        self._write(line + b"\n")
        if not self.pending:
            self._went_idle()
        return True

    def _line(self, line: bytes) -> None:
        if line.startswith(_NOTIFICATION):
            try:
                msg = loads(line)
            except (ValueError, RecursionError):
                return
            waiting = self._hello
            hello = isinstance(msg, dict) and msg.get("method") == HELLO
            if hello and waiting is not None and not waiting.done():
                waiting.set_result(msg.get("params"))
            return
        msg_id = answer_id(line)
        if self.pending.pop(msg_id, None) is not None:
            self._on_answer(line)
            if not self.pending:
                self._went_idle()

    def _closed(self, exc: Exception | None) -> None:
        self.lost = True
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(ConnectionError("the server closed the connection"))
        if self.closing:
            if self._idle is not None and not self._idle.done():
                self._idle.set_result(None)
            return
        pending, self.pending = self.pending, {}
        log.warning("the editor's Steadyhand server (pid %d) went away", self.descriptor.pid)
        self._on_lost(self, pending)
        self._went_idle()

    def close(self) -> None:
        self.closing = True
        rpc.close_quietly(self.transport)


async def attach(
    where: str,
    session: str,
    client: str,
    on_answer: Callable[[bytes], None],
    on_lost: Callable[[Attachment, dict[Any, dict[str, Any]]], None],
    on_write_full: Callable[[bool], None] | None = None,
) -> Attachment | None:
    """A connection to the server whose roots hold ``where``, or None."""
    if not available():
        return None
    for descriptor in find(where):
        if descriptor.pid == os.getpid():
            continue
        conn = Attachment(descriptor, on_answer, on_lost, on_write_full)
        if await conn.connect(session, client):
            log.info("attached to server %d (%s)", descriptor.pid, descriptor.editor or "editor")
            return conn
    return None
