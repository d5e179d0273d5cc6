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
    """
    if record.source == current.source:
        return record.hash != current.hash
    return record.view_hash != current.view_hash
