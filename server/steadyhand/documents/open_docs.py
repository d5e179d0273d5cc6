"""Documents the editor has open: their real paths, and waiting for their next change.

pygls keeps each open document's text and version (full sync, so its own line splitting
never applies a change to the wrong line). This index adds what Steadyhand needs on
top: which real path an open URI names, and a way to wait until the editor reports a
given text after an applied edit. One file may be open under several URIs (through a
symbolic link, say): it stays open until the last of them is closed, and the one opened
last is the buffer that counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from steadyhand.paths.uris import real_path


def uri_to_path(uri: str) -> str | None:
    """The real path of the local file ``uri`` names, in the one spelling its volume
    stores (None: not a local file): a file opened as ``Notes.md`` and as ``notes.md``
    on a volume that ignores case is one document."""
    return real_path(uri)


class OpenDocuments:
    def __init__(self) -> None:
        #: real path -> the URIs it is open under, the one opened last at the end
        self._uris_by_path: dict[str, list[str]] = {}
        #: URI -> the real path it named when it was opened
        self._path_by_uri: dict[str, str] = {}
        #: URI -> the language id the editor gave it (``python``, ``shellscript``...)
        self._language_by_uri: dict[str, str] = {}
        self._waiters: dict[str, list[tuple[Callable[[str], bool], asyncio.Future[None]]]] = {}

    def opened(self, uri: str, language_id: str | None = None) -> None:
        path = uri_to_path(uri)
        if path is None:
            return
        self.closed(uri)  # opened again: under the path it names now
        self._path_by_uri[uri] = path
        self._uris_by_path.setdefault(path, []).append(uri)
        if language_id:
            self._language_by_uri[uri] = language_id

    def closed(self, uri: str) -> str | None:
        """Forget ``uri``; the real path it named when opened (None: it was not open)."""
        path = self._path_by_uri.pop(uri, None)
        self._language_by_uri.pop(uri, None)
        if path is None:
            return None
        uris = self._uris_by_path.get(path, [])
        if uri in uris:
            uris.remove(uri)
        if not uris:
            self._uris_by_path.pop(path, None)
        return path

    def uri_for(self, path: str) -> str | None:
        uris = self._uris_by_path.get(path)
        return uris[-1] if uris else None

    def language_id(self, path: str) -> str | None:
        """The language id of the buffer that counts for ``path`` (None: not open, or
        opened without one)."""
        uri = self.uri_for(path)
        return self._language_by_uri.get(uri) if uri is not None else None

    def paths(self) -> list[str]:
        return list(self._uris_by_path)

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
