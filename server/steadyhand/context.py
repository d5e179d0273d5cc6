"""What every tool and every world layer needs: settings, roots, sessions, the content
store, locks, history, and the world changes go to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from steadyhand.config import Settings
from steadyhand.documents.snapshot import Snapshot, from_disk
from steadyhand.fs.reader import RawFile, read_all
from steadyhand.fs.syscalls import Syscalls
from steadyhand.paths.resolve import ResolvedPath, Roots, resolve
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.state.locks import PathLocks
from steadyhand.world import Applied, World

if TYPE_CHECKING:
    from steadyhand.history.stores import History


class WorldLayer:
    """A world wrapped around another: where content comes from passes through, and
    :meth:`apply` adds its own step before or after handing the change inward (a
    deletion passes through unless the layer adds a step to it too)."""

    def __init__(self, inner: World, ctx: ToolContext) -> None:
        self.inner = inner
        self.ctx = ctx

    def current(self, path: str) -> Snapshot | None:
        return self.inner.current(path)

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        return await self.inner.delete(path, before, tool=tool, session=session)

    def make_folders(self, folder: str) -> list[str]:
        return self.inner.make_folders(folder)


@dataclass
class ToolContext:
    settings: Settings
    roots: Roots
    sessions: SessionRegistry
    store: ContentStore
    syscalls: Syscalls
    world: World
    locks: PathLocks = field(default_factory=PathLocks)
    #: Where replaced versions are kept (None: history is off).
    history: History | None = None
    #: Called after a command succeeded (the server starts watching the roots then).
    on_success: Callable[[], None] | None = None
    #: The health check's answer (``ping``): the server fills in what it knows.
    status: Callable[[], dict[str, Any]] = field(default=lambda: {"ok": True, "message": "pong"})
    #: The language id the editor gave the open document at a path (None: not open).
    language_id: Callable[[str], str | None] = field(default=lambda path: None)
    #: The real paths of the documents the editor has open (none without an editor).
    open_paths: Callable[[], list[str]] = field(default=lambda: [])

    def resolve(self, file_path: str) -> ResolvedPath:
        return resolve(file_path, self.roots)

    def snapshot(self, path: str, *, expect: tuple[int, int] | None = None) -> Snapshot:
        """The current content: the open buffer if there is one, else the disk (the file
        opened checked: regular, one link unless ``allowHardLinks``, and the device and
        inode ``expect``, when given)."""
        buf = self.world.current(path)
        if buf is not None:
            return buf
        return from_disk(path, links_ok=self.roots.allow_hard_links, expect=expect)

    def read_raw(self, path: str, *, expect: tuple[int, int] | None = None) -> RawFile:
        """The file's bytes, opened checked as for :meth:`snapshot`."""
        return read_all(path, links_ok=self.roots.allow_hard_links, expect=expect)
