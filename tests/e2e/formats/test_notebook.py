"""Jupyter notebooks end to end: reading cells, and notebookEdit with byte-for-byte
preservation of everything it does not touch (checked against nbformat's own writer)."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lsprotocol import types
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from PIL import Image
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from steadyhand.protocol.commands import NOTEBOOK_EDIT as NB_EDIT
from tests.conftest import call, client_with
from tests.editor import EditorState, open_doc, settle


def _png(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (200, 30, 30)).save(buf, "PNG")
    return base64.b64encode(buf.getvalue()).decode()


def make_notebook() -> Any:
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Analysis\nCurly “quotes” and ünïcode stay."),
            new_code_cell(
                "x = 21\nprint(x * 2)",
                execution_count=1,
                outputs=[new_output("stream", name="stdout", text="42\n")],
            ),
            new_code_cell(
                "1 / 0",
                execution_count=2,
                outputs=[
                    new_output(
                        "error",
                        ename="ZeroDivisionError",
                        evalue="division by zero",
                        traceback=[f"\x1b[0;31mframe {i}\x1b[0m" for i in range(30)],
                    )
                ],
            ),
            new_code_cell(
                "plot()",
                execution_count=3,
                outputs=[
                    new_output(
                        "display_data",
                        data={"image/png": _png(64, 48), "text/plain": "<Figure 64x48>"},
                    )
                ],
            ),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Py"}
    return nb


def write_nb(path: Path, nb: Any) -> str:
    text = nbformat.writes(nb)
    path.write_text(text, encoding="utf-8")
    return text


async def test_read_notebook_cells_and_outputs(client: LanguageClient, workspace: Path) -> None:
    nb = make_notebook()
    write_nb(workspace / "a.ipynb", nb)
    r = await call(client, READ, file_path="a.ipynb")
    assert r["ok"] and r["type"] == "notebook"
    assert r["total_cells"] == 4 and r["num_cells"] == 4 and r["language"] == "python"
    assert [c["id"] for c in r["cells"]] == [c.id for c in nb.cells]
    assert [c["cell_type"] for c in r["cells"]] == ["markdown", "code", "code", "code"]
    msg = r["message"]
    assert f'id="{nb.cells[1].id}" type="code" execution_count="1"' in msg
    assert "print(x * 2)" in msg and "[stdout]\n42" in msg
    assert "Curly “quotes”" in msg
    # the error keeps its name and the end of its traceback, without terminal colours
    assert "ZeroDivisionError: division by zero" in msg and "frame 29" in msg
    assert "frame 0" not in msg and "\x1b" not in msg and "traceback lines cut" in msg
    # image outputs are summarized, not inlined, unless asked
    assert "image/png output" in msg and "include_images=true" in msg
    assert "images" not in r and "<Figure 64x48>" in msg
    assert "notebookEdit" in msg

    again = await call(client, READ, file_path="a.ipynb")
    assert again["type"] == "file_unchanged"

    with_images = await call(client, READ, file_path="a.ipynb", include_images=True)
    assert with_images["type"] == "notebook"
    (img,) = with_images["images"]
    assert img["cell_index"] == 4 and img["media_type"] == "image/png"
    assert (img["width"], img["height"]) == (64, 48)
    assert Image.open(io.BytesIO(base64.b64decode(img["data"]))).size == (64, 48)


async def test_read_pages_by_cell(client: LanguageClient, workspace: Path) -> None:
    nb = new_notebook(cells=[new_code_cell(f"print({i})") for i in range(10)])
    write_nb(workspace / "p.ipynb", nb)
    r = await call(client, READ, file_path="p.ipynb", offset=4, limit=3)
    assert r["ok"] and r["start_cell"] == 4 and r["num_cells"] == 3
    assert "print(3)" in r["message"] and "print(5)" in r["message"], r["message"]
    assert "print(2)" not in r["message"] and "print(6)" not in r["message"]
    assert "offset=7" in r["message"]
    past = await call(client, READ, file_path="p.ipynb", offset=40)
    assert past["ok"] and past["num_cells"] == 0 and "between 1 and 10" in past["message"]


async def test_large_notebook_is_paged_by_tokens(client: LanguageClient, workspace: Path) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": {"maxReadTokens": 300}})
    )
    nb = new_notebook(cells=[new_code_cell(f"value_{i} = '{'x' * 300}'") for i in range(6)])
    write_nb(workspace / "big.ipynb", nb)
    r = await call(client, READ, file_path="big.ipynb")
    assert r["ok"] and r["type"] == "notebook"
    assert 1 <= r["num_cells"] < 6
    assert f"offset={r['num_cells'] + 1}" in r["message"] and "token limit" in r["message"]


async def test_replace_clears_outputs_and_keeps_every_other_byte(
    client: LanguageClient, workspace: Path
) -> None:
    nb = make_notebook()
    path = workspace / "a.ipynb"
    write_nb(path, nb)
    await call(client, READ, file_path="a.ipynb")
    target = nb.cells[1]
    r = await call(
        client,
        NB_EDIT,
        file_path="a.ipynb",
        cell_id=target.id,
        new_source="x = 5\nprint(x + 1)\n",
    )
    assert r["ok"], r
    assert r["cell_index"] == 2 and r["total_cells"] == 4
    assert "outputs and execution count were cleared" in r["message"]
    assert "+x = 5" in r["diff"] and "-x = 21" in r["diff"]
    # exactly what nbformat itself would write for the edited notebook
    target.source = "x = 5\nprint(x + 1)\n"
    target.outputs = []
    target.execution_count = None
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)
    # the record was refreshed: a second edit works without reading again
    again = await call(
        client, NB_EDIT, file_path="a.ipynb", cell_id=nb.cells[0].id, new_source="# T"
    )
    assert again["ok"] and "cleared" not in again["message"]
    nb.cells[0].source = "# T"
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)


async def test_insert_and_delete_cells(client: LanguageClient, workspace: Path) -> None:
    nb = make_notebook()
    path = workspace / "a.ipynb"
    write_nb(path, nb)
    await call(client, READ, file_path="a.ipynb")
    ins = await call(
        client,
        NB_EDIT,
        file_path="a.ipynb",
        cell_id=nb.cells[0].id,
        edit_mode="insert",
        cell_type="markdown",
        new_source="## Setup",
    )
    assert ins["ok"] and ins["cell_index"] == 2 and ins["total_cells"] == 5
    new_id = ins["cell_id"]
    nb.cells.insert(1, new_markdown_cell("## Setup", id=new_id))
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)
    nbformat.validate(nbformat.reads(path.read_text(encoding="utf-8"), as_version=4))

    top = await call(
        client,
        NB_EDIT,
        file_path="a.ipynb",
        edit_mode="insert",
        cell_type="code",
        new_source="import math",
    )
    assert top["ok"] and top["cell_index"] == 1
    nb.cells.insert(0, new_code_cell("import math", id=top["cell_id"]))
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)

    victim = nb.cells[3]  # the stdout cell
    gone = await call(client, NB_EDIT, file_path="a.ipynb", cell_id=victim.id, edit_mode="delete")
    assert gone["ok"] and gone["total_cells"] == 5 and "Deleted cell 4" in gone["message"]
    del nb.cells[3]
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)

    last = nb.cells[-1]
    gone = await call(client, NB_EDIT, file_path="a.ipynb", cell_id=last.id, edit_mode="delete")
    assert gone["ok"]
    del nb.cells[-1]
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)

    r = await call(client, READ, file_path="a.ipynb")
    assert r["total_cells"] == 4 and "## Setup" in r["message"]


async def test_custom_formatting_is_preserved(client: LanguageClient, workspace: Path) -> None:
    """A notebook written with another indent, unsorted keys, CRLF and no final newline."""
    nb = make_notebook()
    raw = json.dumps(nb, indent=2, ensure_ascii=True).replace("\n", "\r\n")
    path = workspace / "c.ipynb"
    path.write_bytes(raw.encode())
    await call(client, READ, file_path="c.ipynb")
    r = await call(client, NB_EDIT, file_path="c.ipynb", cell_id=nb.cells[0].id, new_source="Ωmega")
    assert r["ok"], r
    nb.cells[0].source = "Ωmega"
    expected = json.dumps(nb, indent=2, ensure_ascii=True).replace("\n", "\r\n")
    assert path.read_bytes() == expected.encode()


async def test_staleness_and_read_before_write(client: LanguageClient, workspace: Path) -> None:
    nb = make_notebook()
    path = workspace / "a.ipynb"
    write_nb(path, nb)
    cid = nb.cells[0].id
    blind = await call(client, NB_EDIT, file_path="a.ipynb", cell_id=cid, new_source="x")
    assert blind["ok"] is False and blind["error"] == "not_read"

    await call(client, READ, file_path="a.ipynb")
    nb.cells[0].source = "# Changed elsewhere"
    write_nb(path, nb)
    before = path.read_bytes()
    stale = await call(client, NB_EDIT, file_path="a.ipynb", cell_id=cid, new_source="mine")
    assert stale["ok"] is False and stale["error"] == "stale"
    assert path.read_bytes() == before
    if stale["refreshed"]:
        assert "Changed elsewhere" in stale["message"]
    else:
        await call(client, READ, file_path="a.ipynb")
    retry = await call(client, NB_EDIT, file_path="a.ipynb", cell_id=cid, new_source="mine")
    assert retry["ok"], retry
    nb.cells[0].source = "mine"
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)


async def test_partial_view_and_unknown_cell(client: LanguageClient, workspace: Path) -> None:
    nb = new_notebook(cells=[new_code_cell(f"print({i})") for i in range(6)])
    write_nb(workspace / "p.ipynb", nb)
    await call(client, READ, file_path="p.ipynb", offset=1, limit=2)
    unseen = await call(client, NB_EDIT, file_path="p.ipynb", cell_id=nb.cells[4].id, new_source="")
    assert unseen["ok"] is False and unseen["error"] == "partial_view"
    assert "offset=5" in unseen["message"]
    seen = await call(client, NB_EDIT, file_path="p.ipynb", cell_id=nb.cells[1].id, new_source="a")
    assert seen["ok"], seen
    missing = await call(client, NB_EDIT, file_path="p.ipynb", cell_id="nope", new_source="")
    assert missing["ok"] is False and missing["error"] == "no_match"
    assert nb.cells[0].id in missing["message"]
    same = await call(client, NB_EDIT, file_path="p.ipynb", cell_id=nb.cells[1].id, new_source="a")
    assert same["ok"] is False and same["error"] == "no_change"


async def test_cell_type_change_and_cells_without_ids(
    client: LanguageClient, workspace: Path
) -> None:
    nb = new_notebook(cells=[new_markdown_cell("text"), new_code_cell("1 + 1")])
    nb.nbformat_minor = 4
    for c in nb.cells:
        del c["id"]
    path = workspace / "old.ipynb"
    write_nb(path, nb)
    r = await call(client, READ, file_path="old.ipynb")
    assert [c["id"] for c in r["cells"]] == ["cell-1", "cell-2"]
    e = await call(
        client,
        NB_EDIT,
        notebook_path=str(path),
        cell_id="cell-1",
        new_source="print('hi')",
        cell_type="code",
    )
    assert e["ok"] and "now a code cell" in e["message"]
    data = json.loads(path.read_text(encoding="utf-8"))
    first = data["cells"][0]
    assert first["cell_type"] == "code" and first["outputs"] == [] and "id" not in first
    assert first["execution_count"] is None
    ins = await call(
        client,
        NB_EDIT,
        file_path="old.ipynb",
        edit_mode="insert",
        cell_type="raw",
        cell_id="cell-2",
    )
    assert ins["ok"] and ins["cell_id"] == "cell-3"
    assert "id" not in json.loads(path.read_text(encoding="utf-8"))["cells"][2]


async def test_edit_is_refused_on_notebooks(client: LanguageClient, workspace: Path) -> None:
    nb = make_notebook()
    path = workspace / "a.ipynb"
    text = write_nb(path, nb)
    await call(client, READ, file_path="a.ipynb")
    r = await call(client, EDIT, file_path="a.ipynb", old_string="x = 21", new_string="x")
    assert r["ok"] is False and r["error"] == "wrong_tool" and "notebookEdit" in r["message"]
    assert path.read_text(encoding="utf-8") == text
    other = await call(client, NB_EDIT, file_path="notes.txt", cell_id="a", new_source="")
    assert other["ok"] is False and other["error"] == "wrong_tool"


async def test_broken_notebook_reads_as_text_and_can_be_repaired(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "bad.ipynb").write_text('{"cells": [\n  {"cell_type": "code",\n')
    r = await call(client, READ, file_path="bad.ipynb")
    assert r["ok"] and r["type"] == "text"
    e = await call(
        client, NB_EDIT, file_path="bad.ipynb", cell_id="cell-1", new_source="", edit_mode="delete"
    )
    assert e["ok"] is False and e["error"] == "unreadable"
    fix = await call(
        client,
        EDIT,
        file_path="bad.ipynb",
        old_string='"code",\n',
        new_string='"code", "execution_count": null, "metadata": {}, "outputs": [], '
        '"source": []}\n], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}\n',
    )
    assert fix["ok"], fix
    nbformat.validate(nbformat.read(str(workspace / "bad.ipynb"), as_version=4))


async def test_notebook_edit_params_are_checked(client: LanguageClient) -> None:
    with pytest.raises(JsonRpcInvalidParams, match="cell_type"):
        await call(client, NB_EDIT, file_path="a.ipynb", edit_mode="insert", new_source="x")
    with pytest.raises(JsonRpcInvalidParams, match="cell_id"):
        await call(client, NB_EDIT, file_path="a.ipynb", new_source="x")
    with pytest.raises(JsonRpcInvalidParams, match="edit_mode"):
        await call(client, NB_EDIT, file_path="a.ipynb", cell_id="a", edit_mode="move")


editor = client_with(editor=True)


async def test_open_notebook_is_edited_through_the_editor(
    editor: LanguageClient, workspace: Path
) -> None:
    nb = make_notebook()
    path = workspace / "open.ipynb"
    write_nb(path, nb)
    st: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, st, path)
    await settle()
    r = await call(editor, READ, file_path="open.ipynb")
    assert r["ok"] and r["type"] == "notebook" and r["source"] == "buffer"
    e = await call(editor, NB_EDIT, file_path="open.ipynb", cell_id=nb.cells[1].id, new_source="z")
    assert e["ok"] and e["via"] == "workspaceEdit", e
    (params,) = st.applied
    (doc_edit,) = params.edit.document_changes or []
    assert isinstance(doc_edit, types.TextDocumentEdit)
    assert len(doc_edit.edits) == 3  # source, outputs, execution count: nothing else
    nb.cells[1].source = "z"
    nb.cells[1].outputs = []
    nb.cells[1].execution_count = None
    assert st.buffers[uri].text == nbformat.writes(nb)
    assert path.read_text(encoding="utf-8") == nbformat.writes(nb)


def _old_notebook(path: Path, n: int) -> bytes:
    """A notebook in format 4.4: its cells have no ids, so they are named ``cell-N``."""
    nb = new_notebook(cells=[new_code_cell(f"x{i} = {i}") for i in range(1, n + 1)])
    nb.nbformat_minor = 4
    for c in nb.cells:
        del c["id"]
    write_nb(path, nb)
    return path.read_bytes()


def _sources(path: Path) -> list[str]:
    return ["".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"]]


async def test_a_delete_renumbers_positional_names_and_old_names_are_refused(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "old.ipynb"
    _old_notebook(path, 5)
    await call(client, READ, file_path="old.ipynb")
    gone = await call(client, NB_EDIT, file_path="old.ipynb", cell_id="cell-2", edit_mode="delete")
    assert gone["ok"], gone
    assert "cell-3 is now cell-2" in gone["message"] and "cell-5 is now cell-4" in gone["message"]
    before = path.read_bytes()
    # The model still counts as it read: "cell-3" meant x3, which is cell-2 now.
    stale_name = await call(
        client, NB_EDIT, file_path="old.ipynb", cell_id="cell-3", edit_mode="delete"
    )
    assert stale_name["ok"] is False and stale_name["error"] == "partial_view"
    assert "offset=3" in stale_name["message"] and "position" in stale_name["message"]
    assert path.read_bytes() == before
    # Cells before the deleted one kept their names.
    kept = await call(client, NB_EDIT, file_path="old.ipynb", cell_id="cell-1", new_source="y")
    assert kept["ok"], kept
    r = await call(client, READ, file_path="old.ipynb", offset=3, limit=1)
    assert "x4 = 4" in r["message"]
    now = await call(client, NB_EDIT, file_path="old.ipynb", cell_id="cell-3", edit_mode="delete")
    assert now["ok"], now
    assert _sources(path) == ["y", "x3 = 3", "x5 = 5"]


async def test_an_insert_renumbers_positional_names(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "old.ipynb"
    _old_notebook(path, 3)
    await call(client, READ, file_path="old.ipynb")
    ins = await call(
        client, NB_EDIT, file_path="old.ipynb", edit_mode="insert", cell_type="code", new_source="z"
    )
    assert ins["ok"] and ins["cell_id"] == "cell-1"
    assert "cell-1 is now cell-2" in ins["message"] and "cell-3 is now cell-4" in ins["message"]
    before = path.read_bytes()
    r = await call(client, NB_EDIT, file_path="old.ipynb", cell_id="cell-2", new_source="w")
    assert r["ok"] is False and r["error"] == "partial_view"
    assert path.read_bytes() == before
    # The cell the insert wrote is known by its new name.
    mine = await call(client, NB_EDIT, file_path="old.ipynb", cell_id="cell-1", new_source="zz")
    assert mine["ok"], mine
    assert _sources(path) == ["zz", "x1 = 1", "x2 = 2", "x3 = 3"]


async def test_positional_names_moved_by_another_session_are_refused(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "old.ipynb"
    _old_notebook(path, 4)
    await call(client, READ, file_path="old.ipynb", session="a")
    await call(client, READ, file_path="old.ipynb", session="b")
    gone = await call(
        client, NB_EDIT, file_path="old.ipynb", cell_id="cell-1", edit_mode="delete", session="a"
    )
    assert gone["ok"], gone
    before = path.read_bytes()
    stale = await call(
        client, NB_EDIT, file_path="old.ipynb", cell_id="cell-2", new_source="b", session="b"
    )
    assert stale["ok"] is False and stale["error"] == "stale"
    retry = await call(
        client, NB_EDIT, file_path="old.ipynb", cell_id="cell-2", new_source="b", session="b"
    )
    assert retry["ok"] is False and retry["error"] == "partial_view"
    assert path.read_bytes() == before


def _nb45(cells: list[dict[str, Any]]) -> str:
    return json.dumps(
        {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1
    )


def _code(cid: str, source: str) -> dict[str, Any]:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": cid,
        "metadata": {},
        "outputs": [],
        "source": source,
    }


async def test_duplicate_ids_are_ambiguous_and_positions_pick_one(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "dup.ipynb"
    path.write_text(_nb45([_code("abc", "first"), _code("m1", "mid"), _code("abc", "second")]))
    await call(client, READ, file_path="dup.ipynb")
    before = path.read_bytes()
    r = await call(client, NB_EDIT, file_path="dup.ipynb", cell_id="abc", new_source="E")
    assert r["ok"] is False and r["error"] == "ambiguous"
    assert r["cells"] == [1, 3] and "cell-1 or cell-3" in r["message"]
    assert path.read_bytes() == before
    # A cell with an id of its own is named by it, never by a position that can move.
    own = await call(client, NB_EDIT, file_path="dup.ipynb", cell_id="cell-2", new_source="E")
    assert own["ok"] is False and own["error"] == "no_match" and "'m1'" in own["message"]
    pick = await call(client, NB_EDIT, file_path="dup.ipynb", cell_id="cell-3", new_source="E")
    assert pick["ok"], pick
    assert _sources(path) == ["first", "mid", "E"]


async def test_a_type_change_keeps_attachments_where_allowed(
    client: LanguageClient, workspace: Path
) -> None:
    att = {"img.png": {"image/png": "iVBORw0KGgo="}}
    md = {
        "attachments": att,
        "cell_type": "markdown",
        "id": "m1",
        "metadata": {"tags": ["t"]},
        "source": "![x](attachment:img.png)",
    }
    path = workspace / "att.ipynb"
    path.write_text(_nb45([md]))
    await call(client, READ, file_path="att.ipynb")
    raw = await call(
        client, NB_EDIT, file_path="att.ipynb", cell_id="m1", new_source="r", cell_type="raw"
    )
    assert raw["ok"] and "dropped" not in raw["message"], raw
    (cell,) = json.loads(path.read_text())["cells"]
    assert cell["cell_type"] == "raw" and cell["attachments"] == att
    assert cell["metadata"] == {"tags": ["t"]}
    code = await call(
        client, NB_EDIT, file_path="att.ipynb", cell_id="m1", new_source="c", cell_type="code"
    )
    assert code["ok"] and "`attachments` were dropped" in code["message"], code
    (cell,) = json.loads(path.read_text())["cells"]
    assert cell["cell_type"] == "code" and "attachments" not in cell
    nbformat.validate(nbformat.reads(path.read_text(), as_version=4))
