"""What every tool needs: settings, roots, sessions, the content store, locks, and the
two edges to the world (where current content comes from, where changes go)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from steadyhand.config import Settings
from steadyhand.documents.snapshot import Snapshot, from_disk
from steadyhand.fs.syscalls import Syscalls
from steadyhand.paths.resolve import ResolvedPath, Roots, resolve
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.state.locks import PathLocks
from steadyhand.text.encoding import Encoding
from steadyhand.text.matching import Splice

if TYPE_CHECKING:
    from steadyhand.history.store import HistoryStore


@dataclass(frozen=True, slots=True)
class Applied:
    """How a change reached the world."""

    via: str  # "disk" or "workspaceEdit"
    #: The content now at the change's source, as the agent's new baseline.
    snapshot: Snapshot
    #: Whether disk now holds the new text (``False``: it is in an unsaved buffer).
    on_disk: bool = True
    #: A sentence for the model about saving / formatting, if any.
    note: str = ""
    #: Structured guard findings (credentials in added lines) for the result's ``secrets``.
    findings: tuple[dict[str, object], ...] = ()
    #: The syntax check's result fields (``syntax_errors`` or ``syntax_check``), when the
    #: file was checked.
    syntax: dict[str, object] | None = None


@dataclass(frozen=True, slots=True)
class Change:
    """A change to one file, as decided by a tool."""

    path: str
    before: Snapshot | None  # None: the file does not exist yet
    new_raw: str  # the new text, with the line endings it will have
    data: bytes  # ``new_raw`` encoded for disk
    encoding: Encoding
    tool: str  # "edit", "write", ... (labels the change in the editor)
    #: View-offset splices for a minimal editor edit; None means whole-text replacement.
    splices: tuple[Splice, ...] | None = None
    #: The session making the change (history, read-only sessions).
    session: str = "default"


class World(Protocol):
    """The edges: current content of a file and how a change is applied to it."""

    def current(self, path: str) -> Snapshot | None:
        """The open buffer's snapshot, or None when the file is not open in the editor."""

    async def apply(self, change: Change) -> Applied:
        """Make the change's new text the file's content, or raise ToolError."""


class WorldLayer:
    """A world wrapped around another: where content comes from passes through, and
    :meth:`apply` adds its own step before or after handing the change inward."""

    def __init__(self, inner: World, ctx: ToolContext) -> None:
        self.inner = inner
        self.ctx = ctx

    def current(self, path: str) -> Snapshot | None:
        return self.inner.current(path)


@dataclass
class ToolContext:
    settings: Settings
    roots: Roots
    sessions: SessionRegistry
    store: ContentStore
    syscalls: Syscalls
    world: World
    locks: PathLocks = field(default_factory=PathLocks)
    #: Called after every change Steadyhand makes (path, tool): counters, watchers.
    on_change: Callable[[str, str], Awaitable[None] | None] | None = None
    #: Where replaced versions are kept (None: history is off).
    history: HistoryStore | None = None
    #: Called after a command succeeded (the server starts watching the roots then).
    on_success: Callable[[], None] | None = None
    #: The health check's answer (``ping``): the server fills in what it knows.
    status: Callable[[], dict[str, Any]] = field(default=lambda: {"ok": True, "message": "pong"})
    #: The language id the editor gave the open document at a path (None: not open).
    language_id: Callable[[str], str | None] = field(default=lambda path: None)

    def resolve(self, file_path: str) -> ResolvedPath:
        return resolve(file_path, self.roots)

    def snapshot(self, path: str) -> Snapshot:
        """The current content: the open buffer if there is one, else the disk."""
        buf = self.world.current(path)
        return buf if buf is not None else from_disk(path)
