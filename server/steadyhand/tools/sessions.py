"""Session commands: fork a sub-agent's view, close a session."""

from __future__ import annotations

import difflib

from steadyhand.context import ToolContext
from steadyhand.protocol.commands import DEFAULT_SESSION
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.lists import list_fields, named
from steadyhand.protocol.params import CloseParams, ForkParams
from steadyhand.protocol.results import Result, success


def _exists(ctx: ToolContext, name: str) -> bool:
    """Whether session ``name`` is in use (the default session always is)."""
    return name == DEFAULT_SESSION or ctx.sessions.exists(name)


def _known(ctx: ToolContext) -> list[str]:
    """Every session's name: the default first, then the most recently used."""
    return [DEFAULT_SESSION, *(n for n in ctx.sessions.names() if n != DEFAULT_SESSION)]


def fork(ctx: ToolContext, p: ForkParams) -> Result:
    if not _exists(ctx, p.parent):
        known = _known(ctx)
        close = difflib.get_close_matches(p.parent, known, n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        listing = named([repr(n) for n in known])
        dropped = (
            " Sessions unused for a while are dropped beyond the maxSessions setting"
            f" ({ctx.sessions.max_sessions:,}): one of them may have been."
            if ctx.sessions.dropped
            else ""
        )
        raise ToolError(
            ErrorCode.NOT_FOUND,
            f"There is no session {p.parent!r} to fork from.{hint} Known sessions "
            f"(most recently used first): {listing}. Pass one of them as `parent` (a "
            f"session exists once a call used it).{dropped}",
            session=p.session,
            parent=p.parent,
            **list_fields("sessions", known),
        )
    if _exists(ctx, p.session):
        raise ToolError(
            ErrorCode.SESSION_EXISTS,
            f"Session {p.session!r} already exists; forking onto it would drop the records "
            "of what it read. Pick a new name for the fork, or close that session first "
            "(session.close) if you mean to start it over.",
            session=p.session,
            parent=p.parent,
        )
    existed = ctx.sessions.exists(p.parent)
    # A fork of a read-only session is read-only too: forking never widens what it may
    # do; nor does reusing the name of a read-only session that was closed or dropped.
    inherited = ctx.sessions.is_read_only(p.parent)
    before = ctx.sessions.is_read_only(p.session)
    child = ctx.sessions.fork(p.session, p.parent, read_only=p.read_only or inherited)
    read_only = child.read_only
    what = (
        f"with a snapshot of {len(child)} file record(s) from {p.parent!r}"
        if existed
        else f"empty (there was no session {p.parent!r} yet)"
    )
    if read_only:
        why = ""
        if inherited and not p.read_only:
            why = f", like its parent {p.parent!r}"
        elif before and not p.read_only:
            why = (
                " (a read-only session of that name was closed or dropped while idle, and "
                "its name stays read-only)"
            )
        return success(
            f"Session {p.session!r} starts {what}. It is read-only{why}: it may read files, "
            "and every change it asks for is refused with read_only.",
            session=p.session,
            parent=p.parent,
            files=len(child),
            read_only=True,
        )
    return success(
        f"Session {p.session!r} starts {what}. Its reads and edits no longer affect "
        f"{p.parent!r}, and changes there do not reach it.",
        session=p.session,
        parent=p.parent,
        files=len(child),
        read_only=False,
    )


def close(ctx: ToolContext, p: CloseParams) -> Result:
    n = ctx.sessions.close(p.session)
    stays = ""
    if ctx.sessions.is_read_only(p.session):
        stays = " Its name stays read-only: a session of that name may read, never change."
    return success(
        f"Session {p.session!r} closed; {n} file record(s) were dropped.{stays}",
        session=p.session,
        files=n,
    )
