"""``file:`` URIs from the client (open documents, workspace folders, file events)."""

from __future__ import annotations

from urllib.parse import unquote, urlparse


def local_path(uri: str) -> str | None:
    """The local absolute path a ``file:`` URI names (percent-decoded, not resolved), or
    None for anything else: another scheme, another host (``file://server/share/…``; only
    an empty host or ``localhost`` is this machine), a network path, or a NUL byte. Such
    a URI names no file here, so it never stands for a local file."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    path = unquote(parsed.path)
    if not path.startswith("/") or path.startswith("//") or "\x00" in path:
        return None
    return path
