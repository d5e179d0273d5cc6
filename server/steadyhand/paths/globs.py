"""Glob patterns for settings such as ``denyGlobs``.

``*`` and ``?`` stay within one path segment, ``[...]`` is a character class (``[!...]``
negates it), ``**`` spans folders and ``{a,b}`` stands for either alternative. A pattern
without a slash matches a name anywhere (``*.pem`` == ``**/*.pem``); a trailing slash
is dropped (``secrets/`` is the folder and everything under it, as every match is); a
leading ``./`` anchors the pattern at the workspace root, and so does a leading ``/``
(which also matches the absolute path as written). Settings come from users' files, so a
pattern that does not compile is reported by :func:`invalid_glob` and dropped when the
settings load (:mod:`steadyhand.config`); here it simply matches nothing.

A file name may hold any character but ``/`` and NUL, a newline included: every wildcard
matches every such character (the regexes are compiled with ``DOTALL``, so ``.`` in
``**`` spans a newline as ``[^/]`` in ``*`` does).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

#: More alternatives than this from ``{...}`` make a pattern invalid (not a guess).
MAX_ALTERNATIVES = 256


class GlobError(ValueError):
    """A glob that cannot be used."""


def expand_braces(pattern: str) -> list[str]:
    """``pattern`` with each ``{a,b}`` replaced by its alternatives (nested too). Braces
    without a comma inside, or unbalanced ones, are literal characters."""
    start = _brace_group(pattern)
    if start is None:
        return [pattern]
    open_at, close_at, commas = start
    head, tail = pattern[:open_at], pattern[close_at + 1 :]
    pieces = []
    prev = open_at + 1
    for c in [*commas, close_at]:
        pieces.append(pattern[prev:c])
        prev = c + 1
    out: list[str] = []
    for piece in pieces:
        for rest in expand_braces(head + piece + tail):
            out.append(rest)
            if len(out) > MAX_ALTERNATIVES:
                raise GlobError(f"more than {MAX_ALTERNATIVES} alternatives in braces")
    return out


def _brace_group(pattern: str) -> tuple[int, int, list[int]] | None:
    """The first ``{...}`` holding a top-level comma: its bounds and those commas."""
    for i, c in enumerate(pattern):
        if c != "{":
            continue
        depth = 0
        commas: list[int] = []
        for j in range(i, len(pattern)):
            ch = pattern[j]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if commas:
                        return i, j, commas
                    break
            elif ch == "," and depth == 1:
                commas.append(j)
    return None


def _class(pat: str, i: int) -> tuple[str, int] | None:
    """The regex for the ``[...]`` at ``i`` and the index after it, or None when it is not
    closed (then ``[`` is a literal). A ``]`` first in the class is one of its characters;
    no class matches ``/``."""
    j = i + 1
    negate = j < len(pat) and pat[j] == "!"
    if negate:
        j += 1
    body_start = j
    if j < len(pat) and pat[j] == "]":
        j += 1
    j = pat.find("]", j)
    if j < 0:
        return None
    body = "".join("\\" + ch if ch in "\\^[]&~|" else ch for ch in pat[body_start:j])
    return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), j + 1


def _translate(pat: str) -> str:
    out = []
    i = 0
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
        elif c == "[" and (cls := _class(pat, i)) is not None:
            out.append(cls[0])
            i = cls[1]
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _one(pattern: str) -> str:
    """The regex (source) for one brace-free glob."""
    pat = pattern.replace("\\", "/")
    anchored = absolute = False
    if pat.startswith("./"):
        anchored = True
        while pat.startswith("./"):
            pat = pat[2:].lstrip("/")
    elif pat.startswith("/"):
        absolute = True
    pat = pat.rstrip("/")
    if not pat:
        raise GlobError("the pattern names no file or folder")
    if absolute:
        # "/secrets/**": the absolute path as written, or "secrets/**" at a root.
        return "/?" + _translate(pat[1:]) + "(?:/.*)?"
    body = _translate(pat)
    if anchored:
        return body + "(?:/.*)?"
    if "/" not in pat:
        body = _translate("**/" + pat)
    return "(?:.*/)?" + body.removeprefix("(?:.*/)?") + "(?:/.*)?"


def _exact(pattern: str) -> str:
    """The regex (source) for one brace-free glob read as a path filter: without ``/``
    it matches a name at any depth; with one (a leading ``./`` or ``/`` included) it is
    anchored at the folder listed or searched; nothing beneath a match."""
    pat = pattern.replace("\\", "/")
    anchored = "/" in pat.rstrip("/")
    while pat.startswith("./"):
        pat = pat[2:]
    pat = pat.lstrip("/").rstrip("/")
    if not pat:
        raise GlobError("the pattern names no file or folder")
    return _translate(pat if anchored else "**/" + pat)


@functools.lru_cache(maxsize=512)
def _compiled(
    pattern: str, exact: bool = False, ignore_case: bool = False
) -> re.Pattern[str] | GlobError:
    try:
        one = _exact if exact else _one
        alternatives = [one(p) for p in expand_braces(pattern)]
        how = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
        return re.compile("|".join(f"(?:{a})" for a in alternatives), how)
    except (GlobError, re.error) as exc:
        return exc if isinstance(exc, GlobError) else GlobError(str(exc))


def compile_glob(pattern: str, *, exact: bool = False) -> re.Pattern[str]:
    """A regex for a glob (matched with ``fullmatch``), or raise :class:`GlobError`.

    By default a glob is read as ``denyGlobs`` read it: found at any depth, and a match
    covers everything beneath it. With ``exact`` it is read as a path filter, the way
    ripgrep's ``--glob`` and file-finding tools read one: ``*.py`` matches a name at any
    depth, ``src/*.py`` only the files right in ``src`` (a pattern with a ``/`` is
    anchored at the folder listed or searched), ``src/**`` everything beneath ``src``,
    and a match is that path alone, never what lies beneath it."""
    rx = _compiled(pattern, exact)
    if isinstance(rx, GlobError):
        raise rx
    return rx


def invalid_glob(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used, or None when it can."""
    rx = _compiled(pattern)
    return str(rx) if isinstance(rx, GlobError) else None


@functools.lru_cache(maxsize=64)
def _any_of(patterns: tuple[str, ...], ignore_case: bool = False) -> re.Pattern[str] | None:
    """One regex for several globs: one pass over a path instead of one per glob."""
    parts = [
        rx.pattern
        for p in patterns
        if not isinstance(rx := _compiled(p, ignore_case=ignore_case), GlobError)
    ]
    if not parts:
        return None
    how = re.DOTALL | (re.IGNORECASE if ignore_case else 0)
    return re.compile("|".join(f"(?:{p})" for p in parts), how)


def first_match(
    patterns: Sequence[str],
    path: str,
    relative: str | None = None,
    *,
    ignore_case: bool = False,
) -> str | None:
    """The first of ``patterns`` that ``path`` (or its workspace-relative form) matches;
    with ``ignore_case`` (a volume that ignores case in names), whatever the case of
    either (``.ENV`` is ``.env`` there)."""
    rx = _any_of(tuple(patterns), ignore_case)
    if rx is None:
        return None
    if not rx.fullmatch(path) and (relative is None or not rx.fullmatch(relative)):
        return None
    return next((p for p in patterns if matches(p, path, relative, ignore_case=ignore_case)), None)


def within(path: str, root: str, sep: str = "/") -> bool:
    """Whether the normalised ``path`` is ``root`` or lies inside it (``sep``: the
    system's separator, a backslash on Windows)."""
    return path == root or path.startswith(root.rstrip(sep) + sep)


def relative_to(path: str, root: str, sep: str = "/") -> str:
    """``os.path.relpath(path, root)`` for a normalised ``path`` inside ``root``."""
    if path == root:
        return "."
    return path[len(root.rstrip(sep)) + 1 :]


def matches(
    pattern: str, path: str, relative: str | None = None, *, ignore_case: bool = False
) -> bool:
    """Whether ``path`` (absolute, POSIX) or its workspace-relative form matches. A
    pattern that cannot be used matches nothing."""
    rx = _compiled(pattern, ignore_case=ignore_case)
    if isinstance(rx, GlobError):
        return False
    if rx.fullmatch(path):
        return True
    return relative is not None and bool(rx.fullmatch(relative))
