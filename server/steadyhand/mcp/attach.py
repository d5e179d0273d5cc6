"""The client side of the socket: ``steadyhand mcp`` attached to a running ``steadyhand
serve`` (see ``rendezvous.py``).

A ``tools/call`` line from the host is sent on unchanged over one persistent connection,
and the server's answer, which carries the host's own request id, goes back to the host
unchanged: no parsing or re-encoding on the way back, no handshake per call.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any

from steadyhand.mcp import protocol as rpc
from steadyhand.mcp.rendezvous import Descriptor, available, find
from steadyhand.runtime.wire import loads

log = logging.getLogger(__name__)

#: How every answer the server writes starts (``protocol.result_message`` and
#: ``error_message`` put the keys in this order).
_PREFIX = b'{"jsonrpc":"2.0","id":'


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
        on_lost: Callable[[dict[Any, dict[str, Any]]], None],
    ) -> None:
        self.descriptor = descriptor
        self._on_answer = on_answer
        self._on_lost = on_lost
        self.transport: asyncio.Transport | None = None
        #: Requests sent and not answered yet: id -> the host's message.
        self.pending: dict[Any, dict[str, Any]] = {}
        self._hello: asyncio.Future[Any] | None = None
        self._hello_id = "steadyhand-hello"
        self.lost = False

    async def connect(self, session: str, client: str, timeout: float = 5.0) -> bool:
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await asyncio.wait_for(
                loop.create_unix_connection(
                    lambda: rpc.LineFramer(self._line, self._closed), self.descriptor.socket
                ),
                timeout,
            )
        except (OSError, TimeoutError) as exc:
            log.info("cannot attach to server %d: %s", self.descriptor.pid, exc)
            return False
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        return await self.hello(session, client, timeout)

    async def hello(self, session: str, client: str, timeout: float = 5.0) -> bool:
        """Name this connection's session and its host to the server (again, to rename)."""
        self._hello = asyncio.get_running_loop().create_future()
        msg = {"jsonrpc": "2.0", "id": self._hello_id, "method": "hello"}
        msg["params"] = {"session": session, "client": client}  # type: ignore[assignment]
        self._write(rpc.encode(msg))
        try:
            info = await asyncio.wait_for(self._hello, timeout)
        except (TimeoutError, ConnectionError) as exc:
            log.info("server %d did not answer: %s", self.descriptor.pid, exc)
            self.close()
            return False
        return isinstance(info, dict)

    def _write(self, data: bytes) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def forward(self, msg: dict[str, Any], line: bytes) -> None:
        """Send the host's request ``line`` (``msg`` parsed) to the server."""
        self.pending[msg.get("id")] = msg
        self._write(line + b"\n")

    def cancel(self, line: bytes, request_id: Any) -> None:
        """Pass the host's cancellation on; the cancelled request gets no answer."""
        if self.pending.pop(request_id, None) is not None:
            self._write(line + b"\n")

    def _line(self, line: bytes) -> None:
        msg_id = answer_id(line)
        if msg_id == self._hello_id and self._hello is not None:
            if not self._hello.done():
                msg = loads(line)
                self._hello.set_result(msg.get("result") if isinstance(msg, dict) else None)
            return
        if self.pending.pop(msg_id, None) is not None:
            self._on_answer(line)

    def _closed(self, exc: Exception | None) -> None:
        self.lost = True
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(ConnectionError("the server closed the connection"))
        pending, self.pending = self.pending, {}
        log.warning("the editor's Steadyhand server (pid %d) went away", self.descriptor.pid)
        self._on_lost(pending)

    def close(self) -> None:
        rpc.close_quietly(self.transport)


async def attach(
    where: str,
    session: str,
    client: str,
    on_answer: Callable[[bytes], None],
    on_lost: Callable[[dict[Any, dict[str, Any]]], None],
) -> Attachment | None:
    """A connection to the server whose roots hold ``where``, or None."""
    if not available():
        return None
    for descriptor in find(where):
        if descriptor.pid == os.getpid():
            continue
        conn = Attachment(descriptor, on_answer, on_lost)
        if await conn.connect(session, client):
            log.info("attached to server %d (%s)", descriptor.pid, descriptor.editor or "editor")
            return conn
    return None
