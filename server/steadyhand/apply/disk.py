"""Changes to files that are not open in an editor: atomic writes to disk."""

from __future__ import annotations

from steadyhand.documents.snapshot import Snapshot
from steadyhand.fs.atomic import atomic_write
from steadyhand.fs.syscalls import Syscalls
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash
from steadyhand.tools.context import Applied, Change


def write_to_disk(change: Change, syscalls: Syscalls, *, fsync: bool) -> Applied:
    """Write the change atomically; on failure raise ``io_error`` (the old file intact)."""
    before = change.before
    # The bytes the change was checked against: someone writing the file in between
    # gets a ``stale`` refusal instead of a silently lost update.
    expect = before.hash if before is not None and before.source == "disk" else None
    try:
        st = atomic_write(
            change.path,
            change.data,
            sys=syscalls,
            fsync=fsync,
            expect=expect,
            create=before is None,
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
    return Applied(via="disk", snapshot=snap, on_disk=True)


class DiskWorld:
    """A world without an editor: every file comes from and goes to the disk."""

    def __init__(self, syscalls: Syscalls, fsync: bool = True) -> None:
        self.syscalls = syscalls
        self.fsync = fsync

    def current(self, path: str) -> Snapshot | None:
        return None

    async def apply(self, change: Change) -> Applied:
        return write_to_disk(change, self.syscalls, fsync=self.fsync)
