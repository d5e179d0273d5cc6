"""What a change is, and where changes go.

A tool decides a :class:`Change` (the new text of one file, and the snapshot it was
decided on) and hands it to a :class:`World`, which makes it the file's content and
answers how (:class:`Applied`). The server's world is a stack of layers, each handing
the change to the one below: guards, then history, then the editor (for open
documents), then the disk, which writes every byte (see :mod:`steadyhand.context` for
the layer base and :mod:`steadyhand.apply.stack`, which builds the stack).
"""

from __future__ import annotations

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

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        """Delete the file at ``path``, which held what ``before`` saw (an undo of its
        creation), or raise ToolError."""

    def make_folders(self, folder: str) -> list[str]:
        """Make the folder ``folder`` and those missing above it, through no symbolic link;
        the folders made, in order (blocks: call it from a worker thread). ``OSError`` as
        the system gives it."""
