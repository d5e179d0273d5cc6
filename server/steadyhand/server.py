"""The language server: LSP wiring around the tools.

Everything protocol-shaped happens here: settings and workspace folders arrive, commands
are dispatched to the tools, refusals become result objects, and malformed arguments
become JSON-RPC InvalidParams errors. The tools themselves know nothing of LSP.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from steadyhand import __version__
from steadyhand.apply.editor import EditorWorld, disk_file
from steadyhand.config import Settings, settings_from
from steadyhand.dispatch import SteadyhandProtocol
from steadyhand.documents.open_docs import OpenDocuments
from steadyhand.documents.open_docs import uri_to_path as doc_path
from steadyhand.fs.atomic import start_journal
from steadyhand.fs.reader import read_all
from steadyhand.fs.syscalls import from_environment
from steadyhand.guards.world import GuardedWorld
from steadyhand.history.world import HistoryWorld
from steadyhand.history.world import configure as configure_history
from steadyhand.paths.resolve import Roots
from steadyhand.protocol import commands
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import ParamsError
from steadyhand.protocol.results import Result, success
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.state.hashing import content_hash
from steadyhand.tools.context import ToolContext
from steadyhand.tools.table import COMMANDS, Command, parse, run
from steadyhand.watcher import Watcher

log = logging.getLogger("steadyhand")

P = TypeVar("P")


def uri_to_path(uri: str) -> str:
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri


class SteadyhandServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "steadyhand",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Full,
            protocol_cls=SteadyhandProtocol,
        )
        settings = Settings()
        syscalls = from_environment()
        self.docs = OpenDocuments()
        self.editor = EditorWorld(self, self.docs, syscalls, settings)
        self.watcher: Watcher | None = None
        #: folders reported by the watcher, waiting for :meth:`_check_folders`
        self._changed_folders: set[str] = set()
        self.ctx = ToolContext(
            settings=settings,
            roots=Roots((), settings.allowed_paths, settings.deny_globs),
            sessions=SessionRegistry(settings.max_tracked_files),
            store=ContentStore(settings.content_store_bytes, settings.content_store_max_file_bytes),
            syscalls=syscalls,
            world=self.editor,
            on_change=self._changed_by_agent,
            on_success=self.ensure_watching,
            status=lambda: success("pong", version=__version__, watcher=self.watcher_status()),
            language_id=self.docs.language_id,
        )
        # Every change passes the guards, then has the content it replaces kept in history.
        self.ctx.world = GuardedWorld(HistoryWorld(self.ctx.world, self.ctx), self.ctx)
        self.edits = 0

    def flush_pending(self) -> None:
        """Write what is still waiting to be written after an answer (history entries)."""
        if self.ctx.history is not None:
            self.ctx.history.flush()

    def _changed_by_agent(self, path: str, tool: str) -> None:
        self.edits += 1
        self.ensure_watching()

    # -- watching ---------------------------------------------------------------------

    def ensure_watching(self) -> None:
        """Start watching the roots once a tool did its work (never blocks)."""
        if not self.ctx.settings.watch:
            return
        if self.watcher is None:
            import asyncio

            self.watcher = Watcher(asyncio.get_running_loop(), self.external_change)
        self.watcher.ensure(list(self.ctx.roots.workspace + self.ctx.roots.allowed))

    def watcher_status(self) -> dict[str, Any]:
        """:meth:`Watcher.status`, or "off" / "idle" (nothing tracked yet) without one."""
        if not self.ctx.settings.watch:
            return {"state": "off", "folders": 0}
        if self.watcher is None:
            return {"state": "idle", "folders": 0}
        return self.watcher.status()

    def _check_folders(self) -> None:
        """Check every tracked file under the folders reported since the last pass: one
        walk over what is tracked, however many folders a checkout or an install made.
        The walk and the checks run a few milliseconds per turn of the event loop, so
        requests are answered in between (each tool checks its file's hash itself)."""
        folders, self._changed_folders = self._changed_folders, set()
        self._recheck(_tracked_under(sorted(self.ctx.sessions.tracked_paths()), folders))

    def _recheck(self, paths: Iterator[str | None]) -> None:
        stop = time.perf_counter() + RECHECK_SLICE_S
        for path in paths:
            if path is not None:
                self.external_change(path, "modified")
            if time.perf_counter() >= stop:
                asyncio.get_running_loop().call_soon(self._recheck, paths)
                return

    def _as_written(self, path: str) -> bool:
        """Whether ``path`` has exactly the size and time Steadyhand's own write left."""
        written = self.editor.own_stats.get(path)
        if written is None:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return False
        return (st.st_size, st.st_mtime_ns) == written

    def external_change(self, path: str, kind: str) -> None:
        """A file changed on disk, seen by the watcher or the client's file events
        (``kind`` "folder": a folder appeared, went or was renamed; every tracked file
        under it is checked).

        Never reads a large file whole here: above :data:`WATCH_HASH_MAX_BYTES` the notice
        is decided from the file's size and time (every write still hashes the content
        before it replaces anything)."""
        if kind == "folder":  # checked together with the others of the moment
            self._changed_folders.add(path.rstrip("/") or "/")
            if len(self._changed_folders) == 1:
                asyncio.get_running_loop().call_later(FOLDER_SETTLE_S, self._check_folders)
            return
        if self._as_written(path):  # checked first: the watcher's paths are real already
            return
        real = os.path.realpath(path)
        records = self.ctx.sessions.records(real)
        if not records:
            return
        if real != path and self._as_written(real):
            return
        uri = self.docs.uri_for(real)
        if uri is not None:
            self._changed_behind_buffer(real, uri, kind)
            return
        if all(rec.stale for rec in records):
            return  # reported already, and nothing to mark: no need to look at the file
        now, gone, big = _disk_now(real)
        if self.editor.written_by_us(real, now, gone):
            return  # Steadyhand's own write or deletion
        if self.ctx.sessions.mark_changed(real, now, disk_stat=big):
            self._notify_changed(real, kind, gone)

    def _changed_behind_buffer(self, real: str, uri: str, kind: str) -> None:
        """The disk of a file open in the editor changed. The buffer stays the agent's
        view (its records are not marked), but the disk differs from what the buffer was
        last seen to hold: the agent is told once per new disk content, and records of
        the disk's text are marked."""
        _, _, big = _disk_now(real, read=False)
        if big is not None:
            # too large to compare with the buffer here (saving the buffer over it is
            # checked): only the agent's records of the disk's text are judged, by stat
            if self.ctx.sessions.mark_changed(real, None, disk_stat=big, buffers=False):
                self._notify_changed(real, kind, False, open_in_editor=True)
            return
        data, disk_text, _ = disk_file(real)
        gone = data is None and not os.path.lexists(real)
        now = content_hash(data) if data is not None else None
        if self.editor.written_by_us(real, now, gone):
            return
        text: str = self.workspace.get_text_document(uri).source
        if self.editor.note_disk(real, text, data, disk_text):
            return  # the disk holds the buffer's text (the editor saved it)
        base = self.editor.matched.get(real)
        if base is not None and now == base[0]:
            return  # still what the buffer was last seen to match
        if data is None and not gone:
            return  # unreadable for a moment: a write checks it anyway
        if real in self.editor.reported and self.editor.reported[real] == now:
            return  # told already
        self.editor.reported[real] = now
        self.ctx.sessions.mark_changed(real, now, buffers=False)
        self._notify_changed(real, kind, gone, open_in_editor=True)

    def _notify_changed(
        self, real: str, kind: str, gone: bool, *, open_in_editor: bool = False
    ) -> None:
        if gone:
            kind = "deleted"
        elif kind in ("created", "deleted", "moved"):
            # the path holds new content (another program's atomic save: a temp file
            # renamed over it); it was tracked, so it existed before
            kind = "modified"
        params: dict[str, Any] = {"path": real, "kind": kind}
        if open_in_editor:
            params["open"] = True
        log.info("%s changed behind the agent's back (%s)", real, kind)
        self.protocol.notify(commands.FILE_CHANGED, params)

    # -- settings and folders -------------------------------------------------------

    def workspace_paths(self) -> list[str]:
        folders = [uri_to_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
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
        self.editor.settings = settings
        configure_history(ctx, self.workspace_paths())
        if self.watcher is not None:
            self.watcher.enabled = settings.watch
        log.info("settings: %s; roots: %s", settings, ctx.roots.workspace + ctx.roots.allowed)


def _disk_now(path: str, *, read: bool = True) -> tuple[str | None, bool, tuple[int, int] | None]:
    """The hash of ``path``'s bytes (None: gone, unreadable, too large to hash here, or
    not ``read``), whether it is gone, and for a file larger than
    :data:`WATCH_HASH_MAX_BYTES` its (size, mtime_ns) instead of a hash."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None, True, None
    except OSError:
        return None, False, None
    if stat.S_ISREG(st.st_mode) and st.st_size > WATCH_HASH_MAX_BYTES:
        return None, False, (st.st_size, st.st_mtime_ns)
    if not read:
        return None, False, None
    try:
        # never blocks, never follows a link swapped in: a FIFO put there is refused
        return content_hash(read_all(path).data), False, None
    except ToolError as err:
        return None, err.code == ErrorCode.NOT_FOUND, None


def _tracked_under(tracked: Iterable[str], folders: set[str]) -> Iterator[str | None]:
    """The paths of ``tracked`` that lie under one of ``folders``, in order; None now and
    then between them, so the caller can look at the clock during a long walk."""
    for n, path in enumerate(tracked, 1):
        parent = os.path.dirname(path)
        while True:
            if parent in folders:
                yield path
                break
            up = os.path.dirname(parent)
            if up == parent:
                if not n % 256:
                    yield None
                break
            parent = up


#: Largest file the watcher's notice reads and hashes; a larger one is judged by its size
#: and time (the ranged-read threshold is far below this).
WATCH_HASH_MAX_BYTES = 4 << 20

#: Longest stretch of the event loop's time one turn of a folder recheck takes.
RECHECK_SLICE_S = 0.005

#: Seconds to gather folder events (a checkout makes many at once) before checking the
#: tracked files under them.
FOLDER_SETTLE_S = 0.05

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
            path = uri_to_path(ev.uri)
            if path.startswith("/"):
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
