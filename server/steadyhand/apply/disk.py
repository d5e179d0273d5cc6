"""The disk: the bottom of every world stack, and the one writer.

Every byte Steadyhand writes to a file, every file it deletes and every file or folder
it moves goes through :class:`DiskWorld` (:meth:`DiskWorld.write`,
:meth:`DiskWorld.delete`, :meth:`DiskWorld.move`, :meth:`DiskWorld.remove`,
:meth:`DiskWorld.restore`): a change to a file no editor has open, and the editor
layer's own writes behind an open buffer alike.
So every write has the same checks (the ``allowHardLinks`` setting on the file replaced,
the content and status it was checked with, no file clobbered that a creation did not
expect, ``fsync``), the same refusals in the same words, and is noted as Steadyhand's
own (:mod:`steadyhand.apply.own_writes`) for the watcher.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import os
from collections.abc import Callable, Iterator

from steadyhand.apply.own_writes import OwnWrites
from steadyhand.context import ToolContext
from steadyhand.documents.snapshot import Snapshot, note_written
from steadyhand.fs.atomic import (
    Staged,
    atomic_write,
    checked_delete,
    make_folders,
    move_checked,
    remove_checked,
    stage_write,
)
from steadyhand.fs.syscalls import Syscalls
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.world import Applied, Change, Move, Removal, Restoration, TreeApplied


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
        #: Changes whose bytes are written and being synced (or why they could not
        #: be), by path (:meth:`stage`).
        self._staged: dict[str, tuple[Change, Staged | Exception]] = {}

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
            raise _io_error(path, exc) from exc
        self._note(path, data, st, digest)
        return st

    def _note(self, path: str, data: bytes, st: os.stat_result, digest: str | None) -> None:
        """Note a write as Steadyhand's own, for the watcher."""
        if self.own is not None:
            digest = digest if digest is not None else content_hash(data)
            self.own.wrote(path, digest, st.st_size, st.st_mtime_ns)

    def stage(self, change: Change) -> None:
        """With ``fsync``, write the change's bytes beside the file now and sync them on
        a thread of their own while the change is checked and recorded (:meth:`apply`
        puts them in place). Nothing is staged without ``fsync`` (there is nothing to
        overlap). A write that cannot be started fails when the change is applied,
        with the same words as one that fails then (after the guards, as ever)."""
        if not self.fsync:
            return
        expect, expect_stat = _expected(change)
        started: Staged | Exception
        try:
            started = stage_write(
                change.path,
                change.data,
                sys=self.syscalls,
                fsync=True,
                expect=expect,
                expect_stat=expect_stat,
                create=change.before is None,
                later=after_answer,
                links_ok=self.links_ok,
                overlap=True,
            )
        except (OSError, ToolError) as exc:
            started = exc
        self._drop(change.path)
        self._staged[change.path] = (change, started)

    def unstage(self, change: Change) -> None:
        entry = self._staged.get(change.path)
        if entry is not None and entry[0] is change:
            self._drop(change.path)

    def _drop(self, path: str) -> None:
        entry = self._staged.pop(path, None)
        if entry is not None and isinstance(entry[1], Staged):
            entry[1].discard()

    async def apply(self, change: Change) -> Applied:
        """Write the change atomically over exactly the file it was checked against (a
        file written in between is ``stale``: no update is silently lost). A change
        staged before (:meth:`stage`) is answered while its folder is still being
        synced: :attr:`Applied.settle` waits for that."""
        digest = content_hash(change.data)
        entry = self._staged.get(change.path)
        settle = None
        if entry is not None and entry[0] is change:
            del self._staged[change.path]
            staged = entry[1]
            try:
                if not isinstance(staged, Staged):
                    raise staged
                st, folder_synced = staged.commit()
            except OSError as exc:
                raise _io_error(change.path, exc) from exc
            self._note(change.path, change.data, st, digest)
            settle = folder_synced.wait
        else:
            self._drop(change.path)
            expect, expect_stat = _expected(change)
            st = self.write(
                change.path,
                change.data,
                expect=expect,
                expect_stat=expect_stat,
                create=change.before is None,
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
        return Applied(via="disk", snapshot=snap, on_disk=True, settle=settle)

    def make_folders(self, folder: str) -> list[str]:
        return make_folders(folder, self.syscalls, fsync=self.fsync)

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        """Delete ``path`` if it still holds what ``before`` saw (else ``stale``)."""
        with self._deleting([path]):
            return delete_from_disk(
                path, before, self.syscalls, fsync=self.fsync, links_ok=self.links_ok
            )

    @contextlib.contextmanager
    def _deleting(self, paths: list[str]) -> Iterator[None]:
        """``paths`` noted as being deleted by Steadyhand (before, so the watcher's look
        meanwhile does not forget it) for the body, and as not deleted if it fails."""
        own = self.own
        if own is None:
            yield
            return
        for path in paths:
            own.deleting(path)
        try:
            yield
        except BaseException:
            for path in paths:
                own.not_deleted(path)
            raise

    # -- changes to the tree ------------------------------------------------------------

    async def move(self, move: Move) -> TreeApplied:
        """Rename ``move.source`` to ``move.destination`` in one step (the folders missing
        on the way to it made first); across volumes refused, nothing copied."""
        made: list[str] = []
        parent = os.path.dirname(move.destination)
        if not os.path.isdir(parent):
            try:
                made = make_folders(parent, self.syscalls, fsync=self.fsync)
            except OSError as exc:
                raise _tree_failed(
                    f"Could not make the folders on the way to {move.destination}", exc, move
                ) from exc
        own = self.own
        tracked = [_under(move.source, rel) for rel in move.tracked]
        moved = move.moved
        with self._deleting(tracked):
            try:
                move_checked(
                    move.source,
                    move.destination,
                    sys=self.syscalls,
                    fsync=self.fsync,
                    identity=None,
                    replace=move.replaced.hash if move.replaced is not None else None,
                    links_ok=self.links_ok,
                )
            except BaseException as exc:
                self._undo_folders(made)
                if isinstance(exc, OSError):
                    raise moving_failed(move, exc) from exc
                raise
        if own is not None:
            for rel in move.tracked:
                digest = moved.hash if moved is not None and rel == "" else None
                own.arrived(_under(move.destination, rel), digest or None)
        self.remove_empty(move.cleanup)
        return TreeApplied(via="disk", made=tuple(made))

    def remove_empty(self, folders: tuple[str, ...]) -> None:
        """Remove ``folders`` (deepest first) that are empty; the others stay."""
        if folders:
            with contextlib.suppress(OSError, ToolError):
                remove_checked([], list(reversed(folders)), sys=self.syscalls, fsync=self.fsync)

    def _undo_folders(self, made: list[str]) -> None:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                os.rmdir(folder)

    async def remove(self, removal: Removal) -> TreeApplied:
        """Delete every file of ``removal`` if each still holds the bytes checked (else
        ``stale``, nothing deleted), then its folders."""
        files = [(f.path, f.hash) for f in removal.files]
        with self._deleting([path for path, _ in files]):
            try:
                left = remove_checked(
                    files,
                    list(removal.folders),
                    sys=self.syscalls,
                    fsync=self.fsync,
                    links_ok=self.links_ok,
                )
            except OSError as exc:
                raise ToolError(
                    ErrorCode.IO_ERROR,
                    f"Could not delete {removal.path}: {exc.strerror or exc}. Nothing was "
                    "deleted. Fix the cause (permissions, a read-only folder) or tell the user.",
                    path=removal.path,
                ) from exc
        note = ""
        if left:
            note = (
                f"Something was put in {', '.join(left[:5])} meanwhile, so "
                f"{'that folder was' if len(left) == 1 else 'those folders were'} kept with "
                "what it holds now."
            )
        return TreeApplied(via="disk", note=note)

    async def restore(self, restoration: Restoration) -> TreeApplied:
        """Make the folders and files of ``restoration`` where nothing is now (a file
        there already is ``stale``: what was made is taken away again)."""
        made_folders: list[str] = []
        made_files: list[tuple[str, str]] = []
        try:
            for folder in restoration.folders:
                if not os.path.isdir(folder):
                    made_folders += make_folders(folder, self.syscalls, fsync=self.fsync)
            for f in restoration.files:
                data = restoration.load(f.key) if f.key is not None else None
                if data is None:
                    raise ToolError(
                        ErrorCode.NO_HISTORY,
                        f"The content of {f.path} is no longer kept in history, so "
                        f"{restoration.path} cannot be made again; nothing was changed.",
                        path=f.path,
                    )
                st = atomic_write(
                    f.path,
                    data,
                    sys=self.syscalls,
                    fsync=self.fsync,
                    create=True,
                    later=after_answer,
                    links_ok=self.links_ok,
                    mode=f.mode,
                )
                made_files.append((f.path, f.hash))
                self._note(f.path, data, st, f.hash)
        except BaseException as exc:
            self._take_back(made_files, made_folders)
            if isinstance(exc, OSError):
                raise ToolError(
                    ErrorCode.IO_ERROR,
                    f"Could not make {restoration.path} again: {exc.strerror or exc}. Nothing "
                    "was changed. Fix the cause (disk space, permissions) or tell the user.",
                    path=restoration.path,
                ) from exc
            raise
        return TreeApplied(via="disk")

    def _take_back(self, files: list[tuple[str, str]], folders: list[str]) -> None:
        """Remove what a failed restoration made (only files still as it made them)."""
        with contextlib.suppress(OSError, ToolError):
            remove_checked(files, folders, sys=self.syscalls, fsync=self.fsync)


def _under(root: str, rel: str) -> str:
    return os.path.join(root, rel) if rel else root


def moving_failed(move: Move, exc: OSError) -> ToolError:
    """The refusal for a move the system did not make (nothing was moved)."""
    if exc.errno == errno.EXDEV:
        return cross_volume(move.source, move.destination)
    return _tree_failed(f"Could not move {move.source} to {move.destination}", exc, move)


def cross_volume(source: str, destination: str) -> ToolError:
    return ToolError(
        ErrorCode.IO_ERROR,
        f"{source} and {destination} are on different volumes, where a move would be a copy "
        "and a delete rather than one step, so nothing was moved. Write the file at the new "
        "place and delete the old one, or ask the user to move it.",
        path=source,
        reason="cross_volume",
    )


def _tree_failed(what: str, exc: OSError, move: Move) -> ToolError:
    return ToolError(
        ErrorCode.IO_ERROR,
        f"{what}: {exc.strerror or exc}. Nothing was moved. Fix the cause (permissions, a "
        "read-only folder) or tell the user.",
        path=move.source,
    )


def _expected(change: Change) -> tuple[str | None, tuple[int, int] | None]:
    """What the file must still hold for ``change`` to be written: the hash (and size
    and time) of the bytes it was checked against, when it was made on the disk's."""
    before = change.before
    if before is not None and before.source == "disk":
        return before.hash, (before.size, before.mtime_ns)
    return None, None


def _io_error(path: str, exc: OSError) -> ToolError:
    reason = exc.strerror or str(exc)
    return ToolError(
        ErrorCode.IO_ERROR,
        f"Could not write {path}: {reason}. Nothing was changed: the file is "
        "exactly as it was. Fix the cause (disk space, permissions, a read-only "
        "folder) or tell the user, then retry.",
        path=path,
        errno=exc.errno,
    )


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
