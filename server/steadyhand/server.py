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
from urllib.parse import unquote, urlparse

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from steadyhand import __version__
from steadyhand.apply.disk import DiskWorld
from steadyhand.config import Settings, settings_from
from steadyhand.fs.syscalls import from_environment
from steadyhand.paths.resolve import Roots
from steadyhand.protocol import commands
from steadyhand.protocol.errors import ErrorCode, ToolError
from steadyhand.protocol.params import (
    CloseParams,
    EditParams,
    ForkParams,
    ParamsError,
    PingParams,
    ReadParams,
    WriteParams,
    parse_arguments,
)
from steadyhand.protocol.results import Result, failure, success
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import sessions as session_tools
from steadyhand.tools import write as write_tool
from steadyhand.tools.context import ToolContext

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
        )
        settings = Settings()
        syscalls = from_environment()
        self.ctx = ToolContext(
            settings=settings,
            roots=Roots((), settings.allowed_paths, settings.deny_globs),
            sessions=SessionRegistry(settings.max_tracked_files),
            store=ContentStore(settings.content_store_bytes, settings.content_store_max_file_bytes),
            syscalls=syscalls,
            world=DiskWorld(syscalls, settings.fsync),
        )
        self.edits = 0

    # -- settings and folders -------------------------------------------------------

    def workspace_paths(self) -> list[str]:
        folders = [uri_to_path(f.uri) for f in self.workspace.folders.values()]
        if not folders and self.workspace.root_path:
            folders = [self.workspace.root_path]
        return folders

    def apply_settings(self, settings: Settings) -> None:
        ctx = self.ctx
        ctx.settings = settings
        ctx.roots = Roots.of(self.workspace_paths(), settings.allowed_paths, settings.deny_globs)
        ctx.store.resize(settings.content_store_bytes, settings.content_store_max_file_bytes)
        ctx.sessions.max_files = settings.max_tracked_files
        world = ctx.world
        if isinstance(world, DiskWorld):
            world.fsync = settings.fsync
        log.info("settings: %s; roots: %s", settings, ctx.roots.workspace + ctx.roots.allowed)


server = None  # replaced by create_server(); kept for type checkers


async def _run(
    ls: SteadyhandServer,
    cls: type[P],
    args: tuple[Any, ...],
    tool: Callable[[ToolContext, P], Awaitable[Result] | Result],
) -> Result:
    try:
        params = parse_arguments(cls, args)
    except ParamsError as exc:
        raise JsonRpcInvalidParams(
            message=f"Invalid params: {exc}", data={"field": exc.field_name}
        ) from exc
    try:
        out = tool(ls.ctx, params)
        result = await out if isinstance(out, Awaitable) else out
    except ToolError as err:
        path = getattr(params, "file_path", None)
        result = failure(err, path if isinstance(path, str) else None)
    except Exception as exc:  # a bug must still answer, never crash the server
        log.exception("command failed")
        internal = ToolError(
            ErrorCode.IO_ERROR,
            f"Steadyhand failed unexpectedly ({type(exc).__name__}: {exc}). Retry once; if "
            "it fails again, tell the user.",
        )
        result = failure(internal)
    return result


def create_server() -> SteadyhandServer:
    ls = SteadyhandServer()

    @ls.feature(types.INITIALIZE)
    def on_initialize(ls: SteadyhandServer, params: types.InitializeParams) -> None:
        ls.apply_settings(settings_from(params.initialization_options))

    @ls.feature(types.INITIALIZED)
    def on_initialized(ls: SteadyhandServer, params: types.InitializedParams) -> None:
        log.info("steadyhand %s ready (pid %d)", __version__, os.getpid())

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

    @ls.command(commands.READ)
    async def read(ls: SteadyhandServer, *args: Any) -> Result:
        return await _run(ls, ReadParams, args, read_tool.read)

    @ls.command(commands.EDIT)
    async def edit(ls: SteadyhandServer, *args: Any) -> Result:
        return await _run(ls, EditParams, args, edit_tool.edit)

    @ls.command(commands.WRITE)
    async def write(ls: SteadyhandServer, *args: Any) -> Result:
        return await _run(ls, WriteParams, args, write_tool.write)

    @ls.command(commands.SESSION_FORK)
    async def fork(ls: SteadyhandServer, *args: Any) -> Result:
        return await _run(ls, ForkParams, args, session_tools.fork)

    @ls.command(commands.SESSION_CLOSE)
    async def close(ls: SteadyhandServer, *args: Any) -> Result:
        return await _run(ls, CloseParams, args, session_tools.close)

    @ls.command(commands.PING)
    async def ping(ls: SteadyhandServer, *args: Any) -> Result:
        return await _run(ls, PingParams, args, lambda ctx, p: success("pong", version=__version__))

    return ls
