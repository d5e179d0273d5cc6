"""``steadyhand mcp`` standalone, driven end to end by the official MCP SDK's client."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

from tests.e2e.mcp.helpers import mcp_session, server_params, structured

TOOLS = {
    "read_file",
    "edit_file",
    "multi_edit",
    "write_file",
    "notebook_edit",
    "history",
    "undo",
    "checkpoint",
    "rewind",
    "changes",
    "change",
    "list_files",
    "grep",
    "get_file_info",
    "create_directory",
    "read_multiple_files",
    "move_file",
    "delete_file",
}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("retries = 3\nname = 'app'\n")
    return ws


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A runtime folder with no language server in it, and a history of this test's."""
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {"STEADYHAND_RUNTIME_DIR": str(run), "XDG_STATE_HOME": str(tmp_path / "state")}


async def call(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def test_tools_are_listed_with_valid_schemas_and_hints(ws: Path, env: dict[str, str]) -> None:
    async with mcp_session(ws, env=env) as s:
        listed = (await s.list_tools()).tools
        init = s.initialize_result
    assert init is not None and init.server_info.name == "steadyhand"
    assert init.protocol_version == "2025-11-25"
    assert init.capabilities.tools is not None and init.capabilities.logging is not None
    assert "read_file" in (init.instructions or "") and "Standalone" in (init.instructions or "")
    assert {t.name for t in listed} == TOOLS
    for tool in listed:
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.output_schema is not None
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.input_schema["additionalProperties"] is False, tool.name
        assert tool.input_schema["type"] == "object"
        assert tool.description and len(tool.description) > 100, tool.name
        hints = tool.annotations
        assert hints is not None and hints.open_world_hint is False, tool.name
    by_name = {t.name: t for t in listed}
    assert by_name["read_file"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert by_name["edit_file"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert by_name["edit_file"].input_schema["required"] == [
        "file_path",
        "old_string",
        "new_string",
    ]
    edit_desc = by_name["edit_file"].description or ""
    for words in ("read the file first", "exactly once", "stale", "without reading again"):
        assert words in edit_desc, words
    assert "offset" in (by_name["read_file"].description or "")


async def test_read_edit_write_and_their_refusals(ws: Path, env: dict[str, str]) -> None:
    app = ws / "app.py"
    async with mcp_session(ws, env=env) as s:
        # an edit before any read is refused: the model is told to read first
        blind = await call(s, "edit_file", file_path=str(app), old_string="3", new_string="5")
        assert blind["ok"] is False and blind["error"] == "not_read", blind

        read = await call(s, "read_file", file_path="app.py")
        assert read["ok"] and read["path"] == str(app.resolve())
        assert "     1\tretries = 3" in read["message"]

        edited = await call(
            s, "edit_file", file_path=str(app), old_string="retries = 3", new_string="retries = 5"
        )
        assert edited["ok"] and edited["replacements"] == 1 and edited["via"] == "disk", edited
        assert app.read_text() == "retries = 5\nname = 'app'\n"

        missing = await call(
            s, "edit_file", file_path=str(app), old_string="timeout = 1", new_string="timeout = 2"
        )
        assert missing["error"] == "no_match", missing

        # changed behind the agent's back: stale, with the diff, and nothing written
        app.write_text("retries = 5\nname = 'other'\n")
        stale = await call(
            s, "edit_file", file_path=str(app), old_string="retries = 5", new_string="retries = 7"
        )
        assert stale["error"] == "stale" and "+name = 'other'" in stale["diff"], stale
        assert app.read_text() == "retries = 5\nname = 'other'\n"

        outside = await call(s, "read_file", file_path="/etc/hostname")
        assert outside["error"] == "outside_workspace", outside

        made = await call(s, "write_file", file_path="pkg/new.txt", content="hello\n")
        assert made["ok"] and made["type"] == "create", made
        assert (ws / "pkg" / "new.txt").read_text() == "hello\n"

        multi = await call(
            s,
            "multi_edit",
            file_path="pkg/new.txt",
            edits=[{"old_string": "hello", "new_string": "hi"}],
        )
        assert multi["ok"], multi
        versions = await call(s, "history", file_path="pkg/new.txt")
        assert [v["tool"] for v in versions["versions"]] == ["multiEdit", "write"], versions
        assert all(v["session"].startswith("mcp-") for v in versions["versions"]), versions
        undone = await call(s, "undo", file_path="pkg/new.txt")
        assert undone["ok"] and (ws / "pkg" / "new.txt").read_text() == "hello\n", undone


async def test_bad_arguments_are_tool_errors_naming_the_field(
    ws: Path, env: dict[str, str]
) -> None:
    async with mcp_session(ws, env=env) as s:
        wrong = await s.call_tool("read_file", {"path": "app.py"})
        missing = await s.call_tool("edit_file", {"file_path": "app.py", "old_string": "x"})
        typed = await s.call_tool("read_file", {"file_path": "app.py", "limit": "ten"})
        with pytest.raises(MCPError) as unknown:
            await s.call_tool("erase_file", {"file_path": "app.py"})
    for result, field, words in (
        (wrong, "path", "Did you mean `file_path`?"),
        (missing, "new_string", "Missing required parameter `new_string`"),
        (typed, "limit", "`limit` must be an integer"),
    ):
        assert result.is_error is True
        data = structured(result)
        assert data["error"] == "invalid_params" and data["field"] == field, data
        assert words in data["message"] and "call " in data["message"], data
    assert unknown.value.error.code == -32602
    assert "read_file" in unknown.value.error.message


async def test_sessions_are_per_connection(ws: Path, env: dict[str, str]) -> None:
    app = ws / "app.py"
    async with mcp_session(ws, env=env) as one, mcp_session(ws, env=env) as two:
        assert (await call(one, "read_file", file_path=str(app)))["ok"]
        # what one connection read does not let another edit
        other = await call(two, "edit_file", file_path=str(app), old_string="3", new_string="4")
        assert other["error"] == "not_read", other
        # a sub-agent's session is its own, too
        sub = await call(
            one, "edit_file", file_path=str(app), old_string="3", new_string="4", session="helper"
        )
        assert sub["error"] == "not_read", sub
        ok = await call(one, "edit_file", file_path=str(app), old_string="= 3", new_string="= 4")
        assert ok["ok"], ok


async def test_ping_and_logging_level(tmp_path: Path, ws: Path, env: dict[str, str]) -> None:
    """A ping is answered with an empty result; ``logging/setLevel`` decides which log
    records reach the client as ``notifications/message``: a new root is logged at
    ``info``, so it is sent while the level is ``info``, and no longer once it is raised
    to ``warning``."""
    import mcp_types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import stdio_client

    other, third = tmp_path / "other", tmp_path / "third"
    other.mkdir()
    third.mkdir()
    roots = [ws]
    logged: list[mcp_types.LoggingMessageNotificationParams] = []

    async def list_roots(context: Any) -> mcp_types.ListRootsResult:
        return mcp_types.ListRootsResult(
            roots=[mcp_types.Root(uri=r.resolve().as_uri(), name=r.name) for r in roots]  # type: ignore[arg-type]
        )

    async def on_log(params: mcp_types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    async def roots_now(s: ClientSession, root: Path) -> None:
        """Make ``root`` the client's root and wait until the server works in it (the
        server logs a new root as it takes the answer, before it answers the call)."""
        roots[:] = [root]
        (root / "probe.txt").write_text("p\n")
        await s.send_roots_list_changed()
        for _ in range(100):
            if (await call(s, "read_file", file_path="probe.txt"))["ok"]:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError(f"the server never took {root} as its root")
        assert isinstance(await s.send_ping(), mcp_types.EmptyResult)  # all before it is in

    def about(root: Path) -> list[mcp_types.LoggingMessageNotificationParams]:
        return [m for m in logged if str(root.resolve()) in str(m.data)]

    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(server_params(ws, env=env), errlog=quiet) as (read, write),
            ClientSession(
                read, write, list_roots_callback=list_roots, logging_callback=on_log
            ) as s,
        ):
            await s.initialize()
            assert isinstance(await s.send_ping(), mcp_types.EmptyResult)
            with warnings.catch_warnings():  # deprecated in a later revision, not in this one
                warnings.simplefilter("ignore")
                assert isinstance(await s.set_logging_level("info"), mcp_types.EmptyResult)
                await roots_now(s, other)
                sent = about(other)
                assert [m.level for m in sent] == ["info"], logged
                assert sent[0].logger == "steadyhand" and "roots:" in str(sent[0].data), sent
                assert isinstance(await s.set_logging_level("warning"), mcp_types.EmptyResult)
                await roots_now(s, third)
                assert about(third) == [], logged  # an info record, now below the level
    assert all(m.level != "debug" for m in logged), logged


async def test_roots_come_from_the_client(tmp_path: Path, env: dict[str, str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (b / "f.txt").write_text("in b\n")
    # started in ``a``, but the client's root is ``b``
    async with mcp_session(a, env=env, roots=[b]) as s:
        inside = await call(s, "read_file", file_path=str(b / "f.txt"))
        assert inside["ok"], inside
        relative = await call(s, "read_file", file_path="f.txt", limit=1)
        assert relative["ok"] and relative["path"] == str((b / "f.txt").resolve()), relative
        (a / "g.txt").write_text("in a\n")
        outside = await call(s, "read_file", file_path=str(a / "g.txt"))
        assert outside["error"] == "outside_workspace", outside


async def test_root_arguments_win_over_the_current_folder(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    async with mcp_session(other, str(ws), env=env) as s:
        assert (await call(s, "read_file", file_path="app.py"))["ok"]
        assert "Standalone, on disk, in " + str(ws) in (s.initialize_result.instructions or "")  # type: ignore[union-attr]


async def test_config_file_settings_apply(tmp_path: Path, ws: Path, env: dict[str, str]) -> None:
    config = tmp_path / "steadyhand.json"
    config.write_text(json.dumps({"denyGlobs": ["**/*.secret"], "fsync": False}))
    (ws / "key.secret").write_text("k\n")
    async with mcp_session(ws, "--config", str(config), env=env) as s:
        denied = await call(s, "read_file", file_path="key.secret")
    assert denied["error"] == "denied", denied


async def test_an_image_is_returned_as_image_content(ws: Path, env: dict[str, str]) -> None:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (8, 6), (200, 10, 10)).save(buf, "PNG")
    (ws / "dot.png").write_bytes(buf.getvalue())
    async with mcp_session(ws, env=env) as s:
        result = await s.call_tool("read_file", {"file_path": "dot.png"})
    data = structured(result)
    assert data["ok"] and data["type"] == "image" and "data" not in data, data
    image = result.content[1]
    assert image.type == "image" and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == buf.getvalue()


async def test_auto_negotiating_client_falls_back_from_discover(
    ws: Path, env: dict[str, str]
) -> None:
    async with Client(server_params(ws, env=env)) as client:  # mode="auto"
        assert client.session.initialize_result is not None
        result = await client.call_tool("read_file", {"file_path": "app.py"})
    assert structured(result)["ok"]


async def test_older_protocol_revisions_get_what_they_know(ws: Path, env: dict[str, str]) -> None:
    import subprocess

    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2024-11-05",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "initialize", "params": {"protocolVersion": "1999"}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/list"},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines) + "not json\n"
    out = subprocess.run(
        [sys.executable, "-m", "steadyhand", "mcp"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ws,
        env={**os.environ, **env},
        timeout=60,
    )
    answers = [json.loads(line) for line in out.stdout.splitlines()]
    by_id = {a.get("id"): a for a in answers}
    assert by_id[1]["result"]["protocolVersion"] == "2024-11-05"
    tools = by_id[2]["result"]["tools"]
    assert tools and all("outputSchema" not in t and "annotations" not in t for t in tools)
    assert by_id[3]["result"]["protocolVersion"] == "2025-11-25"
    assert by_id[4]["error"]["code"] == -32601
    assert by_id[None]["error"]["code"] == -32700


def test_require_fails_at_start_without_an_editor(ws: Path, env: dict[str, str]) -> None:
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "steadyhand", "mcp", "--attach", "require"],
        input="",
        capture_output=True,
        text=True,
        cwd=ws,
        env={**os.environ, **env},
        timeout=60,
    )
    assert out.returncode == 1
    assert "no running Steadyhand language server holds" in out.stderr
    assert str(ws) in out.stderr


def test_requests_from_a_file_on_stdin(tmp_path: Path, ws: Path, env: dict[str, str]) -> None:
    import subprocess

    requests = tmp_path / "requests.jsonl"
    call_read = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_path": "app.py"}},
    }
    requests.write_text(
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
        + "\n"
        + json.dumps(call_read)
        + "\n"
    )
    with requests.open("rb") as stdin:
        out = subprocess.run(
            [sys.executable, "-m", "steadyhand", "mcp"],
            stdin=stdin,
            capture_output=True,
            text=True,
            cwd=ws,
            env={**os.environ, **env},
            timeout=60,
        )
    answers = {a["id"]: a for a in map(json.loads, out.stdout.splitlines())}
    assert answers[1]["result"]["serverInfo"]["name"] == "steadyhand", out.stderr
    assert answers[2]["result"]["structuredContent"]["ok"] is True, answers[2]
