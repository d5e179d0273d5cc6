"""Changes to documents open in the editor: versioned WorkspaceEdits, then disk follows.

For an open document the buffer is the truth. An agent change is sent as
``workspace/applyEdit`` with a ``TextDocumentEdit`` carrying the version the staleness
check validated, so the editor itself refuses it if the buffer moved in between. The
edit is minimal (only the changed ranges) so cursors, folds and undo behave, and one
agent call is one WorkspaceEdit: one undo step. Then disk follows the buffer according
to ``saveAfterEdit``, never saving the user's own unsaved typing behind their back.
Files that are not open go to the disk layer below (:class:`DiskWorld`), which also makes
every write this layer makes behind an open buffer: the editor layer never writes itself.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import pathlib
from typing import Any, Protocol

from lsprotocol import types

from steadyhand.apply.disk import DiskWorld, write_failure
from steadyhand.apply.own_writes import OwnWrites
from steadyhand.config import Settings
from steadyhand.context import ToolContext, WorldLayer
from steadyhand.documents.open_docs import OpenDocuments
from steadyhand.documents.positions import PositionIndex, encoding_name, line_starts
from steadyhand.documents.snapshot import Snapshot, from_text, mixed_view
from steadyhand.fs.reader import decode_or_refuse, encode_or_refuse, read_all
from steadyhand.protocol.answers import MalformedAnswer, apply_edit_answer, save_refusal, shown
from steadyhand.protocol.commands import SAVE_DOCUMENTS
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.state.hashing import content_hash, text_hash
from steadyhand.text.diff import line_opcodes, stat, whole_diff
from steadyhand.text.encoding import UTF8, Encoding
from steadyhand.text.lines import NewlineMap, ending_stats, to_view, with_endings
from steadyhand.text.splices import Splice, apply_splices, changed_core, coalesce, raw_splices
from steadyhand.world import Applied, Change, Move, Removal, Restoration, TreeApplied

log = logging.getLogger(__name__)

#: How long to wait for the editor's didChange after it applied an edit.
CHANGE_WAIT_S = 1.5
#: The most text edits one WorkspaceEdit carries (a change at more places is sent with
#: neighbouring places merged into one edit each).
MAX_TEXT_EDITS = 1000
#: After the editor saved: how long a formatter may take to change the document.
FORMAT_SETTLE_S = 0.3

ANNOTATION_ID = "steadyhand.agentEdit"


class EditorServer(Protocol):
    """The parts of the language server the editor world uses."""

    @property
    def client_capabilities(self) -> types.ClientCapabilities: ...
    @property
    def server_capabilities(self) -> types.ServerCapabilities: ...
    @property
    def workspace(self) -> Any: ...
    @property
    def protocol(self) -> Any: ...


_DISK_CHANGED = (
    "the file on disk was changed by someone else meanwhile, so the buffer was not "
    "written over it (read the file to see both)"
)
_DISK_DELETED = (
    "the file was deleted from disk by someone else meanwhile, so the buffer was not "
    "written back: your change is only in the buffer. Ask the user whether the file should "
    "still exist: they can save the buffer, or close it"
)
_UNSAVED_TYPING = (
    "the buffer already had unsaved changes of the user's, which Steadyhand never saves "
    "behind their back"
)
_UNSAVED_UNKNOWN = (
    "the buffer already differed from the file on disk before your change (unsaved "
    "changes, or the file was changed on disk behind the editor), and Steadyhand never "
    "saves such a buffer behind the user's back"
)
_BEHIND = {
    "changed": (
        "the file was changed on disk behind the editor (another program wrote it after "
        "the editor loaded it, and the buffer was not reloaded), so the buffer was not "
        "written over it: the other program's version is on disk, your change is only in "
        "the buffer. Tell the user: they can reload the file in the editor (then read it "
        "again and redo your change on the new text) or keep the buffer and save it "
        "themselves, replacing the version on disk"
    ),
    "deleted": (
        "the file was deleted from disk behind the editor (the buffer was not closed), so "
        "it was not written back: your change is only in the buffer. Ask the user whether "
        "the file should still exist: they can save the buffer, or close it"
    ),
}
_NO_APPLY_EDIT = (
    "the editor does not accept edits from the server (its client did not declare the "
    "workspace.applyEdit capability)"
)
_TYPED_SINCE = (
    "the buffer changed again right after it (the user may be typing), so it was not "
    "saved: Steadyhand never saves the user's typing"
)


def unsaved_typing(path: str, why: str) -> ToolError:
    """The refusal for a document with the user's unsaved typing: nothing was changed."""
    return ToolError(
        ErrorCode.UNSAVED_CHANGES,
        f"{path} is open in the editor with unsaved changes, and {why}; nothing was "
        "changed. Ask the user to save (or discard) them, then retry.",
        path=path,
    )


def _malformed_save(exc: MalformedAnswer) -> str:
    return (
        f"the editor answered the save request without saying it saved it ({exc}), so it "
        "counts as not saved"
    )


def _answer_text(answer: Any) -> str:
    """The client's answer to a save request, shortly, for a message."""
    return shown(answer)


#: Most lines on either side of a whole-text change that are aligned line by line to
#: find the places it changes; a larger change is sent as one edit over what differs.
ALIGN_MAX_LINES = 20_000


def _lines(text: str) -> list[str]:
    """``text`` cut after each LSP line break (LF, CRLF, CR), each line with its break."""
    starts = line_starts(text)
    ends = [*starts[1:], len(text)]
    return [text[a:b] for a, b in zip(starts, ends, strict=True) if b > a]


def line_splices(old: str, new: str) -> list[Splice]:
    """Splices turning ``old`` into ``new``, one per run of changed lines (lines aligned
    as a diff aligns them), so a whole-text change that touches a few places becomes a
    few small edits, never one edit over everything between them."""
    a, b = _lines(old), _lines(new)
    lo = 0
    while lo < len(a) and lo < len(b) and a[lo] == b[lo]:
        lo += 1
    ahi, bhi = len(a), len(b)
    while ahi > lo and bhi > lo and a[ahi - 1] == b[bhi - 1]:
        ahi, bhi = ahi - 1, bhi - 1
    offsets = [0]
    for line in a:
        offsets.append(offsets[-1] + len(line))
    if max(ahi, bhi) - lo > ALIGN_MAX_LINES:
        return [Splice(offsets[lo], offsets[ahi], "".join(b[lo:bhi]))]
    return [
        Splice(offsets[lo + i1], offsets[lo + i2], "".join(b[lo + j1 : lo + j2]))
        for tag, i1, i2, j1, j2 in line_opcodes(a[lo:ahi], b[lo:bhi])
        if tag != "equal"
    ]


#: Largest file whose text is compared with a buffer the editor opens.
OPEN_COMPARE_MAX_BYTES = 8 << 20


def disk_file(path: str, *, links_ok: bool = False) -> tuple[bytes | None, str | None, Encoding]:
    """The disk's bytes (None if missing or unreadable, or not a file that may be read:
    ``links_ok`` is the ``allowHardLinks`` setting), their text (None also if they are
    not text) and its encoding."""
    try:
        data = read_all(path, links_ok=links_ok).data
    except ToolError:
        return None, None, UTF8
    try:
        text, enc = decode_or_refuse(path, data)
    except ToolError:
        return data, None, UTF8
    return data, text, enc


class EditorWorld(WorldLayer):
    """The editor layer, over the disk layer: changes to open documents go to the
    editor's buffers, and the disk follows through the layer below (see the module
    docstring)."""

    def __init__(
        self, inner: DiskWorld, ctx: ToolContext, ls: EditorServer, docs: OpenDocuments
    ) -> None:
        super().__init__(inner, ctx)
        self.disk = inner
        assert inner.own is not None, "the editor's server notes its own writes"
        #: what Steadyhand itself last wrote or deleted (the disk layer notes its writes)
        self.own: OwnWrites = inner.own
        self.ls = ls
        self.docs = docs
        #: path -> (hash of the disk's bytes, hash of the buffer's LF text) when the open
        #: buffer was last seen holding the disk's text (up to line endings): the disk
        #: must still hold those bytes for the buffer to be written over it
        self.matched: dict[str, tuple[str, str]] = {}
        #: path -> disk hash (None: gone) last reported as changed behind its open buffer
        self.reported: dict[str, str | None] = {}
        #: path -> the encoding of the disk's text behind an open buffer, when last read
        self.disk_encodings: dict[str, Encoding] = {}

    @property
    def settings(self) -> Settings:
        return self.ctx.settings

    # -- what the disk holds behind an open buffer ----------------------------------

    def disk_file(self, path: str) -> tuple[bytes | None, str | None, Encoding]:
        """:func:`disk_file`, by the ``allowHardLinks`` setting."""
        return disk_file(path, links_ok=self.disk.links_ok)

    def opened(self, path: str, text: str) -> None:
        """The editor opened ``path`` with ``text``: note whether that is the disk's text."""
        self.reported.pop(path, None)
        self.matched.pop(path, None)
        self.compare_disk(path, text)

    def compare_disk(self, path: str, text: str) -> None:
        """Note whether the disk holds the buffer's ``text`` (after a save, say), for a
        file not too large to read on the way."""
        try:
            if os.stat(path).st_size > OPEN_COMPARE_MAX_BYTES:
                return
        except OSError:
            return
        data, disk_text, _ = self.disk_file(path)
        self.note_disk(path, text, data, disk_text)

    def closed(self, path: str) -> None:
        self.matched.pop(path, None)
        self.reported.pop(path, None)
        self.disk_encodings.pop(path, None)

    def note_disk(self, path: str, text: str, data: bytes | None, disk_text: str | None) -> bool:
        """Remember the disk's bytes ``data`` as the buffer's match when its text is the
        buffer's ``text`` up to line endings; whether it is."""
        if data is None or disk_text is None:
            return False
        view = to_view(text)
        if to_view(disk_text) != view:
            return False
        self.matched[path] = (content_hash(data), text_hash(view))
        self.reported.pop(path, None)
        return True

    def disk_moved(self, path: str, data: bytes | None) -> str | None:
        """ "changed" or "deleted" when the disk (now ``data``; None: missing) no longer
        holds what the open buffer of ``path`` was last seen to match; None when it still
        does, or when no match was ever seen."""
        base = self.matched.get(path)
        if base is None:
            return None
        if data is None:
            return "deleted" if not os.path.lexists(path) else None
        return None if content_hash(data) == base[0] else "changed"

    def typed_since_match(self, path: str, before: Snapshot) -> bool | None:
        """Whether the buffer's text moved from the one last seen matching the disk (the
        user's typing); None when no match was ever seen."""
        base = self.matched.get(path)
        if base is None:
            return None
        return text_hash(before.view) != base[1]

    def disk_news(self, path: str, text: str) -> tuple[str | None, bool] | None:
        """What to tell the agent about the disk behind the open buffer of ``path``
        (holding ``text``): the disk's new content hash (None: gone) and whether it is
        gone, once per new disk content; None when there is nothing to tell (Steadyhand's
        own write, the editor's save of the buffer, what the buffer last matched, a
        moment of unreadable file, or told already)."""
        data, disk_text, _ = self.disk_file(path)
        gone = data is None and not os.path.lexists(path)
        now = content_hash(data) if data is not None else None
        if self.own.written_by_us(path, now, gone):
            return None
        if self.note_disk(path, text, data, disk_text):
            return None  # the disk holds the buffer's text (the editor saved it)
        base = self.matched.get(path)
        if base is not None and now == base[0]:
            return None  # still what the buffer was last seen to match
        if data is None and not gone:
            return None  # unreadable for a moment: a write checks it anyway
        if path in self.reported and self.reported[path] == now:
            return None  # told already
        self.reported[path] = now
        return now, gone

    # -- capabilities ----------------------------------------------------------------

    def _workspace_edit_caps(self) -> types.WorkspaceEditClientCapabilities | None:
        ws = self.ls.client_capabilities.workspace
        return ws.workspace_edit if ws is not None else None

    def supports_apply_edit(self) -> bool:
        ws = self.ls.client_capabilities.workspace
        return bool(ws is not None and ws.apply_edit)

    def supports_document_changes(self) -> bool:
        caps = self._workspace_edit_caps()
        return bool(caps and caps.document_changes)

    def supports_annotations(self) -> bool:
        caps = self._workspace_edit_caps()
        return bool(caps and caps.change_annotation_support is not None)

    def supports_save_request(self) -> bool:
        exp = self.ls.client_capabilities.experimental
        if not isinstance(exp, dict):
            return False
        sh = exp.get("steadyhand")
        return isinstance(sh, dict) and bool(sh.get("saveDocuments"))

    def position_encoding(self) -> str:
        enc = self.ls.server_capabilities.position_encoding
        return encoding_name(str(enc) if enc is not None else None)

    # -- World -----------------------------------------------------------------------

    def current(self, path: str) -> Snapshot | None:
        uri = self.docs.uri_for(path)
        if uri is None:
            return None
        doc = self.ls.workspace.get_text_document(uri)
        text: str = doc.source
        try:
            st: os.stat_result | None = os.stat(path)
        except OSError:
            st = None
        data, disk_text, enc = self.disk_file(path) if st is not None else (None, None, UTF8)
        if disk_text is not None:
            self.disk_encodings[path] = enc
        else:
            self.disk_encodings.pop(path, None)
        unsaved = not self.note_disk(path, text, data, disk_text)
        disk_hash = content_hash(data) if data is not None else None
        return from_text(path, text, st, doc.version, unsaved, disk_hash=disk_hash)

    def stage(self, change: Change) -> None:
        """Only a change that goes to the disk (see :meth:`apply`: one not made on an open
        buffer's text) starts early there."""
        before = change.before
        if before is None or before.source != "buffer":
            self.inner.stage(change)

    async def apply(self, change: Change) -> Applied:
        uri = self.docs.uri_for(change.path)
        before = change.before
        if uri is None and before is not None and before.source == "buffer":
            # Closed while the change was being made: the buffer it was made from (which
            # may have held typing the user then discarded) is gone, and the disk holds
            # something else. Writing the change there would bring that text back.
            raise ToolError(
                ErrorCode.STALE,
                f"{change.path} was closed in the editor while your change was being made, "
                "so it was not applied (the text you changed was the editor's buffer, not "
                "the file on disk). Read the file again, then redo your change.",
                path=change.path,
                refreshed=False,
            )
        if uri is None or before is None or before.source != "buffer":
            return await self.inner.apply(change)
        self._check_storable(change)
        if not self.supports_apply_edit():
            return self._write_behind_editor(change, before)
        return await self._apply_to_buffer(uri, change, before)

    def _check_storable(self, change: Change) -> None:
        """Refuse (``io_error``) a change to an open buffer whose file on disk is in an
        encoding that cannot hold the new text (Latin-1, say): saved, the file would have
        to change its encoding behind the user's back. Nothing is changed yet."""
        enc = self.disk_encodings.get(change.path)
        if enc is not None and not enc.codec.startswith("utf"):
            encode_or_refuse(change.path, change.new_raw, enc)

    def _write_behind_editor(self, change: Change, before: Snapshot) -> Applied:
        """A change to an open buffer, for a client that takes no ``workspace/applyEdit``:
        written to disk when the buffer is the disk's text (the editor reloads it), else
        refused (the buffer holds something the disk does not)."""
        path = change.path
        found, disk_text, enc = self.disk_file(path)
        if before.unsaved or found is None or disk_text is None:
            moved = self.disk_moved(path, found)
            why = (
                _BEHIND[moved].split(", so ")[0]
                if moved is not None
                else "it has unsaved changes in the editor"
            )
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"{path} is open in the editor and {why}, and {_NO_APPLY_EDIT}, so it was "
                "not changed: neither the buffer nor the file on disk. Ask the user to save "
                "or close the file in the editor, then read it again and retry.",
                path=path,
                reason="no applyEdit capability",
            )
        if to_view(disk_text) != before.view:
            raise ToolError(
                ErrorCode.STALE,
                f"{path} changed on disk while your change was being made, so it was not "
                "applied. Read the file again, then redo your change.",
                path=path,
                refreshed=False,
            )
        raw, enc, data = self._disk_bytes(change.new_raw, before, change, disk_text, enc)
        digest = content_hash(data)
        st = self.disk.write(path, data, expect=content_hash(found), digest=digest)
        self.matched[path] = (digest, text_hash(to_view(raw)))
        snap = Snapshot(path, "disk", raw, enc, digest, st.st_size, st.st_mtime_ns)
        return Applied(
            via="disk",
            snapshot=snap,
            on_disk=True,
            note=f"Written to disk, since {_NO_APPLY_EDIT}; the editor's buffer shows the "
            "change once the editor reloads the file.",
        )

    @staticmethod
    def _in_disk_style(text: str, before: Snapshot, change: Change, disk_text: str | None) -> str:
        """The buffer's ``text`` (``before`` with ``change`` made) as it is to go to disk:
        in the disk's own line endings when the buffer held the disk's text with its line
        endings normalised (an editor that converts them on loading), else as it is."""
        if disk_text is None or disk_text == before.raw or to_view(disk_text) != before.view:
            return text
        stats = ending_stats(disk_text)
        if change.splices is not None:
            mixed = to_view(disk_text) if stats.style == "mixed" else None
            spliced = raw_splices(
                NewlineMap(disk_text),
                change.splices,
                stats.dominant,
                mixed_view=mixed,
                raw=disk_text,
            )
            out = apply_splices(disk_text, spliced)
        elif stats.style in ("crlf", "cr"):
            out = with_endings(to_view(text), stats.dominant)
        else:
            return text
        return out if to_view(out) == to_view(text) else text

    @classmethod
    def _disk_bytes(
        cls, text: str, before: Snapshot, change: Change, disk_text: str | None, enc: Encoding
    ) -> tuple[str, Encoding, bytes]:
        """The buffer's ``text`` as it goes to disk (:meth:`_in_disk_style`), in the disk's
        encoding ``enc``, or UTF-8 when that cannot hold it: (text, encoding, bytes)."""
        raw = cls._in_disk_style(text, before, change, disk_text)
        try:
            return raw, enc, enc.encode(raw)
        except UnicodeEncodeError:
            return raw, UTF8, raw.encode("utf-8")

    def supports_delete(self) -> bool:
        return self._supports_operation(types.ResourceOperationKind.Delete)

    def supports_rename(self) -> bool:
        return self._supports_operation(types.ResourceOperationKind.Rename)

    def _supports_operation(self, kind: types.ResourceOperationKind) -> bool:
        caps = self._workspace_edit_caps()
        ops = caps.resource_operations if caps is not None else None
        return bool(
            self.supports_apply_edit() and caps and caps.document_changes and ops and kind in ops
        )

    def rename_keeps_unsaved(self) -> bool:
        """Whether the client said (``experimental.steadyhand.renameKeepsUnsaved``) that a
        ``RenameFile`` moves an open document's unsaved typing to its new name, unsaved.
        LSP leaves that open: some clients save the buffer first (Neovim), which would
        save the user's typing behind their back."""
        exp = self.ls.client_capabilities.experimental
        sh = exp.get("steadyhand") if isinstance(exp, dict) else None
        return isinstance(sh, dict) and bool(sh.get("renameKeepsUnsaved"))

    def open_under(self, path: str) -> list[str]:
        """The open documents' paths that are ``path`` or lie inside it."""
        inside = path.rstrip(os.sep) + os.sep
        return [p for p in self.docs.paths() if p == path or p.startswith(inside)]

    # -- changes to the tree ------------------------------------------------------------

    async def move(self, move: Move) -> TreeApplied:
        """A move of something the editor has open goes to the editor as a ``RenameFile``
        (its tabs follow, unsaved typing with them), when it can; else to the disk."""
        opened = self.open_under(move.source)
        over = self.open_under(move.destination) if move.replaced is not None else []
        if not opened and not over:
            return await self.inner.move(move)
        unsaved = [p for p in opened if self._unsaved(p)]
        for p in over:
            if self._unsaved(p):
                raise unsaved_typing(p, f"the move would replace it with {move.source}")
        if not self.supports_rename():
            if unsaved:
                raise unsaved_typing(
                    unsaved[0],
                    "the editor cannot move an open document (its client does not take "
                    "RenameFile), so its typing would stay behind under the old name",
                )
            applied = await self.inner.move(move)
            names = ", ".join(opened[:5] + over[:5])
            return dataclasses.replace(
                applied,
                note=(
                    f"{names} {'is' if len(opened) + len(over) == 1 else 'are'} open in the "
                    "editor, which cannot follow a move (its client does not take "
                    "RenameFile): the file was moved on disk, and the editor still shows it "
                    f"under its old name. Ask the user to close it there and open "
                    f"{move.destination}."
                ),
            )
        if unsaved and not self.rename_keeps_unsaved():
            raise unsaved_typing(
                unsaved[0],
                "this editor does not say that a move (a RenameFile) keeps the typing "
                "unsaved (some save it first), so moving it could save the typing behind "
                "the user's back",
            )
        for p in opened + over:
            if p not in unsaved:
                self._check_clean(p, "moved")
        return await self._rename_in_editor(move, opened, over, unsaved)

    def _unsaved(self, path: str) -> bool:
        snap = self.current(path)
        return snap is not None and bool(snap.unsaved)

    def _check_clean(self, path: str, what: str) -> None:
        """Refuse (``stale``) when the disk no longer holds what the clean buffer shows
        (changed behind the editor): the editor's part would not be what was checked."""
        snap = self.current(path)
        if snap is None:
            return
        _, disk_text, _ = self.disk_file(path)
        if disk_text is not None and to_view(disk_text) == snap.view:
            return
        raise ToolError(
            ErrorCode.STALE,
            f"{path} is open in the editor, and the file on disk no longer holds what the "
            f"buffer shows, so nothing was {what}. Ask the user to save or reload the file, "
            "then retry.",
            path=path,
            refreshed=False,
        )

    def _uri(self, path: str) -> str:
        return self.docs.uri_for(path) or pathlib.Path(path).as_uri()

    async def _rename_in_editor(
        self, move: Move, opened: list[str], over: list[str], unsaved: list[str]
    ) -> TreeApplied:
        texts = {p: self.ls.workspace.get_text_document(self._uri(p)).source for p in opened}
        parent = os.path.dirname(move.destination)
        made: tuple[str, ...] = ()
        if not os.path.isdir(parent):  # an editor may not make the folders on the way
            try:
                made = tuple(await asyncio.to_thread(self.inner.make_folders, parent))
            except OSError as exc:
                raise ToolError(
                    ErrorCode.IO_ERROR,
                    f"Could not make the folders on the way to {move.destination}: "
                    f"{exc.strerror or exc}. Nothing was moved.",
                    path=move.source,
                ) from exc
        ops: list[types.DeleteFile | types.RenameFile] = []
        if over:  # the open document a move replaces is closed (history kept it)
            ops.append(
                types.DeleteFile(
                    uri=self._uri(move.destination),
                    options=types.DeleteFileOptions(ignore_if_not_exists=True),
                )
            )
        ops.append(
            types.RenameFile(
                old_uri=self._uri(move.source),
                new_uri=pathlib.Path(move.destination).as_uri(),
                # a file the move replaces that is not open is replaced by the editor
                options=types.RenameFileOptions(
                    overwrite=move.replaced is not None and not over, ignore_if_exists=False
                ),
            )
        )
        gone = [move.source, *(p for p in opened if p != move.source), *over]
        for p in gone:
            self.own.deleting(p)
        label = f"Agent {move.tool}: {os.path.basename(move.source)}"
        applied, reason = await self._ask_for_tree_change(
            types.ApplyWorkspaceEditParams(
                edit=types.WorkspaceEdit(document_changes=ops), label=label
            )
        )
        moved = not os.path.lexists(move.source) and os.path.lexists(move.destination)
        if not applied or not moved:
            for p in gone:
                self.own.not_deleted(p)
            if moved or not os.path.lexists(move.source):
                # the editor did (part of) it and said otherwise: say what is where
                raise ToolError(
                    ErrorCode.EDIT_REJECTED,
                    f"The editor answered the move of {move.source} to {move.destination} "
                    f"as {'applied' if applied else 'not applied'} ({reason or 'no reason'}), "
                    f"but {move.source} "
                    f"{'is gone' if not os.path.lexists(move.source) else 'is still there'} and "
                    f"{move.destination} "
                    f"{'exists' if os.path.lexists(move.destination) else 'does not'}. Look at "
                    "both (list them), and ask the user.",
                    path=move.source,
                    reason=reason or "unconfirmed",
                )
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor did not move {move.source} to {move.destination} "
                f"({reason or 'no reason given'}). Nothing was moved.",
                path=move.source,
                reason=reason,
            )
        for p in opened:
            new = move.destination + p[len(move.source) :]
            self.own.arrived(new)
        self.disk.remove_empty(move.cleanup)
        return TreeApplied(
            via="workspaceEdit", note=await self._followed(move, opened, texts, unsaved), made=made
        )

    async def _followed(
        self, move: Move, opened: list[str], texts: dict[str, str], unsaved: list[str]
    ) -> str:
        """Wait (a moment) for the editor to report the open documents under their new
        names; a sentence on those it did not, or whose typing did not follow."""
        missing: list[str] = []
        lost: list[str] = []
        for p in opened:
            new = move.destination + p[len(move.source) :]
            if not await self.docs.wait_open(new, CHANGE_WAIT_S):
                missing.append(new)
                continue
            if p in unsaved:
                uri = self.docs.uri_for(new)
                now = self.ls.workspace.get_text_document(uri).source if uri else None
                if now != texts[p]:
                    lost.append(new)
        parts: list[str] = []
        if missing:
            parts.append(
                f"The editor has not reported {', '.join(missing[:5])} open under the new "
                "name yet; it may have closed the tab."
            )
        if lost:
            parts.append(
                f"The editor's buffer of {', '.join(lost[:5])} does not hold the unsaved "
                "typing it had before the move: ask the user to check it."
            )
        return " ".join(parts)

    async def remove(self, removal: Removal) -> TreeApplied:
        """A deletion of a document the editor has open closes it through a ``DeleteFile``
        (only a clean one: unsaved typing is refused); the rest goes to the disk."""
        opened = self.open_under(removal.path)
        if not opened:
            return await self.inner.remove(removal)
        for p in opened:
            if self._unsaved(p):
                raise unsaved_typing(p, "deleting it would throw that typing away")
        if not self.supports_delete():
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"{opened[0]} is open in the editor, which cannot delete files on request "
                "(its client does not take DeleteFile), so nothing was deleted. Ask the user "
                "to close it, then retry.",
                path=opened[0],
                reason="no DeleteFile",
            )
        for p in opened:
            self._check_clean(p, "deleted")
        kept = {f.path: f for f in removal.files}
        for p in opened:
            self.own.deleting(p)
        edit = types.WorkspaceEdit(
            document_changes=[
                types.DeleteFile(
                    uri=self._uri(p), options=types.DeleteFileOptions(ignore_if_not_exists=True)
                )
                for p in opened
            ]
        )
        applied, reason = await self._ask_for_tree_change(
            types.ApplyWorkspaceEditParams(edit=edit, label=f"Agent {removal.tool}: delete")
        )
        if not applied:
            for p in opened:
                self.own.not_deleted(p)
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor did not close and delete {', '.join(opened[:5])} "
                f"({reason or 'no reason given'}). Nothing was deleted.",
                path=opened[0],
                reason=reason,
            )
        rest = dataclasses.replace(
            removal, files=tuple(f for f in removal.files if f.path not in set(opened))
        )
        try:
            applied_rest = await self.inner.remove(rest)
        except ToolError:
            # The editor deleted its documents already: they are made again from history.
            back = tuple(kept[p] for p in opened if p in kept)
            if removal.load is not None and back:
                restoration = Restoration(
                    removal.path,
                    removal.folder,
                    back,
                    (),
                    removal.tool,
                    removal.session,
                    removal.load,
                )
                await self.inner.restore(restoration)
            raise
        return dataclasses.replace(applied_rest, via="workspaceEdit")

    async def delete(self, path: str, before: Snapshot, *, tool: str, session: str) -> Applied:
        """Delete a file: a ``DeleteFile`` WorkspaceEdit when the editor has it open (and
        supports that), else through the disk layer. Steadyhand's own deletions are not
        reported."""
        uri = self.docs.uri_for(path)
        gone = Snapshot(path, "disk", "", before.encoding, "", 0, 0)
        if uri is not None:
            if not self.supports_delete():
                raise ToolError(
                    ErrorCode.EDIT_REJECTED,
                    f"{path} is open in the editor, which cannot delete files on request, so it "
                    "was left as it is. Ask the user to close it, then retry.",
                    path=path,
                )
            self._check_deletable(path, before)
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.DeleteFile(
                        uri=uri, options=types.DeleteFileOptions(ignore_if_not_exists=True)
                    )
                ]
            )
            self.own.deleting(path)
            try:
                applied, reason = await self._ask_to_apply(
                    types.ApplyWorkspaceEditParams(edit=edit, label=f"Agent {tool}: delete")
                )
            except MalformedAnswer as exc:
                self.own.not_deleted(path)
                raise ToolError(
                    ErrorCode.EDIT_REJECTED,
                    f"The editor's answer to deleting {path} could not be read ({exc}), so it "
                    "counts as not deleted. Check the file, and retry once the editor answers "
                    "as LSP says.",
                    path=path,
                    reason=f"malformed answer: {exc}",
                ) from exc
            except BaseException:
                self.own.not_deleted(path)
                raise
            if not applied:
                self.own.not_deleted(path)
                raise ToolError(
                    ErrorCode.EDIT_REJECTED,
                    f"The editor did not delete {path} ({reason or 'no reason given'}"
                    "). It is as it was.",
                    path=path,
                    reason=reason,
                )
            return Applied(via="workspaceEdit", snapshot=gone, on_disk=True)
        return await self.inner.delete(path, before, tool=tool, session=session)

    def _check_deletable(self, path: str, before: Snapshot) -> None:
        """Refuse (``stale``) to delete an open document unless its buffer and the disk
        both hold the text ``before`` has (the one kept in history): unsaved typing, or a
        file changed on disk behind a clean buffer, would be lost with it."""
        if before.source == "buffer" and before.unsaved:
            why = "its buffer has unsaved changes"
        else:
            _, disk_text, _ = self.disk_file(path)
            if disk_text is None or to_view(disk_text) == before.view:
                return
            why = "the file on disk no longer holds what the buffer shows"
        raise ToolError(
            ErrorCode.STALE,
            f"{path} is open in the editor and {why}, so it was not deleted: that text is "
            "not all kept in history and would be lost. Ask the user to save or close the "
            "file, then read it again and retry.",
            path=path,
            refreshed=False,
        )

    # -- open documents --------------------------------------------------------------

    def _text_edits(
        self, before: Snapshot, change: Change
    ) -> list[types.TextEdit | types.AnnotatedTextEdit]:
        idx = PositionIndex(before.raw, self.position_encoding())
        if change.splices is not None:
            raw = raw_splices(
                before.newline_map,
                change.splices,
                before.endings.dominant,
                mixed_view=mixed_view(before),
                raw=before.raw,
            )
        else:
            raw = line_splices(before.raw, change.new_raw)
        edits: list[types.TextEdit | types.AnnotatedTextEdit] = []
        cores = [changed_core(before.raw, sp) for sp in raw]
        # One WorkspaceEdit carries at most MAX_TEXT_EDITS edits: neighbours are merged.
        for sp in coalesce(before.raw, cores, MAX_TEXT_EDITS):
            start, end = idx.position(sp.start), idx.position(sp.end)
            rng = types.Range(
                start=types.Position(line=start[0], character=start[1]),
                end=types.Position(line=end[0], character=end[1]),
            )
            if self.supports_annotations():
                edits.append(
                    types.AnnotatedTextEdit(
                        range=rng, new_text=sp.text, annotation_id=ANNOTATION_ID
                    )
                )
            else:
                edits.append(types.TextEdit(range=rng, new_text=sp.text))
        return edits

    def _workspace_edit(self, uri: str, before: Snapshot, change: Change) -> types.WorkspaceEdit:
        edits = self._text_edits(before, change)
        if not self.supports_document_changes():
            plain = [types.TextEdit(range=e.range, new_text=e.new_text) for e in edits]
            return types.WorkspaceEdit(changes={uri: plain})
        doc_edit = types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=uri, version=before.version
            ),
            edits=edits,
        )
        annotations = None
        if self.supports_annotations():
            annotations = {
                ANNOTATION_ID: types.ChangeAnnotation(
                    label=f"Agent {change.tool}",
                    needs_confirmation=self.settings.confirm_edits,
                    description="A change made by an AI agent through Steadyhand",
                )
            }
        return types.WorkspaceEdit(document_changes=[doc_edit], change_annotations=annotations)

    async def _ask_to_apply(
        self, params: types.ApplyWorkspaceEditParams
    ) -> tuple[bool, str | None]:
        """Send ``workspace/applyEdit``; ``(applied, failure reason)`` from the answer, read
        strictly (:func:`apply_edit_answer`: MalformedAnswer for any other shape)."""
        answer = await self.ls.protocol.send_request_async(types.WORKSPACE_APPLY_EDIT, params)
        return apply_edit_answer(answer)

    async def _ask_for_tree_change(
        self, params: types.ApplyWorkspaceEditParams
    ) -> tuple[bool, str | None]:
        """:meth:`_ask_to_apply` for a move or a deletion, whose callers look at the disk
        afterwards whatever the editor said: an answer that cannot be read, or a request
        that failed, is ``(False, why)``."""
        try:
            return await self._ask_to_apply(params)
        except MalformedAnswer as exc:
            return False, f"malformed answer: {exc}"
        except Exception as exc:
            return False, str(exc) or type(exc).__name__

    async def _apply_to_buffer(self, uri: str, change: Change, before: Snapshot) -> Applied:
        edit = self._workspace_edit(uri, before, change)
        label = f"Agent {change.tool}: {os.path.basename(change.path)}"
        wait = None if self.settings.confirm_edits else self.settings.apply_edit_timeout_ms / 1000
        try:
            applied, failure_reason = await asyncio.wait_for(
                self._ask_to_apply(types.ApplyWorkspaceEditParams(edit=edit, label=label)), wait
            )
        except MalformedAnswer as exc:
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor's answer to the change to {change.path} could not be read "
                f"({exc}), so it counts as not applied and nothing was saved. Read the file "
                "again before you retry: the editor may still show the change.",
                path=change.path,
                reason=f"malformed answer: {exc}",
            ) from exc
        except TimeoutError as exc:
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor did not answer the change to {change.path} within {wait:g} s, so "
                "Steadyhand stopped waiting and counts it as not applied; the editor may "
                "still apply it. Read the file again before you retry.",
                path=change.path,
                reason="no answer from the editor",
            ) from exc
        except Exception as exc:
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor refused the change to {change.path} ({exc}). Nothing was "
                "changed. Read the file again and retry.",
                path=change.path,
                reason=str(exc) or type(exc).__name__,
            ) from exc
        if not applied:
            reason = failure_reason or "no reason given; usually the buffer changed"
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor did not apply the change to {change.path} ({reason}). Nothing "
                "was changed. Read the file again (the user may be typing in it) and retry.",
                path=change.path,
                reason=failure_reason,
            )
        # The editor's didChange may already be here (sent before its answer).
        confirmed = self.ls.workspace.get_text_document(uri).source == change.new_raw
        if not confirmed:
            confirmed = await self.docs.wait_for(uri, lambda t: t == change.new_raw, CHANGE_WAIT_S)
        doc = self.ls.workspace.get_text_document(uri)
        text: str = doc.source
        version = doc.version if text == change.new_raw else None
        if not confirmed and doc.version != before.version:
            # "Applied", yet the buffer moved to some other text: the user typed at that
            # moment, and an editor that skips a stale versioned edit (or applies an
            # unversioned one at shifted positions) still answers applied=true.
            raise ToolError(
                ErrorCode.EDIT_REJECTED,
                f"The editor reported the change to {change.path} as applied, but its buffer "
                "changed at the same moment and does not show the change (the user may be "
                "typing). Nothing was saved to disk. Read the file again to see what the "
                "buffer holds now, then retry if the change is missing.",
                path=change.path,
                reason="unconfirmed",
            )
        if text != change.new_raw:
            text = change.new_raw  # the editor's didChange has not arrived yet
        return await self._disk_follows(uri, change, before, text, version, seen=confirmed)

    async def _disk_follows(
        self,
        uri: str,
        change: Change,
        before: Snapshot,
        text: str,
        version: int | None,
        *,
        seen: bool = True,
    ) -> Applied:
        """Save (or not) the buffer the change was applied to, per ``saveAfterEdit``;
        ``seen``: the buffer was seen holding the change (not only reported applied)."""
        mode = self.settings.save_after_edit
        had_unsaved = bool(before.unsaved)
        if mode == "never":
            return self._left_unsaved(change.path, text, version, "saveAfterEdit is set to never")
        found, disk_text, enc = self.disk_file(change.path)
        # The disk changed (or went) since the buffer last matched it: behind a buffer
        # with unsaved changes, or, for a clean one, while the change was being made.
        # Writing the buffer now would lose the other program's bytes, whatever the mode
        # and however the save is done.
        moved = self.disk_moved(change.path, found)
        if moved is not None:
            if had_unsaved:
                why = _BEHIND[moved]
            else:
                why = _DISK_CHANGED if moved == "changed" else _DISK_DELETED
            return self._not_saved(change.path, text, version, why)
        if mode == "whenClean" and had_unsaved:
            typed = self.typed_since_match(change.path, before)
            why = _UNSAVED_UNKNOWN if typed is None else _UNSAVED_TYPING
            return self._left_unsaved(change.path, text, version, why)
        if self.supports_save_request():
            return await self._save_via_client(uri, change, text, version, seen=seen)
        # The client cannot save on request: write the exact buffer text ourselves (in the
        # file's own line endings and encoding), and only over the file as the change
        # found it.
        expect = content_hash(found) if found is not None else None
        # a clean buffer matched the disk when the change was made: it must still
        if (
            found is not None
            and not had_unsaved
            and (disk_text is None or to_view(disk_text) != before.view)
        ):
            return self._not_saved(change.path, text, version, _DISK_CHANGED)
        raw, enc, data = self._disk_bytes(text, before, change, disk_text, enc)
        digest = content_hash(data)
        try:
            self.disk.write(change.path, data, expect=expect, digest=digest)
        except ToolError as err:
            failed = write_failure(err)
            if failed is None:  # written by someone else in the meantime
                return self._not_saved(change.path, text, version, _DISK_CHANGED)
            return self._not_saved(
                change.path, text, version, f"writing it to disk failed ({failed})"
            )
        self.matched[change.path] = (digest, text_hash(to_view(text)))
        snap = self._snapshot(change.path, text, version, unsaved=False)
        note = "Saved to disk."
        if raw != text:
            note = (
                "Saved to disk, in the file's own line endings (the editor's buffer shows "
                "them normalised)."
            )
        return Applied(via="workspaceEdit", snapshot=snap, on_disk=True, note=note)

    async def _save_via_client(
        self, uri: str, change: Change, text: str, version: int | None, *, seen: bool = True
    ) -> Applied:
        doc = self.ls.workspace.get_text_document(uri)
        if seen and doc.source != text:
            # The buffer moved on since it was seen holding the change: the user is
            # typing. A save now would write their typing; it stays theirs to save.
            return self._not_saved(change.path, text, version, _TYPED_SINCE)
        params: dict[str, Any] = {"uris": [uri]}
        if version is not None:  # the client saves nothing newer than this version
            params["versions"] = {uri: version}
        try:
            answer = await asyncio.wait_for(
                self.ls.protocol.send_request_async(SAVE_DOCUMENTS, params), 10.0
            )
        except MalformedAnswer as exc:
            return self._not_saved(change.path, text, version, _malformed_save(exc))
        except Exception as exc:
            return self._not_saved(change.path, text, version, f"saving it failed ({exc})")
        try:
            refused = save_refusal(answer, uri)
        except MalformedAnswer as exc:
            return self._not_saved(change.path, text, version, _malformed_save(exc))
        if refused is not None:
            return self._not_saved(
                change.path, text, version, f"the editor did not save it ({refused})"
            )
        # A formatter may run on save: give it a moment, then take what the buffer holds.
        await asyncio.sleep(FORMAT_SETTLE_S)
        doc = self.ls.workspace.get_text_document(uri)
        now: str = doc.source
        data, disk_text, _ = self.disk_file(change.path)
        saved = disk_text is not None and to_view(disk_text) == to_view(now)
        if saved:
            self.note_disk(change.path, now, data, disk_text)
        note = "Saved to disk."
        if not saved and (now == text or now == change.new_raw):
            # The editor answered, yet the disk does not hold the buffer's text.
            return self._not_saved(
                change.path,
                text,
                version,
                "the editor answered the save request without saving it (the file on disk "
                f"does not hold the buffer's text; its answer: {_answer_text(answer)}). Ask "
                "the user to save the file in the editor",
            )
        if now != text and now != change.new_raw:
            if not saved:
                # Not what was saved, so no formatter: typing since the save. The agent's
                # view stays the text it made; its next edit sees the rest as stale.
                snap = self._snapshot(change.path, text, version, unsaved=True)
                return Applied(
                    via="workspaceEdit",
                    snapshot=snap,
                    on_disk=disk_text is not None and to_view(disk_text) == to_view(text),
                    note="Saved to disk; the buffer has changed again since (the user may be "
                    "typing), and those changes are the user's to save.",
                )
            ds = stat(whole_diff(to_view(text), to_view(now), name=change.path))
            note = (
                f"Saved to disk; the editor's format-on-save then changed the text "
                f"(+{ds.added} / -{ds.removed} lines). Your view is updated to the formatted "
                "text, so the next edit will not be refused as stale."
            )
        snap = self._snapshot(change.path, now, doc.version, unsaved=not saved)
        return Applied(via="workspaceEdit", snapshot=snap, on_disk=saved, note=note)

    def _left_unsaved(self, path: str, text: str, version: int | None, why: str) -> Applied:
        """The change is in the buffer, which is not saved by rule (``why``)."""
        snap = self._snapshot(path, text, version, unsaved=True)
        return Applied(
            via="workspaceEdit",
            snapshot=snap,
            on_disk=False,
            note=f"The change is in the editor's open buffer but not saved to disk, because {why}.",
        )

    def _not_saved(self, path: str, text: str, version: int | None, why: str) -> Applied:
        snap = self._snapshot(path, text, version, unsaved=True)
        return Applied(
            via="workspaceEdit",
            snapshot=snap,
            on_disk=False,
            note=f"The change is in the editor's buffer, but {why}; Steadyhand left the file "
            "on disk as it was.",
        )

    def _snapshot(self, path: str, text: str, version: int | None, *, unsaved: bool) -> Snapshot:
        try:
            st: os.stat_result | None = os.stat(path)
        except OSError:
            st = None
        return from_text(path, text, st, version, unsaved)
