"""How a volume compares names, and the spelling it stores a name under.

Case: APFS and NTFS ignore case by default, but a volume may not (a case-sensitive APFS
volume, an NTFS folder with case sensitivity turned on, a FAT stick on Linux, ext4 with
``casefold``). So it is asked of each volume, once (:func:`case_insensitive`): a name in
a folder of it is looked up with its case swapped: found, and not listed under that
spelling, the volume ignores case. Only when no name there has a letter to swap does
the system's default answer (insensitive on macOS and Windows, sensitive elsewhere).

Unicode forms: macOS's file systems find a name whatever its normalization form (HFS+
stores it decomposed, APFS as written), so ``é`` typed precomposed or decomposed names
one file there (:data:`FORM_INSENSITIVE`).

The stored spelling of an existing path (:func:`stored_spelling`) is asked of the system
where it can tell it from an open handle (macOS ``F_GETPATH``, Windows
``GetFinalPathNameByHandleW``, which also turns 8.3 short names into long ones), and
otherwise read from the folder's listing.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
import threading
import unicodedata

from steadyhand.system import checked

#: Whether this system's file systems find a name whatever its Unicode normalization form.
FORM_INSENSITIVE = sys.platform == "darwin"
#: The answer where a volume holds no name to tell by.
DEFAULT_INSENSITIVE = sys.platform in ("darwin", "win32")

_by_device: dict[int, bool] = {}
_lock = threading.Lock()
#: Entries of a folder looked at, at most, for a name with a letter to swap.
_PROBE_ENTRIES = 64


def fold(name: str, *, insensitive: bool) -> str:
    """The form two names are compared in on a volume: NFC where forms do not matter,
    case-folded where case does not."""
    if FORM_INSENSITIVE:
        name = unicodedata.normalize("NFC", name)
    return name.casefold() if insensitive else name


def _swapped(name: str) -> str | None:
    other = name.swapcase()
    if other == name or other.casefold() != name.casefold():
        return None  # no letter to swap, or one whose swap is another name
    return other


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _tells(folder: str, name: str, st: os.stat_result) -> bool | None:
    """Whether looking up ``name`` with its case swapped finds it; None when ``name``
    has no letter to swap or the lookup cannot tell. Found and not listed under that
    spelling is one file under two spellings (compared by the listing, not by inode: a
    FUSE file system may give each spelling a number of its own)."""
    other = _swapped(name)
    if other is None:
        return None
    try:
        os.stat(os.path.join(folder, other), follow_symlinks=False)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return None
    try:
        return other not in os.listdir(folder)
    except OSError:
        return None


def _probe(folder: str, st: os.stat_result) -> bool:
    parent, base = os.path.split(folder.rstrip("/\\") or folder)
    if base and parent:
        with contextlib.suppress(OSError):
            if os.stat(parent).st_dev == st.st_dev:
                verdict = _tells(parent, base, st)
                if verdict is not None:
                    return verdict
    try:
        with os.scandir(folder) as it:
            for n, entry in enumerate(it):
                if n >= _PROBE_ENTRIES:
                    break
                try:
                    est = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if est.st_dev != st.st_dev:
                    continue
                verdict = _tells(folder, entry.name, est)
                if verdict is not None:
                    return verdict
    except OSError:
        pass
    return DEFAULT_INSENSITIVE


def known_volume(dev: int) -> bool | None:
    """Whether the volume with device number ``dev`` ignores case, if it was asked."""
    return _by_device.get(dev)


def case_insensitive(folder: str, dev: int | None = None) -> bool:
    """Whether the volume holding the existing folder ``folder`` ignores case in names
    (asked once per volume; ``dev``: the volume's device number, if known, which spares
    a look-up once the volume has been asked)."""
    if dev is not None:
        known = _by_device.get(dev)
        if known is not None:
            return known
    try:
        st = os.stat(folder)
    except (OSError, ValueError):
        return DEFAULT_INSENSITIVE
    with _lock:
        known = _by_device.get(st.st_dev)
    if known is not None:
        return known
    verdict = _probe(folder, st)
    with _lock:
        _by_device.setdefault(st.st_dev, verdict)
    return verdict


def _listed(folder: str, name: str, insensitive: bool) -> str:
    """``name`` as the listing of ``folder`` spells it: itself when listed as given; the
    entry it equals under the volume's comparison; else the entry that is the same file
    (``name`` being an alias the listing does not show, such as an 8.3 short name);
    else ``name`` as given."""
    try:
        names = os.listdir(folder)
    except (OSError, ValueError):
        return name
    if name in names:
        return name
    want = fold(name, insensitive=insensitive)
    found = next((n for n in names if fold(n, insensitive=insensitive) == want), None)
    if found is not None:
        return found
    try:
        st = os.stat(os.path.join(folder, name), follow_symlinks=False)
    except (OSError, ValueError):
        return name
    for n in names:
        try:
            if _same(os.stat(os.path.join(folder, n), follow_symlinks=False), st):
                return n
        except OSError:
            continue
    return name


def listed_spelling(path: str, *, insensitive: bool) -> str:
    """The absolute ``path``'s existing folders and name as their folders list them;
    components that do not exist are kept as given."""
    drive, rest = os.path.splitdrive(path)
    sep = os.sep
    top = drive + sep if rest.startswith(("/", "\\")) else drive
    parts = (
        [p for p in rest.replace("\\", "/").split("/") if p]
        if sep == "\\"
        else [p for p in rest.split("/") if p]
    )
    cur = top or sep
    for i, part in enumerate(parts):
        spelled = _listed(cur, part, insensitive)
        nxt = os.path.join(cur, spelled)
        if not os.path.lexists(nxt):
            return os.path.join(cur, *parts[i:])
        cur = nxt
    return cur


def _final(path: str) -> str | None:
    """The stored spelling of an existing ``path`` from a descriptor of it, where the
    system can tell it (None elsewhere, or for what is not a folder or a regular file:
    a FIFO or a device is never opened to ask)."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return None
    try:
        pr = checked.probe(path, None)
    except (OSError, ValueError):
        return None
    try:
        if not _same(pr.st, st):
            return None
        told = pr.final_name()
        if told is not None or sys.platform == "win32":
            return told
        fd = pr.open(checked.READ)
        try:
            return checked.final_name(fd) if _same(os.fstat(fd), st) else None
        finally:
            os.close(fd)
    except OSError:
        return None
    finally:
        pr.close()


def stored_spelling(path: str, *, insensitive: bool) -> str:
    """The absolute, link-free ``path`` as its volume stores it: each existing component
    in its stored case (and, on Windows, long form), the rest as given; NFC throughout
    where forms do not matter (:data:`FORM_INSENSITIVE`), so one file has one spelling."""
    spelled = None
    if sys.platform in ("darwin", "win32"):
        spelled = _final(path)
        if spelled is not None and not checked.same_name(spelled, path):
            spelled = None  # the system named it otherwise (a link, a mount): not ours
    if spelled is None and not os.path.lexists(path):
        folder, name = os.path.split(path)
        if folder != path:
            spelled = os.path.join(stored_spelling(folder, insensitive=insensitive), name)
    if spelled is None:
        spelled = listed_spelling(path, insensitive=insensitive)
    if FORM_INSENSITIVE:
        spelled = unicodedata.normalize("NFC", spelled)
    return spelled
