"""``file:`` URIs from the client (open documents, workspace folders, file events)."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from steadyhand.paths import windows
from steadyhand.paths.spelling import canonical
from steadyhand.system import WINDOWS_PATHS


def local_path(uri: str, *, windows_rules: bool = WINDOWS_PATHS) -> str | None:
    """The local absolute path a ``file:`` URI names (percent-decoded, not resolved), or
    None for anything else: another scheme, another host (``file://server/share/…``; only
    an empty host or ``localhost`` is this machine), a network path, or a NUL byte. Such
    a URI names no file here, so it never stands for a local file.

    On Windows (``windows_rules``): ``file:///c%3A/x`` is ``C:\\x``, and a host names a
    UNC share (``file://server/share/x`` is ``\\\\server\\share\\x``), which is a path
    of this machine there (:func:`steadyhand.paths.windows.uri_to_path`)."""
    if windows_rules:
        return windows.uri_to_path(uri)
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    if not path.startswith("/") or path.startswith("//") or "\x00" in path:
        return None
    return path


def real_path(uri: str) -> str | None:
    """The real path of the local file ``uri`` names, spelled as its volume stores it
    (:func:`steadyhand.paths.spelling.canonical`): a key that is the same for every
    spelling of one file. None: not a local file."""
    path = local_path(uri)
    if path is None:
        return None
    return canonical(os.path.realpath(path))
