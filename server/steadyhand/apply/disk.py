"""The disk: the bottom of every world stack, and the one writer.

Every byte Steadyhand writes to a file, and every file it deletes, goes through
:class:`DiskWorld` (:meth:`DiskWorld.write`, :meth:`DiskWorld.delete`): a change to a
file no editor has open, and the editor layer's own writes behind an open buffer alike.
So every write has the same checks (the ``allowHardLinks`` setting on the file replaced,
the content and status it was checked with, no file clobbered that a creation did not
expect, ``fsync``), the same refusals in the same words, and is noted as Steadyhand's
own (:mod:`steadyhand.apply.own_writes`) for the watcher.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable

from steadyhand.apply.own_writes import OwnWrites
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, note_written
from steadyhand.fs.atomic import atomic_write, checked_delete, make_folders
from steadyhand.fs.syscalls import Syscalls
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.world import Applied, Change


def after_answer(job: Callable[[], None]) -> None:
    """Run ``job`` on the event loop's next turn (at once where no loop runs here).

    A command that waits for nothing is answered within the turn that read it, so the
    job runs after the answer went out and before the next message is handled.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        job()
        return
    loop.call_soon(job)


def write_failure(err: ToolError) -> str | None:
    """Why :meth:`DiskWorld.write` could not write (the system's words), when ``err`` is
    its ``io_error``; None for any other refusal (the file changed meanwhile)."""
    cause = err.__cause__
    if err.code is not ErrorCode.IO_ERROR or not isinstance(cause, OSError):
        return None
    return cause.strerror or str(cause)


class DiskWorld:
    """A world without an editor: every file comes from and goes to the disk.

    ``fsync`` and ``links_ok`` (the ``allowHardLinks`` setting) are this world's own, or,
    once it :meth:`follow` s a context, that context's settings at each write (a client
    changes them while the server runs). ``own``: where its writes are noted as
    Steadyhand's own, for a server that watches the files (None: not noted)."""

    def __init__(
        self,
        syscalls: Syscalls,
        fsync: bool = True,
        links_ok: bool = False,
        *,
        own: OwnWrites | None = None,
    ) -> None:
        self.syscalls = syscalls
        self._fsync = fsync
        self._links_ok = links_ok
        self.own = own
        self._ctx: ToolContext | None = None

    def follow(self, ctx: ToolContext) -> None:
        """Write with ``ctx``'s ``fsync`` and ``allowHardLinks`` settings from now on."""
        self._ctx = ctx

    @property
    def fsync(self) -> bool:
        return self._ctx.settings.fsync if self._ctx is not None else self._fsync

    @property
    def links_ok(self) -> bool:
        return self._ctx.roots.allow_hard_links if self._ctx is not None else self._links_ok

    def current(self, path: str) -> Snapshot | None:
        return None

    def write(
        self,
        path: str,
        data: bytes,
        *,
        expect: str | None = None,
        expect_stat: tuple[int, int] | None = None,
        create: bool = False,
        digest: str | None = None,
    ) -> os.stat_result:
        """Replace ``path``'s bytes with ``data`` atomically; the new file's status.

        ``expect``: the hash of the bytes the change was checked against, which the file
        must still hold (``expect_stat``: the size and time it had then, which spare
        hashing it again while they hold); ``create``: the file must not exist. Either
        not met is ``stale``, the file as it was; any other failure is ``io_error``, the
        file exactly as it was. A file with a second name (a hard link) is ``stale``
        unless ``allowHardLinks`` is set. ``digest``: ``data``'s hash, if known."""
        try:
            st = atomic_write(
                path,
                data,
                sys=self.syscalls,
                fsync=self.fsync,
                expect=expect,
                expect_stat=expect_stat,
                create=create,
                later=after_answer,
                links_ok=self.links_ok,
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise ToolError(
                ErrorCode.IO_ERROR,
                f"Could not write {path}: {reason}. Nothing was changed: the file is "
                "exactly as it was. Fix the cause (disk space, permissions, a read-only "
                "folder) or tell the user, then retry.",
                path=path,
                errno=exc.errno,
            ) from exc
        if self.own is not None:
            digest = digest if digest is not None else content_hash(data)
            self.own.wrote(path, digest, st.st_size, st.st_mtime_ns)
        return st

    async def apply(self, change: Change) -> Applied:
        """Write the change atomically over exactly the file it was checked against (a
        file written in between is ``stale``: no update is silently lost)."""
        before = change.before
        expect: str | None = None
        expect_stat: tuple[int, int] | None = None
        if before is not None and before.source == "disk":
            expect, expect_stat = before.hash, (before.size, before.mtime_ns)
        digest = content_hash(change.data)
        st = self.write(
            change.path,
            change.data,
            expect=expect,
            expect_stat=expect_stat,
            create=before is None,
            digest=digest,
        )
        snap = Snapshot(
            path=change.path,
            source="disk",
            raw=change.new_raw,
            encoding=change.encoding,
            hash=digest,
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
        )
        after_answer(functools.partial(note_written, snap, change.data))  # off the answer's path
        return Applied(via="disk", snapshot=snap, on_disk=True)

    def make_folders(self, folder: str) -> list[str]:
        return make_folders(folder, self.syscalls, fsync=self.fsync)

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        """Delete ``path`` if it still holds what ``before`` saw (else ``stale``)."""
        if self.own is not None:
            self.own.deleting(path)
        try:
            return delete_from_disk(
                path, before, self.syscalls, fsync=self.fsync, links_ok=self.links_ok
            )
        except BaseException:
            if self.own is not None:
                self.own.not_deleted(path)
            raise


def delete_from_disk(
    path: str, before: Snapshot, syscalls: Syscalls, *, fsync: bool, links_ok: bool = False
) -> Applied:
    """Delete ``path`` from disk if it still holds what ``before`` saw (else ``stale``);
    a missing file is fine; ``io_error`` leaves it as it was."""
    expect: str | None = before.hash
    if before.source != "disk":  # a buffer's text: its bytes as they would be on disk
        try:
            expect = content_hash(before.encoding.encode(before.raw))
        except UnicodeEncodeError:
            expect = None
    try:
        checked_delete(path, sys=syscalls, expect=expect, fsync=fsync, links_ok=links_ok)
    except OSError as exc:
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"Could not delete {path}: {exc.strerror or exc}. It is as it was. Fix the cause "
            "(permissions, a read-only folder) or tell the user.",
            path=path,
        ) from exc
    gone = Snapshot(path, "disk", "", before.encoding, "", 0, 0)
    return Applied(via="disk", snapshot=gone, on_disk=True)
