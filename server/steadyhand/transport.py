"""A faster stdio transport for pygls: an asyncio pipe reader instead of a thread per read."""

from __future__ import annotations

import asyncio
import logging
import stat
import sys
import threading
from typing import BinaryIO

from pygls.io_ import StdoutWriter, run_async
from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)


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


def _is_pipe_or_socket(stream: BinaryIO) -> bool:
    try:
        mode = __import__("os").fstat(stream.fileno()).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def serve_stdio(server: LanguageServer) -> None:
    """Serve LSP on stdin/stdout; falls back to pygls's own reader for regular files."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    if not _is_pipe_or_socket(stdin):
        server.start_io(stdin, stdout)
        return

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 30, loop=loop)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        server.protocol.set_writer(StdoutWriter(stdout))
        stop = threading.Event()
        server._stop_event = stop
        await run_async(
            stop_event=stop,
            reader=_PipeReader(reader),
            protocol=server.protocol,
            logger=log,
            error_handler=server.report_server_error,
        )

    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("the client closed the connection")
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
