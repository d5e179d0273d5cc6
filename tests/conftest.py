"""Shared fixtures: a real Steadyhand server over stdio, driven by pytest-lsp's client.

``client`` is initialized with one workspace folder (``workspace``, a fresh temp dir).
``call(client, "steadyhand.read", file_path=...)`` runs a command and returns its result.
``editor_client`` behaves like an editor: it advertises documentChanges, answers
``workspace/applyEdit`` by applying the edit to its open documents (refusing on a version
mismatch) and sends ``didChange``, and can answer ``steadyhand/saveDocuments``.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from hypothesis import settings
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

# Hypothesis's per-example deadline measures the machine, not the code: a parallel run on
# a busy machine blows it at random. Properties are judged on what they assert; speed has
# its own benchmarks (bench/).
settings.register_profile("steadyhand", deadline=None)
settings.load_profile("steadyhand")

SERVER = [sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING"]

# Every server the tests start keeps its undo history in a scratch folder, never in the
# user's own state folder (a test may still point ``historyDir`` somewhere else).
_STATE_HOME = tempfile.mkdtemp(prefix="steadyhand-test-state-")
os.environ["XDG_STATE_HOME"] = _STATE_HOME
atexit.register(shutil.rmtree, _STATE_HOME, ignore_errors=True)
# ... and gives a syntax check 10 s instead of 50 ms (``syntax/engine.py``): a result must
# not depend on how busy the machine is (``pytest -n 4`` on two cores); the tests of the
# deadline itself give their server a short one.
os.environ.setdefault("STEADYHAND_SYNTAX_DEADLINE_MS", "10000")
# ... and listens for ``steadyhand mcp`` in a scratch runtime folder: the override that
# keeps tests apart (system/runtime_dir.py; production derives the folder from the user).
_RUNTIME_DIR = tempfile.mkdtemp(prefix="steadyhand-test-run-")
os.environ["STEADYHAND_RUNTIME_DIR"] = _RUNTIME_DIR
atexit.register(shutil.rmtree, _RUNTIME_DIR, ignore_errors=True)


#: The servers run on an emulated macOS (``make test-macos-emulated``).
EMULATED_MACOS = os.environ.get("STEADYHAND_EMULATE") == "macos"


def emulation_env() -> dict[str, str]:
    """The variables that make a process run on the emulated system (empty otherwise).
    They stand for the machine, not for what a host hands its servers, so a test of a
    filtered environment keeps them: on a real Mac every process is on macOS."""
    if not EMULATED_MACOS:
        return {}
    names = [n for n in os.environ if n.startswith("STEADYHAND_EMULATE")] + ["PYTHONPATH"]
    return {n: os.environ[n] for n in names if n in os.environ}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "linux_kernel(reason): judges what only a Linux kernel does; left out of the "
        "emulated macOS run, with the reason",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not EMULATED_MACOS:
        return
    for item in items:
        marker = item.get_closest_marker("linux_kernel")
        if marker is not None:
            why = marker.args[0] if marker.args else "needs a Linux kernel"
            item.add_marker(pytest.mark.skip(reason=f"emulated macOS: {why}"))


def server_config(env: dict[str, str] | None = None) -> ClientServerConfig:
    full = dict(os.environ)
    if env:
        full.update(env)
    return ClientServerConfig(server_command=SERVER, server_env=full)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def init_params(
    workspace: Path,
    options: dict[str, Any] | None = None,
    capabilities: types.ClientCapabilities | None = None,
) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=capabilities or types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        initialization_options=options,
    )


@pytest_lsp.fixture(config=server_config())
async def client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    result = await lsp_client.initialize_session(init_params(workspace))
    lsp_client.init_result = result  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def call(client: LanguageClient, command: str, **params: Any) -> dict[str, Any]:
    """Run a Steadyhand command with one params object; return the result object."""
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=[params])
    )
    assert isinstance(result, dict), result
    return result


async def call_raw(client: LanguageClient, command: str, arguments: list[Any]) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command, arguments=arguments)
    )


def client_with(  # type: ignore[no-untyped-def]
    options: dict[str, Any] | None = None,
    *,
    editor: bool = False,
    env: dict[str, str] | None = None,
):
    """A fixture: a client whose server gets ``options`` (and a history folder of its own
    beside the workspace) and the variables ``env`` added to its environment; with
    ``editor``, the client behaves like an editor (``tests.editor``) and its state is
    ``client.editor``."""

    @pytest_lsp.fixture(config=server_config(env))
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        from tests.editor import EditorState, editor_capabilities, install

        opts = {"historyDir": str(workspace.parent / "state"), **(options or {})}
        caps = None
        if editor:
            state = EditorState()
            install(lsp_client, state)
            lsp_client.editor = state  # type: ignore[attr-defined]
            caps = editor_capabilities()
        await lsp_client.initialize_session(init_params(workspace, opts, caps))
        yield
        await lsp_client.shutdown_session()

    return fixture
