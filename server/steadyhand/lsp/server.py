"""The language server: LSP wiring around the tools.

Everything protocol-shaped happens here: settings and workspace folders arrive, commands
are dispatched to the tools, refusals become result objects, and malformed arguments
become JSON-RPC InvalidParams errors. The tools themselves know nothing of LSP.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from steadyhand import __version__
from steadyhand.apply.history import configure as configure_history
from steadyhand.apply.stack import build_world
from steadyhand.config import Settings, settings_from
from steadyhand.documents.open_docs import OpenDocuments
from steadyhand.documents.open_docs import uri_to_path as doc_path
from steadyhand.fs.atomic import start_journal
from steadyhand.lsp.dispatch import CommandLane
from steadyhand.mcp.rendezvous import Rendezvous
from steadyhand.paths.resolve import Roots
from steadyhand.paths.uris import local_path
from steadyhand.protocol.params import ParamsError
from steadyhand.protocol.results import Result, success
from steadyhand.system import describe as _describe
from steadyhand.tools.table import COMMANDS, Command, parse, run
from steadyhand.watch.external import ExternalChanges
from steadyhand.watch.watcher import Watcher

log = logging.getLogger("steadyhand")

P = TypeVar("P")


class SteadyhandServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "steadyhand",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=CommandLane,
        )
        self.docs = OpenDocuments()
        self.watcher: Watcher | None = None
        built = build_world(
            Settings(),
            editor=(self, self.docs),
            on_success=self.ensure_watching,
            status=lambda: success(
                "pong",
                version=__version__,
                watcher=self.watcher_status(),
                platform=self.platform(),
            ),
        )
        self.ctx = built.ctx
        assert built.editor is not None and built.own is not None
        self.editor = built.editor
        self.external = ExternalChanges(
            self.ctx,
            self.editor,
            built.own,
            self.docs,
            buffer_text=lambda uri: self.workspace.get_text_document(uri).source,
            notify=lambda method, params: self.protocol.notify(method, params),
        )
        #: The socket ``steadyhand mcp`` attaches through (rendezvous.py).
        protocol = self.protocol
        assert isinstance(protocol, CommandLane)
        self.rendezvous = Rendezvous(lambda: self.ctx, protocol.notify_fast)

    def flush_pending(self) -> None:
        """Write what is still waiting to be written after an answer (history entries)."""
        if self.ctx.history is not None:
            self.ctx.history.flush()

    # -- watching ---------------------------------------------------------------------

    def ensure_watching(self) -> None:
        """Start watching the roots once a tool did its work (never blocks)."""
        if not self.ctx.settings.watch:
            return
        if self.watcher is None:
            import asyncio

            self.watcher = Watcher(asyncio.get_running_loop(), self.external_change)
        self.watcher.ensure(list(self.ctx.roots.workspace + self.ctx.roots.allowed))

    def platform(self) -> dict[str, Any]:
        """The system and the mechanism of each promise on it (``watch``: the one in
        use, once watching has started)."""
        described = _describe()
        if self.watcher is not None:
            described["watch"] = self.watcher.backend()
        return described

    def watcher_status(self) -> dict[str, Any]:
        """:meth:`Watcher.status`, or "off" / "idle" (nothing tracked yet) without one."""
        if not self.ctx.settings.watch:
            return {"state": "off", "folders": 0}
        if self.watcher is None:
            return {"state": "idle", "folders": 0}
        return self.watcher.status()

    def external_change(self, path: str, kind: str) -> None:
        """A file changed on disk (the watcher, the client's file events)."""
        self.external.changed(path, kind)

    # -- settings and folders -------------------------------------------------------

    def workspace_paths(self) -> list[str]:
        """The local folders of the workspace: its folders, else its root. Every URI is
        decoded by :func:`local_path`, so one naming another host (``file://server/…``)
        is no folder here (pygls's own root path would make ``//server/…`` of it, which
        the system takes as the local ``/server/…``)."""
        folders = [
            path
            for path in (local_path(f.uri) for f in self.workspace.folders.values())
            if path is not None
        ]
        root_uri = self.workspace.root_uri
        if not folders and root_uri:
            root = local_path(root_uri)
            folders = [root] if root is not None else []
        return folders

    def apply_settings(self, settings: Settings) -> None:
        ctx = self.ctx
        ctx.settings = settings
        ctx.roots = Roots.of(
            self.workspace_paths(),
            settings.allowed_paths,
            settings.deny_globs,
            settings.allow_hard_links,
        )
        ctx.store.resize(settings.content_store_bytes, settings.content_store_max_file_bytes)
        ctx.sessions.max_files = settings.max_tracked_files
        ctx.sessions.max_sessions = settings.max_sessions
        configure_history(ctx, list(ctx.roots.workspace + ctx.roots.allowed))
        if self.watcher is not None:
            self.watcher.enabled = settings.watch
        self.rendezvous.update()
        log.info("settings: %s; roots: %s", settings, ctx.roots.workspace + ctx.roots.allowed)


server = None  # replaced by create_server(); kept for type checkers


def _handler(command: Command) -> Callable[..., Awaitable[Result]]:
    """The ``workspace/executeCommand`` handler of ``command``: arguments that do not fit
    are a JSON-RPC InvalidParams error naming the field; everything else is a result."""

    async def handle(ls: SteadyhandServer, *args: Any) -> Result:
        try:
            params = parse(command, args)
        except ParamsError as exc:
            raise JsonRpcInvalidParams(
                message=f"Invalid params: {exc}", data={"field": exc.field_name}
            ) from exc
        return await run(ls.ctx, command, params)

    return handle


def create_server() -> SteadyhandServer:
    ls = SteadyhandServer()

    @ls.feature(types.INITIALIZE)
    def on_initialize(ls: SteadyhandServer, params: types.InitializeParams) -> None:
        start_journal()  # remove temp files a crashed writer left, journal our own
        ls.rendezvous.editor = params.client_info.name if params.client_info else ""
        ls.apply_settings(settings_from(params.initialization_options))

    @ls.feature(types.INITIALIZED)
    async def on_initialized(ls: SteadyhandServer, params: types.InitializedParams) -> None:
        log.info("steadyhand %s ready (pid %d)", __version__, os.getpid())
        ws = ls.client_capabilities.workspace
        dyn = ws.did_change_watched_files if ws is not None else None
        if dyn is not None and dyn.dynamic_registration and ls.ctx.settings.watch:
            options = types.DidChangeWatchedFilesRegistrationOptions(
                watchers=[types.FileSystemWatcher(glob_pattern="**/*")]
            )
            try:
                await ls.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id="steadyhand-watched-files",
                                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=options,
                            )
                        ]
                    )
                )
            except Exception as exc:  # a client that refuses still works without it
                log.info("client did not accept file watching registration: %s", exc)

    @ls.feature(types.SHUTDOWN)
    def on_shutdown(ls: SteadyhandServer, *args: Any) -> None:
        ls.flush_pending()
        ls.rendezvous.close()

    @ls.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def on_open(ls: SteadyhandServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.docs.opened(params.text_document.uri, params.text_document.language_id)
        ls.docs.changed(params.text_document.uri, params.text_document.text)
        path = doc_path(params.text_document.uri)
        if path is not None:
            ls.editor.opened(path, params.text_document.text)

    @ls.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def on_change(ls: SteadyhandServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.docs.changed(uri, ls.workspace.get_text_document(uri).source)

    @ls.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def on_close(ls: SteadyhandServer, params: types.DidCloseTextDocumentParams) -> None:
        path = ls.docs.closed(params.text_document.uri)
        if path is not None and ls.docs.uri_for(path) is None:
            ls.editor.closed(path)

    @ls.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def on_save(ls: SteadyhandServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = doc_path(uri)
        if path is not None and ls.docs.uri_for(path) == uri:  # the disk holds the buffer
            ls.editor.compare_disk(path, ls.workspace.get_text_document(uri).source)

    @ls.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_watched(ls: SteadyhandServer, params: types.DidChangeWatchedFilesParams) -> None:
        kinds = {
            types.FileChangeType.Created: "created",
            types.FileChangeType.Changed: "modified",
            types.FileChangeType.Deleted: "deleted",
        }
        for ev in params.changes:
            path = local_path(ev.uri)
            if path is not None:
                ls.external_change(path, kinds.get(ev.type, "modified"))

    @ls.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_config(ls: SteadyhandServer, params: types.DidChangeConfigurationParams) -> None:
        raw = params.settings
        if isinstance(raw, dict):
            inner = raw.get("steadyhand", raw)
            if isinstance(inner, dict):
                ls.apply_settings(ls.ctx.settings.updated(inner))

    @ls.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def on_folders(ls: SteadyhandServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.apply_settings(ls.ctx.settings)

    for command in COMMANDS.values():
        ls.command(command.name)(_handler(command))

    return ls
