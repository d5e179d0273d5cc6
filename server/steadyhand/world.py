"""What a change is, and where changes go.

A tool decides a :class:`Change` (the new text of one file, and the snapshot it was
decided on) and hands it to a :class:`World`, which makes it the file's content and
answers how (:class:`Applied`). A change to the tree itself is a :class:`Move` (a file
or folder renamed or moved), a :class:`Removal` (files and folders deleted) or a
:class:`Restoration` (files and folders made again, byte for byte: taking a removal
back); the world answers how it went (:class:`TreeApplied`). The server's world is a
stack of layers, each handing the change to the one below: guards, then history, then
the editor (for open documents), then the disk, which writes every byte (see
:mod:`steadyhand.context` for the layer base and :mod:`steadyhand.apply.stack`, which
builds the stack).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from steadyhand.documents.snapshot import Snapshot
from steadyhand.text.encoding import Encoding
from steadyhand.text.splices import Splice


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
    #: What the credential scan had no time for (the result's ``secrets_unscanned``).
    secrets_unscanned: dict[str, object] | None = None
    #: The syntax check's result fields (``syntax_errors`` or ``syntax_check``), when the
    #: file was checked.
    syntax: dict[str, object] | None = None
    #: What is still being made durable (the folder's sync, on a thread of its own):
    #: called, it waits for it. The change is answered only once it has returned (see
    #: :func:`steadyhand.tools.mutation.reached`). None: nothing.
    settle: Callable[[], None] | None = None


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


@dataclass(frozen=True, slots=True)
class Kept:
    """One file of a change to the tree, as it was checked: where it is, the hash of its
    bytes (empty until the history layer read them), its size and permission bits, and
    the hash of its text as a model sees it (LF line endings; None: not text)."""

    path: str
    hash: str = ""
    size: int = 0
    mode: int = 0o644
    view: str | None = None
    #: Where the history store keeps its bytes (None: not kept yet).
    key: str | None = None
    #: The lines of its text (0: not text, or not counted).
    lines: int = 0


@dataclass(frozen=True, slots=True)
class Move:
    """Rename or move ``source`` (a file or a folder) to ``destination``, in one step."""

    source: str
    destination: str
    #: Whether ``source`` is a folder.
    folder: bool
    tool: str
    session: str
    #: The files under a moved folder (relative paths), every one checked at both ends;
    #: ``("",)`` for a file.
    files: tuple[str, ...] = ("",)
    #: How many of ``files`` are files (not folders): what the move reports it moved.
    count: int = 1
    #: The file at ``destination`` the move replaces (``overwrite``), as checked: its
    #: bytes must still be those when it is replaced; the history layer keeps them first.
    replaced: Kept | None = None
    #: The moved file itself (a file move), as checked.
    moved: Kept | None = None
    #: The files under ``source`` (relative paths; ``""``: ``source`` itself) that an
    #: agent's record follows: the watcher is told their move is Steadyhand's own.
    tracked: tuple[str, ...] = ()
    #: Folders to remove once moved out of, when they are empty, deepest first (the ones
    #: the move being taken back made on its way).
    cleanup: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Removal:
    """Delete ``path`` (a file, or a folder and everything in it)."""

    path: str
    folder: bool
    #: Every file, as checked (its bytes must still be those when it is deleted).
    files: tuple[Kept, ...]
    #: Every folder inside ``path`` (and ``path`` itself for a folder), parents first.
    folders: tuple[str, ...]
    tool: str
    session: str
    #: The bytes history kept under a key (set by the history layer: what a layer that
    #: deleted part of it brings back when the rest fails).
    load: Callable[[str], bytes | None] | None = None


@dataclass(frozen=True, slots=True)
class Restoration:
    """Make ``path`` again (a file, or a folder and what it held): the files with the
    bytes history kept (:attr:`load` gives them by key) and their permission bits."""

    path: str
    folder: bool
    files: tuple[Kept, ...]
    folders: tuple[str, ...]
    tool: str
    session: str
    #: The bytes kept under a key (None: no longer kept).
    load: Callable[[str], bytes | None]
    #: The lines of its text files (for the record).
    lines: int = 0


@dataclass(frozen=True, slots=True)
class TreeApplied:
    """How a change to the tree reached the world."""

    via: str  # "disk" or "workspaceEdit"
    #: A sentence for the model (the editor's part, what it could not follow), if any.
    note: str = ""
    #: The id history recorded it under (None: history is off, or it could not record).
    change_id: str | None = None
    #: The folders made on the way to a moved file's new place.
    made: tuple[str, ...] = ()


class World(Protocol):
    """The edges: current content of a file and how a change is applied to it."""

    def current(self, path: str) -> Snapshot | None:
        """The open buffer's snapshot, or None when the file is not open in the editor."""

    async def apply(self, change: Change) -> Applied:
        """Make the change's new text the file's content, or raise ToolError."""

    def stage(self, change: Change) -> None:
        """Start what can be started of ``change`` before it is applied, so that the work
        up to :meth:`apply` (the checks, the history, the answer's text) overlaps it: the
        disk writes the new bytes beside the file and syncs them. :meth:`apply` of that
        very change takes it up; :meth:`unstage` drops it. Nothing else changes."""

    def unstage(self, change: Change) -> None:
        """Drop what :meth:`stage` started for ``change`` if it was not applied: the file
        and its folder are as they were."""

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        """Delete the file at ``path``, which held what ``before`` saw (an undo of its
        creation), or raise ToolError."""

    def make_folders(self, folder: str) -> list[str]:
        """Make the folder ``folder`` and those missing above it, through no symbolic link;
        the folders made, in order (blocks: call it from a worker thread). ``OSError`` as
        the system gives it."""

    async def move(self, move: Move) -> TreeApplied:
        """Rename ``move.source`` to ``move.destination`` in one step (never a copy), or
        raise ToolError with nothing moved."""

    async def remove(self, removal: Removal) -> TreeApplied:
        """Delete every file and folder of ``removal`` if each file still holds what was
        checked, or raise ToolError with nothing deleted."""

    async def restore(self, restoration: Restoration) -> TreeApplied:
        """Make every folder and file of ``restoration`` where nothing is now, or raise
        ToolError with nothing made."""
