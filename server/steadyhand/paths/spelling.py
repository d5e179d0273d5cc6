"""One spelling per file: paths as the volume holding them compares names.

On a volume that ignores case (APFS and NTFS by default, FAT, ext4 with ``casefold``),
``Notes.md`` and ``notes.MD`` are one file, and on macOS so are ``é`` written
precomposed and decomposed. Every path that becomes a key (the agents' records, the
history, the editor's open documents, the roots themselves) is first given the spelling
the volume stores (:func:`canonical`), so two spellings of one file are one key; and
every glob (``denyGlobs``, ``protectedGlobs``) is matched ignoring case there
(:func:`glob_match`), so ``.ENV`` is denied by ``.env`` and ``.Git/config`` is protected
by ``.git/**`` even while no such file exists to tell its spelling. Whether a volume
ignores case is asked of the volume, once (:func:`steadyhand.system.names.case_insensitive`).

On a case-sensitive volume (Linux's usual ones) nothing changes and nothing is asked
beyond one look-up by device.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Sequence

from steadyhand.paths.globs import first_match, relative_to, within
from steadyhand.system import WINDOWS_PATHS
from steadyhand.system.names import (
    FORM_INSENSITIVE,
    case_insensitive,
    known_volume,
    stored_spelling,
)

#: The separator of the system's paths.
SEP = os.sep


def ignores_case(path: str, st: os.stat_result | None = None) -> bool:
    """Whether the volume ``path`` lies on ignores case in names (``st``: the path's
    ``lstat`` if known, which spares a look-up). One ``stat`` at most once the volume
    has been asked."""
    if st is not None:
        known = known_volume(st.st_dev)
        if known is not None and not stat.S_ISDIR(st.st_mode):
            return known
        if stat.S_ISDIR(st.st_mode):
            return case_insensitive(path, dev=st.st_dev)
    folder = os.path.dirname(path)
    while True:
        try:
            dev = os.stat(folder).st_dev
        except (OSError, ValueError):
            up = os.path.dirname(folder)
            if up == folder:
                return case_insensitive(folder)
            folder = up
            continue
        return case_insensitive(folder, dev=dev)


def canonical(path: str, st: os.stat_result | None = None) -> str:
    """The absolute, link-free ``path`` as its volume spells it: each existing component
    as stored (case; on Windows the long name of an 8.3 short one), NFC on macOS; the
    path itself on a volume that compares names byte for byte."""
    insensitive = ignores_case(path, st)
    if insensitive or WINDOWS_PATHS:
        return stored_spelling(path, insensitive=insensitive)
    if FORM_INSENSITIVE:
        # case counts, forms do not: the name given and the name stored differ at most
        # in their form, so NFC of the one is NFC of the other (nothing to look up)
        return unicodedata.normalize("NFC", path)
    return path


def glob_form(path: str) -> str:
    """``path`` as globs see it: ``/`` between names (Windows' ``\\`` turned)."""
    return path if SEP == "/" else path.replace(SEP, "/")


def glob_match(
    patterns: Sequence[str], path: str, root: str | None, *, ignore_case: bool
) -> str | None:
    """The first of ``patterns`` the real ``path`` (or its form relative to ``root``)
    matches, ignoring case where the volume does."""
    relative = relative_to(path, root, SEP) if root is not None else None
    return first_match(
        patterns,
        glob_form(path),
        glob_form(relative) if relative is not None else None,
        ignore_case=ignore_case,
    )


def inside(path: str, root: str) -> bool:
    """Whether the canonical ``path`` is the canonical ``root`` or lies inside it."""
    return within(path, root, SEP)


def relative(path: str, root: str) -> str:
    return relative_to(path, root, SEP)
