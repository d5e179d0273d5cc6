"""Is what the agent saw still what is there? Pure decisions, no I/O."""

from __future__ import annotations

from typing import Protocol

from steadyhand.state.file_state import FileRecord


class HasHashes(Protocol):
    @property
    def source(self) -> str: ...
    @property
    def hash(self) -> str: ...
    @property
    def view_hash(self) -> str: ...


def is_stale(record: FileRecord, current: HasHashes) -> bool:
    """True when the content changed since the agent's record of it.

    Content decides, never mtime: the same source compares exact hashes; across sources
    (the file was opened or closed in the editor since) the model-visible texts compare.
    A record of disk bytes whose view hash is not of the decoded text (a ranged read of a
    large file hashes the bytes only) still compares with a buffer that holds exactly the
    disk's text (up to line endings) while the disk holds those very bytes.
    """
    if record.source == current.source:
        return record.hash != current.hash
    if record.view_hash == current.view_hash:
        return False
    return not (
        record.source == "disk"
        and getattr(current, "unsaved", None) is False
        and getattr(current, "disk_hash", None) == record.hash
    )
