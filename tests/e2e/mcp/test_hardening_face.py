"""The MCP face holds its lines with every client: relative paths resolve against this
side's first root (attached or not), the client's newest roots win however its answers
arrive, a bad or missing roots answer holds up no more than the first calls, the host's
ids never meet this side's own, a session ends without a false alarm, each protocol
revision gets the result shape it knows, and a mistyped setting is named."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from pytest_lsp import LanguageClient

from steadyhand.mcp.rendezvous import MCP_CALL
from tests.conftest import client_with
from tests.e2e.mcp.helpers import SERVER, LspServer, RawMcp, mcp_session, structured

editor = client_with(editor=True)


async def tool(client: Any, name: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(name, arguments))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A runtime folder with no language server in it, and a history of this test's."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {"STEADYHAND_RUNTIME_DIR": str(run), "XDG_STATE_HOME": str(tmp_path / "state")}


def folders(tmp_path: Path, *names: str) -> list[Path]:
    made = []
    for name in names:
        folder = tmp_path / name
        folder.mkdir()
        (folder / "f.txt").write_text(f"in {name}\n")
        made.append(folder)
    return made


# -- relative paths -----------------------------------------------------------------------


async def test_a_relative_path_resolves_against_this_sides_first_root_when_attached(
    tmp_path: Path,
) -> None:
    a, b = folders(tmp_path, "a", "b")
    server = LspServer(a, folders=[a, b])  # the editor's first folder is A
    try:
        async with mcp_session(b, str(b), "--attach", "require") as s:
            assert "Attached to" in (s.initialize_result.instructions or "")  # type: ignore[union-attr]
            made = await tool(s, "write_file", file_path="new.txt", content="made\n")
            assert made["ok"] and made["path"] == str((b / "new.txt").resolve()), made
            read = await tool(s, "read_file", file_path="f.txt")
            assert read["ok"] and "in b" in read["message"], read
            nested = await tool(s, "write_file", file_path="sub/../n2.txt", content="x\n")
            assert nested["path"] == str((b / "n2.txt").resolve()), nested
        assert (b / "new.txt").read_text() == "made\n"
        assert not (a / "new.txt").exists() and not (a / "n2.txt").exists()
        # standalone, the same call lands in the same place
        async with mcp_session(b, str(b), "--attach", "never") as s:
            made = await tool(s, "write_file", file_path="new3.txt", content="made\n")
            assert made["path"] == str((b / "new3.txt").resolve()), made
    finally:
        server.kill()


async def test_the_clients_first_root_chooses_the_editor_server_too(tmp_path: Path) -> None:
    """Started inside an editor's folder A, with a client whose root is B: nothing runs
    against A (the calls run standalone in B)."""
    a, b = folders(tmp_path, "a", "b")
    server = LspServer(a)
    try:
        async with mcp_session(a, roots=[b]) as s:
            made = await tool(s, "write_file", file_path="new.txt", content="made\n")
            assert made["ok"] and made["path"] == str((b / "new.txt").resolve()), made
            assert "does not hold" in made["message"], made  # told it works on its own now
            away = await tool(s, "read_file", file_path=str(a / "f.txt"))
            assert away["error"] == "outside_workspace", away
        assert not (a / "new.txt").exists()
    finally:
        server.kill()


async def test_the_clients_root_held_by_an_editor_attaches_to_it(
    editor: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    seen: list[Any] = []

    @editor.feature(MCP_CALL)
    def mcp_call(params: Any) -> None:
        seen.append(params)

    (workspace / "f.txt").write_text("one\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with mcp_session(elsewhere, roots=[workspace]) as s:
        read = await tool(s, "read_file", file_path="f.txt")
        assert read["ok"] and read["path"] == str((workspace / "f.txt").resolve()), read
    for _ in range(50):
        if seen:
            break
        await asyncio.sleep(0.05)
    assert [c.tool for c in seen] == ["read_file"], seen  # it went through the editor


# -- roots --------------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:The roots capability is deprecated")
async def test_a_late_roots_answer_never_replaces_a_newer_one(
    tmp_path: Path, env: dict[str, str]
) -> None:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    from tests.e2e.mcp.helpers import server_params

    a, b = folders(tmp_path, "a", "b")
    asked = 0
    release = asyncio.Event()

    def listing(*paths: Path) -> types.ListRootsResult:
        return types.ListRootsResult(
            roots=[types.Root(uri=p.resolve().as_uri(), name=p.name) for p in paths]  # type: ignore[arg-type]
        )

    async def roots(context: Any) -> types.ListRootsResult:
        nonlocal asked
        asked += 1
        if asked == 2:  # the user removes A and adds B: this answer is held back
            await release.wait()
            return listing(a)
        if asked >= 3:
            return listing(b)
        return listing(a)

    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server_params(a, env=env), errlog=quiet) as (read, write),
            ClientSession(read, write, list_roots_callback=roots) as s,
        ):
            await s.initialize()
            assert (await tool(s, "read_file", file_path=str(a / "f.txt")))["ok"]
            await s.send_roots_list_changed()
            await s.send_roots_list_changed()
            for _ in range(100):  # the newer answer (B) is in force
                got = await tool(s, "read_file", file_path=str(b / "f.txt"))
                if got["ok"]:
                    break
                await asyncio.sleep(0.05)
            assert got["ok"], got
            release.set()  # now the older answer (A) arrives
            await asyncio.sleep(0.5)
            still = await tool(s, "read_file", file_path=str(b / "f.txt"))
            assert still["ok"], still
            removed = await tool(s, "read_file", file_path=str(a / "f.txt"))
            assert removed["error"] == "outside_workspace", removed
            assert asked == 3


def test_a_bad_roots_answer_holds_up_no_call(tmp_path: Path, env: dict[str, str]) -> None:
    (ws,) = folders(tmp_path, "ws")
    for bad in ({"roots": 5}, {"roots": "file:///"}, [1, 2], {"roots": [5, None, {"uri": 3}]}):
        raw = RawMcp(ws, env={**os.environ, **env})
        try:
            raw.initialize(roots=True)
            asked = raw.wait_for(lambda m: m.get("method") == "roots/list")
            raw.send({"jsonrpc": "2.0", "id": asked["id"], "result": bad})
            for n in range(1, 4):
                start = time.monotonic()
                raw.call(n, "read_file", file_path="f.txt")
                got = raw.answer_of(n, timeout=20)
                assert time.monotonic() - start < 3, (bad, n)
                assert got["result"]["structuredContent"]["ok"], (bad, got)
        finally:
            raw.close()


@pytest.mark.slow
def test_a_client_that_never_lists_its_roots_holds_up_only_the_first_calls(
    tmp_path: Path, env: dict[str, str]
) -> None:
    (ws,) = folders(tmp_path, "ws")
    raw = RawMcp(ws, env={**os.environ, **env})
    try:
        raw.initialize(roots=True)
        raw.wait_for(lambda m: m.get("method") == "roots/list")  # never answered
        start = time.monotonic()
        raw.call(1, "read_file", file_path="f.txt")
        first = raw.answer_of(1, timeout=30)
        waited = time.monotonic() - start
        assert first["result"]["structuredContent"]["ok"], first
        assert 5 < waited < 15, waited  # until the request's deadline, not longer
        start = time.monotonic()
        raw.call(2, "read_file", file_path="f.txt")
        second = raw.answer_of(2, timeout=30)
        assert time.monotonic() - start < 3  # the deadline has passed: no more waiting
        assert second["result"]["structuredContent"]["ok"], second
    finally:
        raw.close()


def test_many_calls_waiting_for_the_roots_do_not_keep_the_answer_out(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """More calls than may run at once arrive before the client's roots: the roots answer,
    which comes on the same input, is still read at once."""
    (ws,) = folders(tmp_path, "ws")
    raw = RawMcp(ws, env={**os.environ, **env})
    try:
        raw.initialize(roots=True)
        asked = raw.wait_for(lambda m: m.get("method") == "roots/list")
        for n in range(1, 201):
            raw.call(n, "read_file", file_path="f.txt", offset=1 + n % 2)
        start = time.monotonic()
        raw.send(
            {
                "jsonrpc": "2.0",
                "id": asked["id"],
                "result": {"roots": [{"uri": ws.resolve().as_uri()}]},
            }
        )
        answered: dict[int, Any] = {}
        while len(answered) < 200:
            got = raw.wait_for(lambda m: "id" in m and "method" not in m, timeout=30)
            answered[got["id"]] = got["result"]["structuredContent"]
        assert time.monotonic() - start < 5
        assert sorted(answered) == list(range(1, 201))
        assert all(r["ok"] for r in answered.values())
    finally:
        raw.close()


# -- ids ----------------------------------------------------------------------------------


def test_a_host_id_equal_to_an_internal_one_is_answered(tmp_path: Path) -> None:
    (ws,) = folders(tmp_path, "ws")
    server = LspServer(ws)
    raw = RawMcp(ws, "--attach", "require")
    try:
        assert "Attached to" in raw.initialize()["result"]["instructions"]
        for msg_id in ("steadyhand-hello", "steadyhand-roots-1", "hello", 0):
            raw.call(msg_id, "read_file", file_path=str(ws / "f.txt"))
            got = raw.answer_of(msg_id, timeout=15)
            assert got["result"]["structuredContent"]["ok"], got
    finally:
        raw.close()
        server.kill()


# -- the end of a session -----------------------------------------------------------------


async def test_an_attached_session_ends_without_a_false_warning(tmp_path: Path) -> None:
    (ws,) = folders(tmp_path, "ws")
    server = LspServer(ws)
    log = tmp_path / "stderr.txt"
    try:
        with open(log, "w") as errlog:
            async with mcp_session(
                ws, "--attach", "require", "--log-level", "INFO", errlog=errlog
            ) as s:
                assert (await tool(s, "read_file", file_path="f.txt"))["ok"]
            await asyncio.sleep(0.5)
        text = log.read_text()
        assert "attached to server" in text, text  # the log was caught
        assert "went away" not in text, text
    finally:
        server.kill()


# -- what each revision gets --------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "structured_content"),
    [("2024-11-05", False), ("2025-03-26", False), ("2025-06-18", True), ("2025-11-25", True)],
)
@pytest.mark.parametrize("attached", [False, True])
def test_structured_content_only_from_2025_06_18(
    tmp_path: Path, env: dict[str, str], protocol: str, structured_content: bool, attached: bool
) -> None:
    (ws,) = folders(tmp_path, "ws")
    server = LspServer(ws, env=dict(env)) if attached else None
    raw = RawMcp(ws, "--attach", "require" if attached else "never", env={**os.environ, **env})
    try:
        init = raw.initialize(protocol=protocol)["result"]
        assert init["protocolVersion"] == protocol
        assert ("Attached to" in init["instructions"]) is attached
        raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        listed = raw.answer_of(1)["result"]["tools"]
        assert all(("outputSchema" in t) is structured_content for t in listed)
        raw.call(2, "read_file", file_path="f.txt")
        result = raw.answer_of(2)["result"]
        assert ("structuredContent" in result) is structured_content, result
        assert "in ws" in result["content"][0]["text"] and result["isError"] is False
        raw.call(3, "edit_file", file_path="f.txt", old_string="nothing", new_string="x")
        refused = raw.answer_of(3)["result"]
        assert refused["isError"] is True and ("structuredContent" in refused) is structured_content
    finally:
        raw.close()
        if server is not None:
            server.kill()


# -- settings -----------------------------------------------------------------------------


@pytest.mark.parametrize("wrapped", [False, True])
def test_a_mistyped_setting_is_named_on_stderr_with_the_closest_key(
    tmp_path: Path, env: dict[str, str], wrapped: bool
) -> None:
    settings = {"denyGlob": ["*.env"], "max_read_byte": 10, "fsync": False}
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"steadyhand": settings} if wrapped else settings))
    done = subprocess.run(
        [*SERVER, "--config", str(config), "--attach", "never"],
        input=b"",
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, **env},
        timeout=60,
    )
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert "denyGlob" in err and "denyGlobs" in err, err
    assert "max_read_byte" in err and "maxReadBytes" in err, err
    assert "fsync" not in err, err  # a key it knows is no warning
