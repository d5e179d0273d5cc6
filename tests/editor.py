"""An editor-like LSP client for tests: it opens documents, types in them, and applies
``workspace/applyEdit`` the way an editor does — refusing a versioned edit whose version
is not the buffer's, otherwise applying it, bumping the version and sending didChange.
It can also answer ``steadyhand/saveDocuments`` by writing buffers to disk (optionally
running a "formatter" first, to imitate format-on-save).

Resource operations are applied as VS Code applies them: a ``DeleteFile`` deletes the
file on disk and closes its buffer; a ``RenameFile`` renames the file or folder on disk
at once and the open buffers under it follow, their unsaved typing with them (didClose
of the old name, didOpen of the new one with the buffer's text, still unsaved).
``rename_saves`` imitates Neovim instead: the buffer is saved before the file is moved."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.documents.open_docs import uri_to_path
from steadyhand.documents.positions import PositionIndex
from steadyhand.protocol.commands import FILE_CHANGED, SAVE_DOCUMENTS


@dataclass
class Buffer:
    text: str
    version: int
    saved_text: str


@dataclass
class EditorState:
    buffers: dict[str, Buffer] = field(default_factory=dict)
    applied: list[types.ApplyWorkspaceEditParams] = field(default_factory=list)
    refused: int = 0
    saves: list[list[str]] = field(default_factory=list)
    formatter: Callable[[str], str] | None = None
    #: Text the user types just as a save request arrives (before it is handled).
    typed_on_save: str | None = None
    #: Text the user types right after the editor confirms an agent's edit.
    typed_after_edit: str | None = None
    #: With ``typed_after_edit``: the editor holds its report back this many seconds and
    #: then sends one, holding the edit and the typing (as VS Code's client does while the
    #: user keeps typing); None: it reports the edit, then the typing.
    held_report_s: float | None = None
    #: Run while an edit is being applied (another program writing the file, say).
    during_edit: Callable[[], None] | None = None
    position_encoding: str = "utf-16"
    #: Each buffer's version right after the last agent edit was applied to it.
    edited_version: dict[str, int] = field(default_factory=dict)
    notifications: list[tuple[str, Any]] = field(default_factory=list)
    #: When set, ``workspace/applyEdit`` is answered with what it returns, as a client
    #: that answers in a shape LSP does not allow, and nothing is applied.
    apply_answer: Callable[[], Any] | None = None
    #: When set, ``steadyhand/saveDocuments`` is answered with what it returns, after the
    #: buffers are saved as usual.
    save_answer: Callable[[], Any] | None = None
    #: A ``RenameFile`` saves the buffer first (as Neovim does), instead of carrying its
    #: unsaved typing to the new name (as VS Code does).
    rename_saves: bool = False


def editor_capabilities(
    *,
    save_request: bool = True,
    document_changes: bool = True,
    encodings: list[str] | None = None,
    delete: bool = False,
    rename: bool = False,
    keeps_unsaved: bool = False,
) -> types.ClientCapabilities:
    general = None
    if encodings is not None:
        general = types.GeneralClientCapabilities(
            position_encodings=[types.PositionEncodingKind(e) for e in encodings]
        )
    return types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(
            apply_edit=True,
            workspace_edit=types.WorkspaceEditClientCapabilities(
                document_changes=document_changes,
                change_annotation_support=types.ChangeAnnotationsSupportOptions(
                    groups_on_label=True
                ),
                resource_operations=[
                    *([types.ResourceOperationKind.Delete] if delete else []),
                    *([types.ResourceOperationKind.Rename] if rename else []),
                ]
                or None,
            ),
        ),
        general=general,
        experimental=(
            {"steadyhand": {"saveDocuments": True, "renameKeepsUnsaved": keeps_unsaved}}
            if save_request
            else None
        ),
    )


def _apply_text_edits(text: str, edits: list[Any], encoding: str) -> str:
    idx = PositionIndex(text, encoding)
    spans = []
    for e in edits:
        start = idx.offset(e.range.start.line, e.range.start.character)
        end = idx.offset(e.range.end.line, e.range.end.character)
        spans.append((start, end, e.new_text))
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def install(client: LanguageClient, state: EditorState) -> None:
    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> Any:
        state.applied.append(params)
        if state.apply_answer is not None:
            return state.apply_answer()
        if state.during_edit is not None:
            state.during_edit()
        edit = params.edit
        plan: list[tuple[str, list[Any]]] = []
        for dc in edit.document_changes or []:
            if isinstance(dc, types.DeleteFile):  # the file goes, and its buffer with it
                Path(uri_to_path(dc.uri) or "").unlink(missing_ok=True)
                if state.buffers.pop(dc.uri, None) is not None:
                    client.text_document_did_close(
                        types.DidCloseTextDocumentParams(
                            text_document=types.TextDocumentIdentifier(uri=dc.uri)
                        )
                    )
                continue
            if isinstance(dc, types.RenameFile):
                failed = _rename(client, state, dc)
                if failed is not None:
                    return types.ApplyWorkspaceEditResult(applied=False, failure_reason=failed)
                continue
            if not isinstance(dc, types.TextDocumentEdit):
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="unsupported")
            buf = state.buffers.get(dc.text_document.uri)
            if buf is None:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="not open")
            if dc.text_document.version is not None and dc.text_document.version != buf.version:
                state.refused += 1
                return types.ApplyWorkspaceEditResult(
                    applied=False, failure_reason="document version mismatch"
                )
            plan.append((dc.text_document.uri, list(dc.edits)))
        for uri, edits in (edit.changes or {}).items():
            plan.append((uri, list(edits)))
        for uri, edits in plan:
            buf = state.buffers[uri]
            buf.text = _apply_text_edits(buf.text, edits, state.position_encoding)
            buf.version += 1
            state.edited_version[uri] = buf.version
            typed = state.typed_after_edit
            if typed is None:
                _did_change(client, uri, buf)
                continue
            # The editor answers first and reports the edit a moment later, followed at
            # once by what the user typed.
            edited = Buffer(buf.text, buf.version, buf.saved_text)
            buf.text += typed
            buf.version += 1
            if state.held_report_s is not None:
                held = functools.partial(_did_change, client, uri, buf)
                asyncio.get_running_loop().call_later(state.held_report_s, held)
                continue

            def report(uri: str = uri, edited: Buffer = edited, buf: Buffer = buf) -> None:
                _did_change(client, uri, edited)
                _did_change(client, uri, buf)

            asyncio.get_running_loop().call_later(0.05, report)
        return types.ApplyWorkspaceEditResult(applied=True)

    @client.feature(SAVE_DOCUMENTS)
    async def save_documents(params: Any) -> dict[str, Any]:
        uris = list(params.uris if hasattr(params, "uris") else params["uris"])
        raw_versions = getattr(params, "versions", None)
        if raw_versions is None and isinstance(params, dict):
            raw_versions = params.get("versions")
        if hasattr(raw_versions, "_fields"):  # pygls renames URI keys: their order tells
            versions = dict(zip(uris, raw_versions, strict=False))
        else:
            versions = dict(raw_versions or {})
        state.saves.append(uris)
        saved: list[str] = []
        refused: list[dict[str, Any]] = []
        for uri in uris:
            buf = state.buffers[uri]
            if state.typed_on_save is not None:
                buf.text += state.typed_on_save
                buf.version += 1
                _did_change(client, uri, buf)
            # as VS Code's client does: nothing newer than the version named, or without
            # one, than the version the last agent edit left
            want = versions.get(uri, state.edited_version.get(uri))
            if want is not None and want != buf.version:
                refused.append({"uri": uri, "saved": False, "error": "the document changed"})
                continue
            saved.append(uri)
            if state.formatter is not None:
                formatted = state.formatter(buf.text)
                if formatted != buf.text:
                    buf.text = formatted
                    buf.version += 1
                    _did_change(client, uri, buf)
            Path(uri.removeprefix("file://")).write_bytes(buf.text.encode())
            buf.saved_text = buf.text
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
            )
        if state.save_answer is not None:
            return state.save_answer()
        return {"saved": saved, "results": [*({"uri": u, "saved": True} for u in saved), *refused]}

    @client.feature(FILE_CHANGED)
    def file_changed(params: Any) -> None:
        state.notifications.append((FILE_CHANGED, params))


def _rename(client: LanguageClient, state: EditorState, op: types.RenameFile) -> str | None:
    """Rename a file or folder on disk; the buffers under it follow (their typing too,
    unless ``rename_saves``). A reason when it cannot be done."""
    old = Path(uri_to_path(op.old_uri) or "")
    new = Path(op.new_uri.removeprefix("file://"))
    overwrite = bool(op.options and op.options.overwrite)
    if new.exists() and not overwrite:
        return f"{new} exists"
    moved = [uri for uri in state.buffers if uri == op.old_uri or uri.startswith(op.old_uri + "/")]
    if state.rename_saves:
        for uri in moved:
            buf = state.buffers[uri]
            Path(uri.removeprefix("file://")).write_text(buf.text)
            buf.saved_text = buf.text
    new.parent.mkdir(parents=True, exist_ok=True)
    if overwrite:
        old.replace(new)
    else:
        old.rename(new)
    for uri in moved:
        buf = state.buffers.pop(uri)
        target = op.new_uri + uri[len(op.old_uri) :]
        state.buffers[target] = Buffer(buf.text, 1, buf.saved_text)
        client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=target, language_id="plaintext", version=1, text=buf.text
                )
            )
        )
    return None


def _did_change(client: LanguageClient, uri: str, buf: Buffer) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=buf.version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=buf.text)],
        )
    )


def open_doc(
    client: LanguageClient,
    state: EditorState,
    path: Path,
    text: str | None = None,
    language_id: str = "plaintext",
) -> str:
    uri = path.as_uri()
    raw = path.read_bytes() if path.exists() else b""
    try:
        on_disk = raw.decode()
    except UnicodeDecodeError:  # an editor would guess a single-byte encoding
        on_disk = raw.decode("latin-1")
    content = on_disk if text is None else text
    state.buffers[uri] = Buffer(content, 1, on_disk)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language_id, version=1, text=content
            )
        )
    )
    return uri


def type_text(client: LanguageClient, state: EditorState, uri: str, new_text: str) -> None:
    """The user types: the buffer changes, unsaved."""
    buf = state.buffers[uri]
    buf.text = new_text
    buf.version += 1
    _did_change(client, uri, buf)


def close_doc(client: LanguageClient, state: EditorState, uri: str) -> None:
    state.buffers.pop(uri, None)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


async def settle(seconds: float = 0.1) -> None:
    await asyncio.sleep(seconds)
