"""The workspace tools over MCP (``list_files``, ``grep``, ``get_file_info``,
``create_directory``, ``read_multiple_files``), driven by the official SDK's client:
their schemas and hints, their answers, their refusals, and both search engines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from tests.e2e.mcp.helpers import mcp_session, structured

TREE_TOOLS = ("list_files", "grep", "get_file_info", "create_directory", "read_multiple_files")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for rel, text in {
        ".gitignore": "build/\n",
        "src/app.py": "def main():\n    return helper()\n",
        "src/util.py": "def helper():\n    return 1\n",
        "build/gen.py": "helper = None\n",
        "secrets/key.txt": "helper\n",
        "README.md": "# helper\n",
    }.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    return ws


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {"XDG_RUNTIME_DIR": str(run), "XDG_STATE_HOME": str(tmp_path / "state")}


def _config(tmp_path: Path, **settings: Any) -> str:
    path = tmp_path / f"config-{len(list(tmp_path.glob('config-*')))}.json"
    path.write_text(json.dumps({"denyGlobs": ["secrets"], **settings}))
    return str(path)


async def call(client: Any, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def test_the_tools_are_listed_with_schemas_and_hints(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        listed = {t.name: t for t in (await s.list_tools()).tools}
    for name in TREE_TOOLS:
        tool = listed[name]
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.output_schema is not None
        jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tool.annotations is not None and tool.annotations.open_world_hint is False
        assert tool.annotations.read_only_hint is (name != "create_directory"), name
        assert tool.annotations.destructive_hint is False, name
    assert listed["grep"].input_schema["required"] == ["pattern"]
    assert listed["read_multiple_files"].input_schema["required"] == ["file_paths"]
    assert ".gitignore" in (listed["list_files"].description or "")
    assert "unsaved" in (listed["grep"].description or "")


async def test_list_search_info_mkdir_and_read_several(
    tmp_path: Path, ws: Path, env: dict[str, str]
) -> None:
    async with mcp_session(ws, "--config", _config(tmp_path), env=env) as s:
        listed = await call(s, "list_files")
        assert [e["path"] for e in listed["entries"]] == [
            ".gitignore",
            "README.md",
            "src",
            "src/app.py",
            "src/util.py",
        ]
        assert listed["roots"] == [str(ws.resolve())]
        tree = await call(s, "list_files", path="src", depth=1)
        assert tree["message"].splitlines()[1:] == [f"{ws.resolve()}/src/", "  app.py", "  util.py"]
        found = await call(s, "grep", pattern="helper", output_mode="content", context=1)
        assert found["message"].splitlines()[1:4] == [
            "README.md:1:# helper",
            "--",
            "src/app.py-1-def main():",
        ]
        assert found["engine"] == "ripgrep" and found["total_files"] == 3
        bad = await s.call_tool("grep", {"pattern": "helper("})
        assert bad.is_error is True and structured(bad)["error"] == "invalid_pattern"
        info = await call(s, "get_file_info", file_path="src/app.py")
        assert (info["kind"], info["lines"], info["open"]) == ("text", 2, False)
        made = await call(s, "create_directory", path="pkg/sub")
        assert made["created"] == ["pkg", "pkg/sub"] and (ws / "pkg" / "sub").is_dir()
        denied = await s.call_tool("list_files", {"path": "secrets"})
        assert structured(denied)["error"] == "denied"
        several = await call(s, "read_multiple_files", file_paths=["src/app.py", "nope.py"])
        assert [f["ok"] for f in several["files"]] == [True, False]
        assert "     2\t    return helper()" in several["message"]
        # What read_multiple_files read may be edited now.
        edit = await call(
            s, "edit_file", file_path="src/app.py", old_string="helper()", new_string="util()"
        )
        assert edit["ok"], edit
        typed = await s.call_tool("list_files", {"depth": "two"})
        assert typed.is_error is True and structured(typed)["field"] == "depth"


@pytest.mark.parametrize(
    "query",
    [
        {"pattern": "helper"},
        {"pattern": r"return \w+\(\)", "output_mode": "content", "context": 1},
        {"pattern": "HELPER", "case_insensitive": True, "output_mode": "count"},
        {"pattern": "helper", "include_ignored": True, "type": "py"},
    ],
)
async def test_both_engines_answer_alike(
    tmp_path: Path, ws: Path, env: dict[str, str], query: dict[str, Any]
) -> None:
    answers = {}
    for engine in ("ripgrep", "python"):
        config = _config(tmp_path, searchEngine=engine)
        async with mcp_session(ws, "--config", config, env=env) as s:
            answers[engine] = await call(s, "grep", **query)
    assert answers["ripgrep"].pop("engine") == "ripgrep"
    assert answers["python"].pop("engine") == "python"
    assert answers["ripgrep"] == answers["python"]
    assert answers["python"]["total_files"] >= 1
