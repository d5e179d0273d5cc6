"""A bare pygls 2 language server with one trivial command, for reference.

It measures what pygls itself costs: ``--transport stock`` is pygls's own stdio loop
(a thread-pool read per line), ``--transport pipe`` reads stdin through an asyncio pipe
reader (the same approach as Steadyhand's transport), and ``--transport protocol``
parses frames in an ``asyncio.Protocol`` callback and writes with ``os.write`` (the
leanest transport found on top of pygls's JSON-RPC protocol object).

Run: ``python bench/bare_pygls.py --transport pipe``; command ``bench.ping``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import sys
import threading
from typing import Any

from lsprotocol import types
from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer


def make_server() -> LanguageServer:
    ls = LanguageServer(
        "bare-pygls", "1.0", text_document_sync_kind=types.TextDocumentSyncKind.Full
    )

    @ls.command("bench.ping")
    async def ping(ls: LanguageServer, *args: Any) -> dict[str, Any]:
        return {"ok": True, "message": "pong"}

    return ls


class _PipeReader:
    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def readline(self) -> bytes:
        return await self._reader.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self._reader.readexactly(n)
        except asyncio.IncompleteReadError as exc:
            return exc.partial


def serve_pipe(ls: LanguageServer) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 30, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        ls.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        stop = threading.Event()
        ls._stop_event = stop
        await run_async(stop_event=stop, reader=_PipeReader(reader), protocol=ls.protocol)

    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt, SystemExit):
        asyncio.run(main())


class _FdWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd

    def close(self) -> None:
        os.close(self._fd)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]


class _FrameProtocol(asyncio.Protocol):
    def __init__(self, ls: LanguageServer, done: asyncio.Future[None]) -> None:
        self._ls = ls
        self._buf = bytearray()
        self._done = done

    def data_received(self, data: bytes) -> None:
        import json

        buf = self._buf
        buf += data
        proto = self._ls.protocol
        while True:
            i = buf.find(b"\r\n\r\n")
            if i < 0:
                return
            length = -1
            for header in bytes(buf[:i]).split(b"\r\n"):
                name, _, value = header.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            end = i + 4 + length
            if len(buf) < end:
                return
            body = bytes(buf[i + 4 : end])
            del buf[:end]
            proto.handle_message(json.loads(body, object_hook=proto.structure_message))

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._done.done():
            self._done.set_result(None)


def serve_protocol(ls: LanguageServer) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        ls.protocol.set_writer(_FdWriter(sys.stdout.fileno()))
        await loop.connect_read_pipe(lambda: _FrameProtocol(ls, done), sys.stdin)
        await done

    with contextlib.suppress(BrokenPipeError, KeyboardInterrupt, SystemExit):
        asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--transport", choices=["stock", "pipe", "protocol"], default="stock")
    args = ap.parse_args()
    ls = make_server()
    if args.transport == "stock":
        ls.start_io()
    elif args.transport == "pipe":
        serve_pipe(ls)
    else:
        serve_protocol(ls)


if __name__ == "__main__":
    main()
