"""Who may change what: read-only sessions and protected paths.

Protected paths (the version-control internals and the editors' own settings folders by
default) stay readable; changing them needs the ``allowProtectedWrites`` setting. Denied
paths (``denyGlobs``) are refused earlier, by path resolution, for reads as well.
"""

from __future__ import annotations

from steadyhand.config import DEFAULT_PROTECTED_GLOBS
from steadyhand.context import ToolContext
from steadyhand.paths.spelling import glob_match, ignores_case, inside
from steadyhand.protocol.errors import ErrorCode, ToolError

#: Default ``protectedGlobs``.
DEFAULT_PROTECTED = DEFAULT_PROTECTED_GLOBS


def _root(ctx: ToolContext, path: str) -> str | None:
    return next((r for r in (*ctx.roots.workspace, *ctx.roots.allowed) if inside(path, r)), None)


def protected_pattern(ctx: ToolContext, path: str) -> str | None:
    """The protected glob ``path`` matches, if any (and writes to it are not allowed);
    whatever the case of either on a volume that ignores case (``.Git/config``)."""
    s = ctx.settings
    if s.allow_protected_writes:
        return None
    return glob_match(s.protected_globs, path, _root(ctx, path), ignore_case=ignores_case(path))


def is_read_only(ctx: ToolContext, session: str) -> bool:
    """Whether ``session`` is read-only (also once it was closed or dropped while idle:
    neither lifts that)."""
    return ctx.sessions.is_read_only(session)


def check_writable(ctx: ToolContext, path: str, session: str) -> None:
    """Raise ``read_only`` or ``protected`` if ``session`` may not change ``path``."""
    if is_read_only(ctx, session):
        raise ToolError(
            ErrorCode.READ_ONLY,
            f"Session {session!r} is read-only: it may read files but not change them, so "
            f"{path} was left as it is. Report the change you would make instead.",
            path=path,
            session=session,
        )
    pattern = protected_pattern(ctx, path)
    if pattern is not None:
        raise ToolError(
            ErrorCode.PROTECTED,
            f"{path} is protected (it matches {pattern!r}): agents may read it but not "
            "change it. Leave it alone, or ask the user to change it or to turn on the "
            "allowProtectedWrites setting.",
            path=path,
            pattern=pattern,
        )
