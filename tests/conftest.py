"""Shared fixtures: a real Steadyhand server over stdio, driven by pytest-lsp's client.

``client`` is initialized with one workspace folder (``workspace``, a fresh temp dir).
``call(client, READ, file_path=...)`` runs a command (named by ``steadyhand.protocol.commands``)
and returns its result.
``editor_client`` behaves like an editor: it advertises documentChanges, answers
``workspace/applyEdit`` by applying the edit to its open documents (refusing on a version
mismatch) and sends ``didChange``, and can answer ``steadyhand/saveDocuments``.

Which tests are slow is decided here (``pytest_collection_modifyitems``): every test under
``SLOW_FOLDERS`` (real editors, code-server, the torture suite), and any test marked
``@pytest.mark.slow`` (one that takes more than about 2 s). ``make check`` runs the rest;
a test that is not marked and takes longer is named at the end of the run. Tests that share
a module-scoped fixture run on one pytest-xdist worker (``xdist_group``), and the slow ones
are started first, the code-server test before all, so that the workers end together.
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
from _pytest.terminal import TerminalReporter
from hypothesis import settings
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

# Hypothesis's per-example deadline measures the machine, not the code: a parallel run on
# a busy machine blows it at random. Properties are judged on what they assert; speed has
# its own benchmarks (bench/).
settings.register_profile("steadyhand", deadline=None)
settings.load_profile("steadyhand")

SERVER = [sys.executable, "-m", "steadyhand", "serve", "--log-level", "WARNING"]
TESTS = Path(__file__).resolve().parent

#: Folders whose every test is slow (``-m "not slow"`` leaves them out).
SLOW_FOLDERS = ("e2e/real_clients", "e2e/vscode", "torture")
#: Started before every other test: the slowest by far (installs code-server on first use).
FIRST_FOLDERS = ("e2e/vscode",)
#: A test not marked slow that takes longer than this is named at the end of the run.
SLOW_SECONDS = 2.0

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


def _skip_on_emulated_macos(items: list[pytest.Item]) -> None:
    """The tests marked ``linux_kernel`` are skipped, with the reason, on the emulated macOS
    (called from ``pytest_collection_modifyitems`` below)."""
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


# -- Which tests are slow, which share a worker, which start first -----------------------


def _under(item: pytest.Item, folders: tuple[str, ...]) -> bool:
    try:
        rel = item.path.relative_to(TESTS).as_posix()
    except ValueError:
        return False
    return any(rel.startswith(folder + "/") for folder in folders)


def _shared_fixture_module(item: pytest.Item) -> str | None:
    """The module of the first module-scoped fixture of the tests' own that ``item`` uses:
    the tests using it must run on one worker, or each worker sets it up again."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    for name in info.names_closure:
        for fixturedef in info.name2fixturedefs.get(name, ()):
            if fixturedef.scope in ("module", "package") and fixturedef.baseid.startswith("tests/"):
                return fixturedef.baseid.split("::")[0]
    return None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    _skip_on_emulated_macos(items)
    for item in items:
        if _under(item, SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
        module = _shared_fixture_module(item)
        if module is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(module))

    def rank(item: pytest.Item) -> int:
        if _under(item, FIRST_FOLDERS):
            return 0
        return 1 if item.get_closest_marker("slow") else 2

    items.sort(key=rank)  # stable: the order within each rank is the collection order


_UNGROUPED = pytest.StashKey[bool]()


def pytest_collection_finish(session: pytest.Session) -> None:
    """On a pytest-xdist worker under ``--dist loadgroup``, a test of a group must carry its
    group in its node id, or it runs on any worker (a module-scoped fixture set up on each:
    the code-server scenario four times over). Such a test fails at once instead."""
    if getattr(session.config.option, "loadgroup", False):
        for item in session.items:
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
                item.stash[_UNGROUPED] = True


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.stash.get(_UNGROUPED, False):
        pytest.fail(
            "pytest-xdist did not keep this test with its group (--dist loadgroup): this "
            "pytest and pytest-xdist do not work together; install the versions "
            "pyproject.toml names (make venv)",
            pytrace=False,
        )


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    """Name the tests that took longer than ``SLOW_SECONDS`` and are not marked slow."""
    took: dict[str, float] = {}
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport) and "slow" not in report.keywords:
                took[report.nodeid] = took.get(report.nodeid, 0.0) + report.duration
    unmarked = sorted(((t, n) for n, t in took.items() if t > SLOW_SECONDS), reverse=True)
    if unmarked:
        terminalreporter.section(f"not marked slow, and over {SLOW_SECONDS:g} s")
        for t, nodeid in unmarked:
            terminalreporter.write_line(f"{t:6.2f}s {nodeid}")
