"""Documents the editor has open: their real paths, and waiting for their next change.

pygls keeps each open document's text and version (full sync, so its own line splitting
never applies a change to the wrong line). This index adds what Steadyhand needs on
top: which real path an open URI names, and a way to wait until the editor reports a
given text after an applied edit.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from urllib.parse import unquote, urlparse


def uri_to_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return os.path.realpath(unquote(parsed.path))


class OpenDocuments:
    def __init__(self) -> None:
        self._uri_by_path: dict[str, str] = {}
        self._waiters: dict[str, list[tuple[Callable[[str], bool], asyncio.Future[None]]]] = {}

    def opened(self, uri: str) -> None:
        path = uri_to_path(uri)
        if path is not None:
            self._uri_by_path[path] = uri

    def closed(self, uri: str) -> None:
        path = uri_to_path(uri)
        if path is not None and self._uri_by_path.get(path) == uri:
            del self._uri_by_path[path]

    def uri_for(self, path: str) -> str | None:
        return self._uri_by_path.get(path)

    def paths(self) -> list[str]:
        return list(self._uri_by_path)

    def changed(self, uri: str, text: str) -> None:
        """Called on every didChange/didOpen: wakes whoever waits for this text."""
        waiters = self._waiters.get(uri)
        if not waiters:
            return
        keep = []
        for pred, fut in waiters:
            if fut.done():
                continue
            if pred(text):
                fut.set_result(None)
            else:
                keep.append((pred, fut))
        if keep:
            self._waiters[uri] = keep
        else:
            self._waiters.pop(uri, None)

    async def wait_for(self, uri: str, pred: Callable[[str], bool], timeout: float) -> bool:
        """Wait until the document's text satisfies ``pred``; False on timeout."""
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(uri, []).append((pred, fut))
        try:
            await asyncio.wait_for(fut, timeout)
            return True
        except TimeoutError:
            return False
