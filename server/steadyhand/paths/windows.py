"""Windows path rules, as pure functions (``ntpath`` semantics, testable on any system).

What a model or an editor may send on Windows, and what each form means:

- drive letters in either case (``c:\\x`` and ``C:\\x`` are one path): :func:`normalize`
  gives the drive letter in upper case, backslashes, no ``.`` or ``..``;
- ``\\\\?\\C:\\...`` (a long path) is ``C:\\...``; ``\\\\?\\UNC\\server\\share\\...`` is
  ``\\\\server\\share\\...`` (a UNC path, allowed like any path when it lies inside a
  workspace folder on that share); ``\\\\.\\...`` and ``\\\\?\\GLOBALROOT`` name devices
  and are refused;
- ``file:///c%3A/Users/...`` (as VS Code writes it) and ``file://server/share/...``
  (a UNC path) are read by :func:`uri_to_path`;
- refused outright (:func:`refusal`): an NTFS alternate data stream (``a.txt:secret``,
  ``a.txt::$DATA``), a DOS device name (``CON``, ``NUL``, ``COM1``, also with an
  extension: ``nul.txt``), a name ending in a dot or a space (Windows drops them, so
  ``secrets.env.`` would open ``secrets.env`` while being judged as another name), and
  the characters Windows never allows in a name;
- an 8.3 short name (``SECRET~1.ENV``) stands for a long name; :func:`looks_short` tells
  one, and the path is judged by the long name the file system reports.
"""

from __future__ import annotations

import ntpath
import re
from urllib.parse import unquote, urlparse

#: Device names Windows reserves in every folder, with any extension.
DEVICE_NAMES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"}
    | {f"COM{c}" for c in "123456789¹²³"}
    | {f"LPT{c}" for c in "123456789¹²³"}
)
#: Characters no Windows file name may hold (besides the separators and control codes).
_FORBIDDEN = frozenset('<>"|?*')
_SHORT = re.compile(r"\A[^.~\s]{1,6}~[0-9][0-9]{0,5}(\.[^.\s]{1,3})?\Z")
_DRIVE = re.compile(r"\A[A-Za-z]:")


def is_absolute(path: str) -> bool:
    """Whether ``path`` is absolute on Windows: a drive and a root (``C:\\x``), or UNC."""
    path = path.replace("/", "\\")
    if path.startswith("\\\\"):
        return True
    drive, rest = ntpath.splitdrive(path)
    return bool(drive) and rest.startswith("\\")


def strip_verbatim(path: str) -> str:
    """``path`` without the ``\\\\?\\`` prefix of a long path: ``\\\\?\\C:\\x`` is
    ``C:\\x`` and ``\\\\?\\UNC\\s\\sh\\x`` is ``\\\\s\\sh\\x`` (anything else as given)."""
    p = path.replace("/", "\\")
    if p[:8].upper() == "\\\\?\\UNC\\":
        return "\\\\" + p[8:]
    if p.startswith("\\\\?\\") and _DRIVE.match(p[4:]):
        return p[4:]
    return path


def device_namespace(path: str) -> bool:
    """Whether ``path`` names the device namespace (``\\\\.\\PhysicalDrive0``,
    ``\\\\.\\pipe\\x``, ``\\\\?\\GLOBALROOT\\...``, ``\\\\?\\Volume{...}``), never a
    file of a workspace."""
    p = path.replace("/", "\\")
    if p.startswith("\\\\.\\") or p.startswith("\\??\\"):
        return True
    return p.startswith("\\\\?\\") and strip_verbatim(p) == p


def normalize(path: str) -> str:
    """An absolute Windows path in one spelling: ``\\\\?\\`` dropped, backslashes,
    ``.`` and ``..`` resolved, the drive letter in upper case, a UNC server and share
    as given (their case is compared by :func:`key`)."""
    p = ntpath.normpath(strip_verbatim(path).replace("/", "\\"))
    if _DRIVE.match(p):
        p = p[0].upper() + p[1:]
    return p


def key(path: str) -> str:
    """The form two paths are compared in where case does not matter (NTFS by default)."""
    return ntpath.normcase(normalize(path))


def components(path: str) -> list[str]:
    """The names of ``path`` below its drive or share."""
    rest = ntpath.splitdrive(normalize(path))[1]
    return [c for c in rest.split("\\") if c]


def device_name(name: str) -> bool:
    """Whether ``name`` is a DOS device name: ``CON``, ``nul.txt``, ``COM1 .log``..."""
    base = name.split(".", 1)[0].rstrip(" ")
    return base.upper() in DEVICE_NAMES


def looks_short(name: str) -> bool:
    """Whether ``name`` has the form of an 8.3 short name made for a longer one
    (``PROGRA~1``, ``SECRET~1.ENV``)."""
    return _SHORT.match(name) is not None


def name_refusal(name: str) -> str | None:
    """Why Windows cannot take ``name`` as the name it seems to be, or None."""
    if ":" in name:
        return (
            f"{name!r} names an NTFS alternate data stream (the part after ':'), a hidden "
            "stream of a file, not a file"
        )
    if device_name(name):
        return f"{name!r} is a DOS device name (CON, NUL, COM1...), which Windows opens as a device"
    if name.endswith((".", " ")) and name not in (".", ".."):
        return (
            f"{name!r} ends with a dot or a space, which Windows drops, so it would name "
            f"{name.rstrip('. ')!r}"
        )
    bad = sorted({c for c in name if c in _FORBIDDEN or ord(c) < 32})
    if bad:
        return f"{name!r} holds characters Windows does not allow in a name ({''.join(bad)!r})"
    return None


def refusal(path: str) -> str | None:
    """Why ``path`` cannot be a workspace file on Windows (a device, a stream, a name
    Windows changes), or None. ``path`` is absolute."""
    if device_namespace(path):
        return f"{path!r} names a device (the \\\\.\\ or \\\\?\\ namespace), not a file"
    p = strip_verbatim(path).replace("/", "\\")
    drive, rest = ntpath.splitdrive(p)
    if p.startswith("\\\\") and (not drive or drive.count("\\") < 3):
        return f"{path!r} names a network server without a share"
    for name in rest.split("\\"):
        if name in ("", ".", ".."):
            continue
        why = name_refusal(name)
        if why is not None:
            return why
    return None


def uri_to_path(uri: str) -> str | None:
    """The Windows path a ``file:`` URI names, or None for another scheme, a NUL byte, a
    device. ``file:///c%3A/Users/x`` and ``file:///C:/Users/x`` are ``C:\\Users\\x``;
    ``file://server/share/x`` is ``\\\\server\\share\\x``; ``localhost`` is no server."""
    parsed = urlparse(uri)
    if parsed.scheme.lower() != "file":
        return None
    path = unquote(parsed.path)
    if "\x00" in path:
        return None
    host = parsed.netloc
    if host and host.lower() != "localhost":
        if not path.strip("/"):
            return None
        return normalize("\\\\" + host + path.replace("/", "\\"))
    if path.startswith("/") and _DRIVE.match(path[1:]):
        path = path[1:]
    if not _DRIVE.match(path) or not is_absolute(path):
        return None
    return normalize(path)


def path_to_uri(path: str) -> str:
    """The ``file:`` URI of an absolute Windows path (as VS Code writes it)."""
    from urllib.parse import quote

    p = normalize(path)
    if p.startswith("\\\\"):
        server, _, rest = p[2:].partition("\\")
        return "file://" + server + quote("/" + rest.replace("\\", "/"))
    return "file:///" + p[0].lower() + "%3A" + quote(p[2:].replace("\\", "/"))
