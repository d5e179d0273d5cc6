"""Glob patterns for settings such as ``denyGlobs``: ``*``, ``?``, ``[...]`` and ``**``."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence


@functools.lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex for a glob. ``*`` stays within one path segment, ``**`` spans segments.

    A pattern without a slash matches a name anywhere (``*.pem`` == ``**/*.pem``).
    """
    pat = pattern.replace("\\", "/")
    if "/" not in pat:
        pat = "**/" + pat
    i = 0
    out = []
    while i < len(pat):
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pat.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
            else:
                body = pat[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j + 1
        else:
            out.append(re.escape(c))
            i += 1
    body = "".join(out)
    if pat.startswith("/"):
        return re.compile(body + "(?:/.*)?")
    return re.compile("(?:.*/)?" + body.removeprefix("(?:.*/)?") + "(?:/.*)?")


@functools.lru_cache(maxsize=64)
def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str] | None:
    """One regex for several globs: one pass over a path instead of one per glob."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{compile_glob(p).pattern})" for p in patterns))


def first_match(patterns: Sequence[str], path: str, relative: str | None = None) -> str | None:
    """The first of ``patterns`` that ``path`` (or its workspace-relative form) matches."""
    rx = _any_of(tuple(patterns))
    if rx is None:
        return None
    if not rx.fullmatch(path) and (relative is None or not rx.fullmatch(relative)):
        return None
    return next((p for p in patterns if matches(p, path, relative)), None)


def within(path: str, root: str) -> bool:
    """Whether the normalised ``path`` is ``root`` or lies inside it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def relative_to(path: str, root: str) -> str:
    """``os.path.relpath(path, root)`` for a normalised ``path`` inside ``root``."""
    if path == root:
        return "."
    return path[len(root.rstrip("/")) + 1 :]


def matches(pattern: str, path: str, relative: str | None = None) -> bool:
    """Whether ``path`` (absolute, POSIX) or its workspace-relative form matches."""
    rx = compile_glob(pattern)
    if rx.fullmatch(path):
        return True
    return relative is not None and bool(rx.fullmatch(relative))
