"""The one way a tool changes a file: open it for a change, then commit the change.

Every change path (edit, multiEdit, write, notebookEdit, undo by file and by id, rewind)
goes through here:

* :func:`open_target` resolves the path, refuses what may not be written, takes the
  path's lock, and looks at what is there now (an open buffer, the file, nothing, a
  folder); :func:`open_each` does the same for the several files of a rewind. Inside
  it, :meth:`Target.fresh` gives the content the change is planned on once the session
  has read it and it has not changed since (``not_read``, ``stale``).
* :func:`commit` encodes the new text, hands the change to the world (guards, history,
  then the editor or the disk) and moves the session's record to the result, so the
  agent can change the file again without reading it.
* :func:`preview` runs the checks a real commit runs, for a dry run, changing nothing.

A tool is then its planning and its message.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from stat import S_ISDIR
from typing import Literal

from steadyhand.apply.guarded import check_secrets, dry_run_fields, dry_run_note, findings_fields
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, prime_endings
from steadyhand.formats import notebook as nb_fmt
from steadyhand.fs.reader import encode_or_refuse
from steadyhand.guards.protected import check_writable
from steadyhand.guards.secrets import Finding, Unscanned
from steadyhand.guards.syntax import SyntaxReport, check_syntax
from steadyhand.paths.resolve import ResolvedPath
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.file_state import FileRecord, Range, Session
from steadyhand.text.encoding import Encoding, binary_reason
from steadyhand.text.lines import EndingStats
from steadyhand.text.splices import Splice
from steadyhand.tools.fresh import check_fresh
from steadyhand.tools.records import (
    diff_fields,
    full_range,
    omitted_note,
    record_for,
    remember,
    require_read,
)
from steadyhand.tools.suggest import not_found
from steadyhand.world import Applied, Change


def encode(ctx: ToolContext, path: str, text: str, enc: Encoding) -> bytes:
    """The bytes to store for ``text``, or ``too_large`` / ``io_error`` when they cannot
    be stored (over the write limit, or not representable in the file's encoding)."""
    data = encode_or_refuse(path, text, enc)
    cap = ctx.settings.max_write_bytes
    if len(data) > cap:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"The new content of {path} would be {len(data):,} bytes, over the {cap:,}-byte "
            "write limit. Split the content into smaller files.",
            path=path,
        )
    return data


def refuse_binary(
    path: str, data: bytes, enc: Encoding, before: Snapshot | None, tool: str
) -> None:
    """Refuse (``binary``) a change whose bytes would read back as a binary file: read,
    edit and write could no longer open it, so the agent could not check or take back
    its own change. A buffer that already holds such text may keep it."""
    why = binary_reason(data, enc)
    if why is None:
        return
    if before is not None and before.source == "buffer":
        try:
            if binary_reason(before.encoding.encode(before.raw), before.encoding) is not None:
                return
        except UnicodeEncodeError:
            pass
    nul = "NUL" in why
    fix = (
        "If the text needs that character, write it the way the language escapes it "
        "(such as \\0, \\x00 or \\u0000)"
        if nul
        else "If the text needs those characters, write them as escapes"
    )
    raise ToolError(
        ErrorCode.BINARY,
        f"The {tool} was refused: {path} would then hold {why}, which makes it a binary "
        "file that read, edit and write can no longer open. Nothing was changed. "
        f"{fix}; a file meant to be binary is for the user to make.",
        path=path,
    )


def is_directory(path: str, tool: str) -> ToolError:
    """The one refusal for a change aimed at a folder."""
    return ToolError(
        ErrorCode.IS_DIRECTORY,
        f"{path} is a directory; {tool} changes files. Pass the path of a file (for "
        "example a name inside that folder).",
        path=path,
    )


def refuse_notebook(ctx: ToolContext, path: str, tool: str) -> None:
    """Raise ``wrong_tool`` when ``path`` is a notebook: its cells are changed with
    notebookEdit. A ``.ipynb`` that is not valid notebook JSON may be repaired as text."""
    if not nb_fmt.is_notebook_path(path):
        return
    try:
        nb_fmt.parse(ctx.snapshot(path).view)
    except (nb_fmt.NotebookError, ToolError):
        return
    raise ToolError(
        ErrorCode.WRONG_TOOL,
        f"{path} is a Jupyter notebook; {tool} does not change notebooks, because their "
        "JSON must stay valid. Use notebookEdit with the cell's id (from read) and "
        "new_source instead.",
        path=path,
        use="steadyhand.notebookEdit",
    )


#: What a tool changes, for the refusals :func:`open_target` gives before anything is read:
#: ``file`` any file (write); ``text`` a file that is not a notebook, whose cells are
#: notebookEdit's (edit, multiEdit); ``notebook`` a notebook's cells, so any other path
#: is refused (notebookEdit); ``version`` whatever is there now, a folder or a binary file
#: included, since the tool taking back a version says why it cannot (undo, rewind).
Accepts = Literal["file", "text", "notebook", "version"]


@dataclass
class Target:
    """A file opened for a change: resolved, allowed, and locked for this call."""

    ctx: ToolContext
    path: str
    tool: str
    #: The session making the change (None: known once the file is locked, see
    #: :meth:`act_as`).
    session_name: str | None
    dry_run: bool
    #: The open buffer's content, when the editor has the file open.
    buffer: Snapshot | None
    #: Whether there is a file (or a buffer) to change; False: it would be created.
    exists: bool
    #: The result carries the whole diff even when it is long.
    include_diff: bool = False
    #: Why this file may not be changed now, for a change of several files
    #: (:func:`open_each`), which leaves it out instead of refusing them all.
    refused: ToolError | None = None
    #: With ``refused``: the path recorded now resolves elsewhere (a symbolic link).
    moved: bool = False

    def diff_fields(self, diff: str, new_total: int) -> dict[str, object]:
        """The result's ``diff``, or where the text changed when it is too long."""
        return diff_fields(self.ctx, diff, new_total, include_diff=self.include_diff)

    @property
    def session(self) -> Session:
        assert self.session_name is not None, "act_as names the session first"
        return self.ctx.sessions.get(self.session_name)

    def act_as(self, session: str) -> None:
        """Make the change for ``session``, once the file is locked tells which (the
        undo of a file's last change, by whoever made it): refused as :func:`open_target`
        refuses (``read_only``, ``protected``)."""
        check_writable(self.ctx, self.path, session)
        self.session_name = session

    def not_found(self) -> ToolError:
        return not_found(self.path)

    def require_read(self) -> FileRecord:
        """The session's record of the file, or ``not_read``."""
        return require_read(self.session, self.path, self.tool)

    def current(self) -> Snapshot:
        """The content now: the open buffer, else the file."""
        return self.buffer if self.buffer is not None else self.ctx.snapshot(self.path)

    def fresh(
        self, rec: FileRecord, snap: Snapshot | None = None, *, stale_as: str | None = None
    ) -> Snapshot:
        """The current content (``snap``, if the caller has it), once it is what the
        session last saw: else ``stale``, with the diff when it is short (``stale_as``:
        the tool name the refusal uses)."""
        if snap is None:
            snap = self.current()
        check_fresh(self.ctx, self.session, rec, snap, stale_as or self.tool, dry_run=self.dry_run)
        return snap

    def change(
        self,
        before: Snapshot | None,
        new_raw: str,
        encoding: Encoding,
        *,
        splices: tuple[Splice, ...] | None = None,
    ) -> Change:
        """The change that makes ``new_raw`` the file's text (encoded for the disk now,
        so a text the file's encoding cannot hold is refused before anything happens,
        and so is one that would make the file binary: :func:`refuse_binary`)."""
        assert self.session_name is not None, "act_as names the session first"
        data = encode(self.ctx, self.path, new_raw, encoding)
        refuse_binary(self.path, data, encoding, before, self.tool)
        return Change(
            self.path,
            before,
            new_raw,
            data,
            encoding,
            self.tool,
            splices=splices,
            session=self.session_name,
        )


def _not_a_notebook(path: str) -> ToolError:
    return ToolError(
        ErrorCode.WRONG_TOOL,
        f"{path} is not a Jupyter notebook (.ipynb); notebookEdit changes notebook "
        "cells only. Use edit or write for other files.",
        path=path,
        use="steadyhand.edit",
    )


def _look(
    ctx: ToolContext, rp: ResolvedPath, tool: str, accepts: Accepts, *, again: bool
) -> tuple[Snapshot | None, bool]:
    """What is at the locked path now: the open buffer, and whether there is anything
    (``again``: another call held the lock meanwhile, so the path is looked at anew)."""
    path = rp.path
    buffer = ctx.world.current(path)
    st = rp.status(again=again) if buffer is None else None
    exists = buffer is not None or st is not None
    if accepts != "version":
        if st is not None and S_ISDIR(st.st_mode):
            raise is_directory(path, tool)
        if exists and accepts == "text":
            refuse_notebook(ctx, path, tool)
    return buffer, exists


@asynccontextmanager
async def open_target(
    ctx: ToolContext,
    file_path: str,
    session: str | None,
    tool: str,
    *,
    dry_run: bool = False,
    include_diff: bool = False,
    accepts: Accepts = "file",
    recorded: str | None = None,
) -> AsyncIterator[Target]:
    """Open ``file_path`` for a change by ``tool`` in ``session``, holding its lock.

    Refused before anything is read: a path outside the roots or denied, a protected
    file or a read-only session (:func:`check_writable`; ``session`` None: see
    :meth:`Target.act_as`), a path ``accepts`` does not take, a folder. ``recorded``: the
    path is a real path history recorded, and a path that resolves elsewhere now is
    refused (``invalid_path``) saying this was not done ("change X was not taken back")."""
    rp = ctx.resolve(file_path)
    path = rp.path
    if recorded is not None and path != file_path:
        raise ToolError(
            ErrorCode.INVALID_PATH,
            f"{file_path} now leads elsewhere (through a symbolic link), so {recorded}; "
            "nothing was changed.",
            path=file_path,
        )
    if session is not None:
        check_writable(ctx, path, session)
    if accepts == "notebook" and not nb_fmt.is_notebook_path(path):
        raise _not_a_notebook(path)
    async with ctx.locks.hold(path) as held:
        buffer, exists = _look(ctx, rp, tool, accepts, again=held.waited)
        yield Target(ctx, path, tool, session, dry_run, buffer, exists, include_diff)


@asynccontextmanager
async def open_each(
    ctx: ToolContext, paths: Iterable[str], session: str, tool: str
) -> AsyncIterator[dict[str, Target]]:
    """Open the files at ``paths`` (real paths history recorded) for one change of them
    all (a rewind), holding every lock (taken in order of path, so two such calls never
    wait for each other). A file that may not be changed now is not refused: its target
    carries the refusal (``refused``: denied or outside the roots now, leading elsewhere
    through a symbolic link, protected), for the caller to leave it out."""
    async with AsyncExitStack() as stack:
        ordered = sorted(paths)
        for path in ordered:
            await stack.enter_async_context(ctx.locks.hold(path))
        targets: dict[str, Target] = {}
        for path in ordered:
            target = targets[path] = Target(ctx, path, tool, session, False, None, False)
            try:
                rp = ctx.resolve(path)
            except ToolError as err:
                target.refused = err
                continue
            if rp.path != path:
                target.moved = True
                target.refused = ToolError(
                    ErrorCode.INVALID_PATH,
                    f"{path} now leads elsewhere (through a symbolic link).",
                    path=path,
                )
                continue
            try:
                check_writable(ctx, path, session)
            except ToolError as err:
                target.refused = err
            target.buffer, target.exists = _look(ctx, rp, tool, "version", again=False)
        yield targets


async def commit(
    ctx: ToolContext,
    change: Change,
    *,
    shown: tuple[Range, ...] | None = None,
    endings: EndingStats | None = None,
    total_lines: int | None = None,
) -> Applied:
    """Make ``change`` the file's content through the world, and move the session's
    record to what the world now holds.

    ``shown``: the lines the session has seen of the new text (default: all of it);
    ``endings``: the new text's line-ending counts, when the tool knows them (no pass
    over the text); ``total_lines``: the record's unit count when it is not lines (a
    notebook counts cells)."""
    applied = await ctx.world.apply(change)
    after = applied.snapshot
    if endings is not None and after.raw is change.new_raw:
        prime_endings(after, endings)
    seen = full_range(after) if shown is None else shown
    rec = record_for(after, seen, None, remember(ctx, after))
    if total_lines is not None:
        rec = rec.replace(total_lines=total_lines)
    ctx.sessions.get(change.session).put(rec)
    return applied


def told(message: str, applied: Applied, fields: dict[str, object] | None = None) -> str:
    """``message`` with what the world said of the change (saved or not, formatted,
    credentials, syntax errors) and, when the diff was left out of the result's
    ``fields``, the sentence that says so."""
    if applied.note:
        message += " " + applied.note
    omitted = omitted_note(fields) if fields is not None else ""
    return message + " " + omitted if omitted else message


def reached(applied: Applied) -> dict[str, object]:
    """The fields of every result whose change reached the world: how (``via``), whether
    the disk holds it (``on_disk``), and what the guards found (credentials, syntax)."""
    return {"via": applied.via, "on_disk": applied.on_disk, **findings_fields(applied)}


@dataclass(frozen=True)
class Preview:
    """What a dry run of a change reports: what the world's checks found."""

    #: credentials the change adds
    findings: list[Finding]
    #: the syntax errors it introduces (None: the file is not checked)
    syntax: SyntaxReport | None
    #: what the credential scan had no time for
    unscanned: Unscanned | None = None

    def note(self) -> str:
        """What the dry run's message adds (with a leading space), or ""."""
        return dry_run_note(self.findings, self.syntax, self.unscanned)

    def fields(self) -> dict[str, object]:
        """The dry run's ``secrets`` and syntax fields."""
        return dry_run_fields(self.findings, self.syntax, self.unscanned)


async def preview(ctx: ToolContext, change: Change) -> Preview:
    """What a dry run of ``change`` reports: the checks the world runs before it applies
    a change (credentials added, syntax errors introduced; ``secret_detected`` or
    ``syntax_error`` when they are refused)."""
    scan = await check_secrets(ctx, change)
    return Preview(scan.findings, check_syntax(ctx, change), scan.unscanned)


async def remove(ctx: ToolContext, path: str, now: Snapshot, *, tool: str, session: str) -> None:
    """Delete ``path`` through the world (recorded in history, so it can be undone); the
    session forgets the file."""
    await ctx.world.delete(path, now, tool=tool, session=session)
    ctx.sessions.get(session).drop(path)


async def make_folders(ctx: ToolContext, folder: str, *, session: str) -> list[str]:
    """Make ``folder`` (a resolved real path) and those missing above it through the world,
    once the session may change it; the folders made, in order."""
    check_writable(ctx, folder, session)
    async with ctx.locks.hold(folder):
        return await asyncio.to_thread(lambda: ctx.world.make_folders(folder))
