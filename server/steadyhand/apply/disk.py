"""Changes to files that are not open in an editor: atomic writes to disk, deletions."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable

from steadyhand.documents.snapshot import Snapshot, note_written
from steadyhand.fs.atomic import atomic_write, checked_delete
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


def write_to_disk(
    change: Change, syscalls: Syscalls, *, fsync: bool, links_ok: bool = False
) -> Applied:
    """Write the change atomically; on failure raise ``io_error`` (the old file intact).
    ``links_ok``: the ``allowHardLinks`` setting (else a file that has gained a second
    name since it was checked is ``stale``)."""
    before = change.before
    # The bytes the change was checked against: someone writing the file in between
    # gets a ``stale`` refusal instead of a silently lost update.
    expect: str | None = None
    expect_stat: tuple[int, int] | None = None
    if before is not None and before.source == "disk":
        expect, expect_stat = before.hash, (before.size, before.mtime_ns)
    try:
        st = atomic_write(
            change.path,
            change.data,
            sys=syscalls,
            fsync=fsync,
            expect=expect,
            expect_stat=expect_stat,
            create=before is None,
            later=after_answer,
            links_ok=links_ok,
        )
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ToolError(
            ErrorCode.IO_ERROR,
            f"Could not write {change.path}: {reason}. Nothing was changed: the file is "
            "exactly as it was. Fix the cause (disk space, permissions, a read-only "
            "folder) or tell the user, then retry.",
            path=change.path,
            errno=exc.errno,
        ) from exc
    snap = Snapshot(
        path=change.path,
        source="disk",
        raw=change.new_raw,
        encoding=change.encoding,
        hash=content_hash(change.data),
        size=st.st_size,
        mtime_ns=st.st_mtime_ns,
    )
    after_answer(functools.partial(note_written, snap, change.data))  # off the answer's path
    return Applied(via="disk", snapshot=snap, on_disk=True)


class DiskWorld:
    """A world without an editor: every file comes from and goes to the disk."""

    def __init__(self, syscalls: Syscalls, fsync: bool = True, links_ok: bool = False) -> None:
        self.syscalls = syscalls
        self.fsync = fsync
        self.links_ok = links_ok

    def current(self, path: str) -> Snapshot | None:
        return None

    async def apply(self, change: Change) -> Applied:
        return write_to_disk(change, self.syscalls, fsync=self.fsync, links_ok=self.links_ok)


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
