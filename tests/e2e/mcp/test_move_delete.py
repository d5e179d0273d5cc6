"""``move_file`` and ``delete_file`` over MCP, driven by the official SDK's client: their
schemas and hints, every refusal, the records following a move, and moves and deletions
taken back by ``undo`` (by file and by id) and ``rewind``, byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.e2e.mcp.helpers import mcp_session, structured


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return ws


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {"STEADYHAND_RUNTIME_DIR": str(run), "XDG_STATE_HOME": str(tmp_path / "state")}


def _config(tmp_path: Path) -> str:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps({"denyGlobs": ["**/*.secret"], "maxDeleteFiles": 3, "maxMoveFiles": 3})
    )
    return str(path)


_VALIDATORS: dict[str, jsonschema.Draft202012Validator] = {}


async def call(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    """The tool's structured result, checked against the ``outputSchema`` the server lists
    for it (listed once per test run)."""
    if not _VALIDATORS:
        for t in (await client.list_tools()).tools:
            _VALIDATORS[t.name] = jsonschema.Draft202012Validator(t.output_schema)
    data = structured(await client.call_tool(tool, arguments))
    errors = [e.message for e in _VALIDATORS[tool].iter_errors(data)]
    assert not errors, (tool, arguments, errors)
    if not data["ok"]:  # a refusal is one sentence or more, never just a code
        assert data["message"].strip() and data["message"] != data["error"], data
    return data


async def test_listed_with_schemas_and_destructive_hints(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
    for name, required in (
        ("move_file", ["source_path", "destination_path"]),
        ("delete_file", ["file_path"]),
    ):
        tool = listed[name]
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.output_schema is not None
        assert tool.input_schema["required"] == required
        assert tool.annotations is not None and tool.annotations.destructive_hint is True
        assert "undo with the result's change_id" in (tool.description or "")
        assert "session" in tool.input_schema["properties"]


async def test_move_refusals_and_the_record_following(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    (ws / "b.py").write_text("y = 2\n")
    (ws / "k.secret").write_text("k\n")
    (ws / "out").symlink_to(outside)
    (ws / "big").mkdir()
    for i in range(4):
        (ws / "big" / f"{i}.txt").write_text("i\n")
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        refusals = {
            ("a.py", str(outside / "a.py")): "outside_workspace",
            ("a.py", "out/a.py"): "outside_workspace",
            ("k.secret", "k.txt"): "denied",
            ("a.py", ".git/a.py"): "protected",
            ("a.py", "b.py"): "exists",
            ("big", "big/inner"): "invalid_path",
            ("big", "big2"): "too_large",
            ("gone.py", "x.py"): "not_found",
        }
        for (src, dst), code in refusals.items():
            r = await call(s, "move_file", source_path=src, destination_path=dst)
            assert r["ok"] is False and r["error"] == code, (src, dst, r)
        over = await call(
            s, "move_file", source_path="a.py", destination_path="b.py", overwrite=True
        )
        assert over["error"] == "not_read", over
        assert (await call(s, "read_file", file_path="a.py"))["ok"]
        moved = await call(s, "move_file", source_path="a.py", destination_path="pkg/a.py")
        assert moved["ok"] and moved["change_id"], moved
        edited = await call(s, "edit_file", file_path="pkg/a.py", old_string="1", new_string="3")
        assert edited["ok"], edited  # no read needed after the move
        assert (ws / "pkg" / "a.py").read_text() == "x = 3\n" and (ws / "b.py").exists()
        back = await call(s, "undo", id=moved["change_id"])
        assert back["ok"] and (ws / "a.py").read_text() == "x = 3\n", back
        assert not (ws / "pkg").exists()
        again = await call(s, "undo", file_path="a.py")
        assert again["ok"] and (ws / "pkg" / "a.py").exists(), again


async def test_delete_refusals_and_byte_for_byte_returns(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    (ws / "f.txt").write_bytes(b"one\r\ntwo\r\n")
    os.chmod(ws / "f.txt", 0o604)
    d = ws / "d"
    (d / "sub").mkdir(parents=True)
    (d / "x.bin").write_bytes(bytes(range(256)))
    (d / "sub" / "y.txt").write_text("y\n")
    (ws / "many").mkdir()
    for i in range(4):
        (ws / "many" / f"{i}.txt").write_text("i\n")
    (ws / "withsecret").mkdir()
    (ws / "withsecret" / "a.secret").write_text("s\n")
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        refusals = {
            ("f.txt", False, False): "not_read",
            ("d", False, True): "not_empty",
            ("d", True, False): "not_read",
            ("many", True, True): "too_large",
            ("withsecret", True, True): "denied",
            (".git", True, True): "protected",
            (str(tmp_path), True, True): "outside_workspace",
        }
        for (path, recursive, force), code in refusals.items():
            r = await call(s, "delete_file", file_path=path, recursive=recursive, force=force)
            assert r["ok"] is False and r["error"] == code, (path, r)
        cp = await call(s, "checkpoint", label="before")
        assert cp["ok"]
        assert (await call(s, "read_file", file_path="f.txt"))["ok"]
        gone = await call(s, "delete_file", file_path="f.txt")
        assert gone["ok"] and not (ws / "f.txt").exists(), gone
        folder = await call(s, "delete_file", file_path="d", recursive=True, force=True)
        assert folder["ok"] and folder["files"] == 2 and not d.exists(), folder
        listed = await call(s, "changes")
        kinds = [(c["kind"], Path(c["path"]).name) for c in listed["changes"]]
        assert kinds == [("delete", "d"), ("delete", "f.txt")], kinds
        back = await call(s, "undo", file_path="f.txt")
        assert back["ok"] and (ws / "f.txt").read_bytes() == b"one\r\ntwo\r\n", back
        assert (ws / "f.txt").stat().st_mode & 0o777 == 0o604
        rewound = await call(s, "rewind", checkpoint="before")
        assert rewound["ok"], rewound
        assert (d / "x.bin").read_bytes() == bytes(range(256))
        assert (d / "sub" / "y.txt").read_text() == "y\n"
        assert (ws / "f.txt").read_bytes() == b"one\r\ntwo\r\n"


async def test_dry_runs_links_out_stale_files_and_sessions(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("o\n")
    (ws / "out").symlink_to(outside)
    (ws / "a.txt").write_text("a\n")
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        for path, code in (("out/o.txt", "outside_workspace"), ("out", "outside_workspace")):
            r = await call(s, "delete_file", file_path=path, force=True)
            assert r["error"] == code, (path, r)
        assert (outside / "o.txt").read_text() == "o\n" and (ws / "out").is_symlink()
        assert (await call(s, "read_file", file_path="a.txt"))["ok"]
        # another session (a sub-agent named in `session`) has read nothing
        other = await call(s, "delete_file", file_path="a.txt", session="sub")
        assert other["error"] == "not_read" and (ws / "a.txt").exists(), other
        dry = await call(
            s, "move_file", source_path="a.txt", destination_path="n/b.txt", dry_run=True
        )
        assert dry["ok"] and dry["dry_run"] and not dry.get("change_id"), dry
        assert (ws / "a.txt").exists() and not (ws / "n").exists()
        dry = await call(s, "delete_file", file_path="a.txt", dry_run=True)
        assert dry["ok"] and dry["dry_run"] and (ws / "a.txt").exists(), dry
        (ws / "a.txt").write_text("a\nchanged\n")  # changed behind the agent's back
        stale = await call(s, "delete_file", file_path="a.txt")
        assert stale["error"] == "stale" and (ws / "a.txt").exists(), stale
        # the refusal showed what is there now: the next delete goes through
        gone = await call(s, "delete_file", file_path="a.txt")
        assert gone["ok"] and not (ws / "a.txt").exists(), gone


async def test_rewind_moves_a_folder_back(tmp_path: Path, ws: Path, env: dict[str, str]) -> None:
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "m.py").write_bytes(b"m = 1\r\n")
    (ws / "src" / "top.py").write_text("t\n")
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        assert (await call(s, "checkpoint", label="start"))["ok"]
        moved = await call(s, "move_file", source_path="src", destination_path="lib/src")
        assert moved["ok"] and moved["kind"] == "folder" and moved["files"] == 2, moved
        assert moved["made"] == [str((ws / "lib").resolve())], moved
        assert (ws / "lib" / "src" / "pkg" / "m.py").read_bytes() == b"m = 1\r\n"
        listed = await call(s, "changes")
        assert [c["kind"] for c in listed["changes"]] == ["move"], listed
        rewound = await call(s, "rewind", checkpoint="start")
        assert rewound["ok"], rewound
        assert (ws / "src" / "pkg" / "m.py").read_bytes() == b"m = 1\r\n"
        assert (ws / "src" / "top.py").read_text() == "t\n"
        assert not (ws / "lib").exists()
