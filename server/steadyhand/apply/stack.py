"""Building the world: the one place where the stack of layers and the context every tool
runs in are made, for the language server (with the editor) and the MCP server (the
disk alone) alike.

Each layer hands a change to the one below it::

    GuardedWorld → HistoryWorld → EditorWorld (with an editor) → DiskWorld

The guards refuse what may not change and scan what is added, history keeps what a
change replaces, the editor sends changes to open buffers as WorkspaceEdits, and the
disk writes every byte that reaches a file (the one writer).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from steadyhand.apply.disk import DiskWorld
from steadyhand.apply.guarded import GuardedWorld
from steadyhand.apply.history import HistoryWorld
from steadyhand.apply.own_writes import OwnWrites
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.documents.open_docs import OpenDocuments
from steadyhand.fs.syscalls import Syscalls, from_environment
from steadyhand.paths.resolve import Roots
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.world import World

if TYPE_CHECKING:  # the editor layer (and lsprotocol) only where there is an editor
    from steadyhand.apply.editor import EditorServer, EditorWorld


@dataclass(frozen=True, slots=True)
class Built:
    """The context, and the layers its server talks to besides the tools."""

    ctx: ToolContext
    #: The editor layer (None: no editor, the disk alone).
    editor: EditorWorld | None
    #: What Steadyhand itself wrote, for the watcher's judge (None: nothing watches).
    own: OwnWrites | None


def build_world(
    settings: Settings,
    *,
    editor: tuple[EditorServer, OpenDocuments] | None = None,
    syscalls: Syscalls | None = None,
    status: Callable[[], dict[str, Any]] | None = None,
    on_success: Callable[[], None] | None = None,
) -> Built:
    """The context for ``settings``, its world the whole stack of layers: with
    ``editor`` (the language server and its open documents) the editor layer over the
    disk, else the disk alone. No roots yet: the server sets them once it knows its
    folders. ``syscalls``: the system calls writes make (default: as the environment
    asks, for fault injection)."""
    syscalls = syscalls if syscalls is not None else from_environment()
    own = OwnWrites() if editor is not None else None
    disk = DiskWorld(syscalls, own=own)
    extra: dict[str, Any] = {}
    if status is not None:
        extra["status"] = status
    if editor is not None:
        extra["language_id"] = editor[1].language_id
        extra["open_paths"] = editor[1].paths
    ctx = ToolContext(
        settings=settings,
        roots=Roots((), settings.allowed_paths, settings.deny_globs),
        sessions=SessionRegistry(settings.max_tracked_files, settings.max_sessions),
        store=ContentStore(settings.content_store_bytes, settings.content_store_max_file_bytes),
        syscalls=syscalls,
        world=disk,
        on_success=on_success,
        **extra,
    )
    disk.follow(ctx)
    inner: World = disk
    layer: EditorWorld | None = None
    if editor is not None:
        from steadyhand.apply.editor import EditorWorld

        layer = inner = EditorWorld(disk, ctx, *editor)
    # Every change passes the guards, then has the content it replaces kept in history.
    ctx.world = GuardedWorld(HistoryWorld(inner, ctx), ctx)
    return Built(ctx, layer, own)
