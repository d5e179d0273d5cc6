"""Session commands: fork a sub-agent's view, close a session."""

from __future__ import annotations

from steadyhand.protocol.params import CloseParams, ForkParams
from steadyhand.protocol.results import Result, success
from steadyhand.tools.context import ToolContext


def fork(ctx: ToolContext, p: ForkParams) -> Result:
    existed = ctx.sessions.exists(p.parent)
    # A fork of a read-only session is read-only too: forking never widens what it may do.
    inherited = existed and ctx.sessions.get(p.parent).read_only
    read_only = p.read_only or inherited
    child = ctx.sessions.fork(p.session, p.parent, read_only=read_only)
    what = (
        f"with a snapshot of {len(child)} file record(s) from {p.parent!r}"
        if existed
        else f"empty (there was no session {p.parent!r} yet)"
    )
    if read_only:
        why = f", like its parent {p.parent!r}" if inherited and not p.read_only else ""
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
    return success(
        f"Session {p.session!r} closed; {n} file record(s) were dropped.",
        session=p.session,
        files=n,
    )
