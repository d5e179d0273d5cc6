"""Every MCP tool's real results fit the ``outputSchema`` it lists: hosts built on the
TypeScript SDK check ``structuredContent`` against it on every call and fail the call
when it does not fit. Driven by the official Python SDK client (which checks the same),
each result is also checked here with jsonschema, successes and refusals alike."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import jsonschema
import nbformat
import pytest
from fpdf import FPDF
from PIL import Image

from tests.e2e.mcp.helpers import mcp_session, structured


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("retries = 3\nname = 'app'\n" + "x = 1\n" * 120)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("a = 1"), nbformat.v4.new_markdown_cell("# Notes")]
    nbformat.write(nb, str(ws / "n.ipynb"))
    buf = io.BytesIO()
    Image.new("RGB", (3, 2), "red").save(buf, "PNG")
    (ws / "dot.png").write_bytes(buf.getvalue())
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="page one")
    pdf.output(str(ws / "doc.pdf"))
    return ws


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    return {"STEADYHAND_RUNTIME_DIR": str(run), "XDG_STATE_HOME": str(tmp_path / "state")}


class Checked:
    """Calls tools and checks each result against the tool's listed ``outputSchema``."""

    def __init__(self, session: Any, listed: list[Any]) -> None:
        self.session = session
        self.validators = {t.name: jsonschema.Draft202012Validator(t.output_schema) for t in listed}
        self.called: dict[str, set[bool]] = {}

    async def __call__(self, tool: str, **arguments: Any) -> dict[str, Any]:
        data = structured(await self.session.call_tool(tool, arguments))
        errors = [
            f"{'.'.join(map(str, e.path))}: {e.message}"
            for e in self.validators[tool].iter_errors(data)
        ]
        assert not errors, (tool, arguments, errors)
        self.called.setdefault(tool, set()).add(bool(data["ok"]))
        return data


async def test_every_tools_results_fit_its_output_schema(ws: Path, env: dict[str, str]) -> None:
    app = str(ws / "app.py")
    async with mcp_session(ws, env=env) as s:
        listed = (await s.list_tools()).tools
        call = Checked(s, listed)

        # read: every kind of file, and refusals
        assert (await call("read_file", file_path=app))["type"] == "text"
        assert (await call("read_file", file_path=app))["type"] == "file_unchanged"
        assert (await call("read_file", file_path=app, offset=0, limit=2))["num_lines"] == 2
        notebook = await call("read_file", file_path="n.ipynb")
        assert notebook["type"] == "notebook"
        assert (await call("read_file", file_path="dot.png"))["type"] == "image"
        assert (await call("read_file", file_path="doc.pdf", pages="1"))["type"] == "pdf"
        assert (await call("read_file", file_path="gone.py"))["error"] == "not_found"
        assert (await call("read_file", file_path=app, offset="1"))["error"] == "invalid_params"

        # several files; the workspace tools
        many = await call("read_multiple_files", file_paths=["app.py", "gone.py", "n.ipynb"])
        assert [f["ok"] for f in many["files"]] == [True, False, True], many
        assert (await call("read_multiple_files", file_paths=[]))["error"] == "invalid_params"
        listing = await call("list_files", depth=1, sizes=True, line_counts=True)
        assert listing["entries"], listing
        assert (await call("list_files", path="gone"))["error"] == "not_found"
        for mode in ("files", "content", "count"):
            found = await call("grep", pattern="retries", output_mode=mode, context=1)
            assert found["ok"], found
        assert (await call("grep", pattern="(", path="."))["error"] == "invalid_pattern"
        assert (await call("get_file_info", file_path=app))["kind"] == "text"
        assert (await call("get_file_info", file_path=str(ws)))["type"] == "dir"
        assert (await call("get_file_info", file_path="gone.py"))["error"] == "not_found"
        assert (await call("create_directory", path="empty/deep"))["created"]
        assert (await call("create_directory", path="empty/deep"))["existed"] is True
        assert (await call("create_directory", path="app.py"))["ok"] is False

        # edit, multi_edit, write: successes, dry runs, a long diff asked for, refusals
        dry = await call(
            "edit_file", file_path=app, old_string="retries = 3", new_string="r = 4", dry_run=True
        )
        assert dry["dry_run"] is True
        assert (await call("edit_file", file_path=app, old_string="x = 1", new_string="y"))[
            "error"
        ] == "ambiguous"
        assert (await call("edit_file", file_path=app, old_string="nope", new_string="y"))[
            "error"
        ] == "no_match"
        whole = await call(
            "edit_file",
            file_path=app,
            old_string="x = 1",
            new_string="x = 2",
            replace_all=True,
            include_diff=True,
        )
        assert whole["ok"] and "diff" in whole and "diff_omitted" not in whole, whole
        long = await call(
            "edit_file", file_path=app, old_string="x = 2", new_string="x = 3", replace_all=True
        )
        assert long["diff_omitted"] is True and long["changed"], long
        (ws / "app.py").write_text((ws / "app.py").read_text() + "tail\n")
        stale = await call("edit_file", file_path=app, old_string="retries = 3", new_string="r")
        assert stale["error"] == "stale" and stale["refreshed"] is True, stale
        multi = await call(
            "multi_edit",
            file_path=app,
            edits=[
                {"old_string": "retries = 3", "new_string": "retries = 5"},
                {"old_string": "name = 'app'", "new_string": "name = 'svc'"},
            ],
            include_diff=True,
        )
        assert multi["ok"] and multi["replacements"] == 2, multi
        failed = await call(
            "multi_edit", file_path=app, edits=[{"old_string": "nope", "new_string": "x"}]
        )
        assert failed["edit_index"] == 0, failed
        made = await call("write_file", file_path="pkg/new.txt", content="one\n")
        assert made["type"] == "create", made
        updated = await call("write_file", file_path="pkg/new.txt", content="two\n")
        assert updated["type"] == "update", updated
        assert (await call("write_file", file_path="pkg", content=""))["error"] == "is_directory"
        created = await call("edit_file", file_path="made.py", old_string="", new_string="a\n")
        assert created["type"] == "create" and isinstance(created["lines"], int), created

        # notebook_edit
        cell = notebook["cells"][0]["id"]
        done = await call("notebook_edit", file_path="n.ipynb", cell_id=cell, new_source="a = 2")
        assert done["ok"], done
        nb_insert = await call(
            "notebook_edit", notebook_path="n.ipynb", edit_mode="insert", cell_type="raw"
        )
        assert nb_insert["ok"], nb_insert
        needs = await call("notebook_edit", file_path="n.ipynb", edit_mode="insert")
        assert needs["error"] == "invalid_params" and needs["field"] == "cell_type", needs

        # history, checkpoint, rewind, changes, change, undo
        versions = (await call("history", file_path=app))["versions"]
        assert versions, versions
        assert (await call("checkpoint", label="before"))["checkpoint"].startswith("cp-")
        await call("write_file", file_path="later.txt", content="x\n")
        rewound = await call("rewind", checkpoint="before", include_diff=True)
        assert rewound["deleted"], rewound
        assert (await call("rewind", checkpoint="nope"))["error"] == "no_history"
        changes = await call("changes", path=str(ws), limit=5)
        assert changes["changes"] and changes["total"] >= 5, changes
        assert (await call("changes", since="nope"))["error"] == "no_history"
        first = changes["changes"][-1]["id"]
        one = await call("change", id=first)
        assert one["ok"] and "before" in one and "after" in one, one
        created_change = next(c for c in changes["changes"] if c["kind"] == "create")
        assert (await call("change", id=created_change["id"]))["ok"]
        assert (await call("change", id="zzzzzzzz"))["ok"] is False
        undone = await call("undo", file_path="pkg/new.txt", include_diff=True)
        assert undone["type"] == "restore", undone
        by_id = await call("undo", id=multi_id(await call("history", file_path=app)))
        assert by_id["ok"] or by_id["error"] in ("conflict", "stale"), by_id
        assert (await call("undo"))["error"] == "invalid_params"
        assert (await call("undo", file_path="gone.py"))["ok"] is False

    listed_names = {t.name for t in listed}
    assert set(call.called) == listed_names, listed_names - set(call.called)
    for tool, outcomes in call.called.items():
        assert outcomes == {True, False} or tool in ("checkpoint", "history"), (tool, outcomes)


def multi_id(history: dict[str, Any]) -> str:
    """The id of the multi_edit change in a file's history."""
    return next(v["id"] for v in history["versions"] if v["tool"] == "multiEdit")
