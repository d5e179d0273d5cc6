"""multiEdit, expected_replacements, dry_run and near-miss refusals, end to end."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from tests.conftest import call, client_with
from tests.editor import EditorState, open_doc, settle


def edits(*pairs: tuple[str, str]) -> list[dict[str, object]]:
    return [{"old_string": o, "new_string": n} for o, n in pairs]


async def test_multi_edit_applies_in_order_with_tolerances(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "m.py"
    f.write_text("def a():\n\treturn 1\n\ndef b():\n\treturn 'b\u2019s'\n")
    await call(client, READ, file_path="m.py")
    r = await call(
        client,
        MULTI,
        file_path="m.py",
        edits=[
            *edits(("def a():\n    return 1", "def a():\n    return 2")),
            *edits(("return 2", "return 3"), ("return 'b's'", "return 'b's' + x")),
        ],
    )
    assert r["ok"], r
    assert f.read_text() == "def a():\n\treturn 3\n\ndef b():\n\treturn 'b\u2019s' + x\n"
    assert r["matched"] == ["indentation", "exact", "quotes"]
    assert [e["replacements"] for e in r["edits"]] == [1, 1, 1] and r["replacements"] == 3
    assert "applied 3 edits" in r["message"] and "edit 1 matched with indentation" in r["message"]
    assert r["added"] == 2 and r["removed"] == 2
    again = await call(client, EDIT, file_path="m.py", old_string="return 3", new_string="return 4")
    assert again["ok"], again  # the cache follows the combined change


async def test_multi_edit_failure_names_the_edit_and_changes_nothing(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "n.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    await call(client, READ, file_path="n.txt")
    r = await call(
        client,
        MULTI,
        file_path="n.txt",
        edits=edits(("alpha", "ALPHA"), ("delta", "DELTA"), ("gamma", "GAMMA")),
    )
    assert r["ok"] is False and r["error"] == "no_match" and r["edit_index"] == 1
    assert r["message"].startswith("Edit 2 of 3 (edits[1]) failed, so none of the edits")
    assert f.read_text() == "alpha\nbeta\ngamma\n"
    amb = await call(
        client, MULTI, file_path="n.txt", edits=edits(("alpha", "beta"), ("beta", "b"))
    )
    assert amb["error"] == "ambiguous" and amb["edit_index"] == 1 and "edits 1-1" in amb["message"]
    undo = await call(client, MULTI, file_path="n.txt", edits=edits(("beta", "x"), ("x", "beta")))
    assert undo["error"] == "no_change"
    assert f.read_text() == "alpha\nbeta\ngamma\n"


async def test_multi_edit_creates_a_missing_file(client: LanguageClient, workspace: Path) -> None:
    r = await call(
        client,
        MULTI,
        file_path="new/c.txt",
        edits=edits(("", "one\ntwo\n"), ("two", "2")),
    )
    assert r["ok"], r
    assert (workspace / "new/c.txt").read_text() == "one\n2\n"


async def test_multi_edit_params_are_validated(client: LanguageClient, workspace: Path) -> None:
    (workspace / "p.txt").write_text("x\n")
    try:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                command=MULTI,
                arguments=[{"file_path": "p.txt", "edits": [{"old_string": "x", "new": "y"}]}],
            )
        )
    except Exception as exc:  # JSON-RPC InvalidParams naming the field
        assert "new_string" in str(exc) and "edits[0]" in str(exc)
    else:
        raise AssertionError("an unknown key in an edit must be refused")


async def test_expected_replacements(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "e.txt"
    f.write_text("t()\nt()\nt()\n")
    await call(client, READ, file_path="e.txt")
    bad = await call(
        client, EDIT, file_path="e.txt", old_string="t()", new_string="u()", expected_replacements=2
    )
    assert bad["error"] == "count_mismatch" and bad["matches"] == 3 and bad["expected"] == 2
    assert "expected_replacements is 2" in bad["message"] and bad["lines"] == [1, 2, 3]
    ok = await call(
        client, EDIT, file_path="e.txt", old_string="t()", new_string="u()", expected_replacements=3
    )
    assert ok["ok"] and ok["replacements"] == 3 and f.read_text() == "u()\nu()\nu()\n"


async def test_dry_run_edit_changes_nothing_and_keeps_the_view(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "d.py"
    f.write_text("if x:\n\ty = 1\n")
    await call(client, READ, file_path="d.py")
    r = await call(
        client,
        EDIT,
        file_path="d.py",
        old_string="    y = 1",
        new_string="    y = 2",
        dry_run=True,
    )
    assert r["ok"] and r["dry_run"] is True and r["matched"] == "indentation"
    assert "-\ty = 1" in r["diff"] and "+\ty = 2" in r["diff"] and "+\ty = 2" in r["message"]
    assert "nothing was changed" in r["message"] and "via" not in r
    assert f.read_text() == "if x:\n\ty = 1\n"
    # A dry run's checks are real: a stale file is refused, and the view is not moved.
    f.write_text("if x:\n\ty = 5\n")
    stale = await call(
        client, EDIT, file_path="d.py", old_string="\ty = 5", new_string="\ty = 6", dry_run=True
    )
    assert stale["error"] == "stale" and stale["refreshed"] is False
    real = await call(client, EDIT, file_path="d.py", old_string="\ty = 5", new_string="\ty = 6")
    assert real["error"] == "stale" and real["refreshed"] is True
    assert f.read_text() == "if x:\n\ty = 5\n"


async def test_dry_run_write_and_multi_edit(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "w.txt"
    f.write_text("a\nb\n")
    await call(client, READ, file_path="w.txt")
    w = await call(client, WRITE, file_path="w.txt", content="a\nB\nc\n", dry_run=True)
    assert w["ok"] and w["dry_run"] is True and w["added"] == 2 and w["removed"] == 1
    assert f.read_text() == "a\nb\n"
    created = await call(client, WRITE, file_path="sub/new.txt", content="x\n", dry_run=True)
    assert created["ok"] and created["dry_run"] and created["type"] == "create"
    assert not (workspace / "sub").exists()
    m = await call(
        client, MULTI, file_path="w.txt", edits=edits(("a", "A"), ("b", "B")), dry_run=True
    )
    assert m["ok"] and m["dry_run"] and m["replacements"] == 2 and f.read_text() == "a\nb\n"
    partial = workspace / "big.txt"
    partial.write_text("".join(f"{i}\n" for i in range(100)))
    await call(client, READ, file_path="big.txt", offset=1, limit=5)
    pv = await call(client, WRITE, file_path="big.txt", content="x\n", dry_run=True)
    assert pv["error"] == "partial_view"


async def test_no_match_shows_closest_lines_and_counts_them_as_shown(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "long.py"
    body = [f"v{i} = {i}" for i in range(60)]
    body[40] = "\tcompute(alpha, beta)"
    f.write_text("\n".join(body) + "\n")
    await call(client, READ, file_path="long.py", offset=1, limit=10)
    r = await call(
        client,
        EDIT,
        file_path="long.py",
        old_string="    compute(alpha, gamma)",
        new_string="    compute(alpha, delta)",
    )
    assert r["error"] == "no_match" and r["closest_lines"] == [41, 41]
    assert "    41\t\tcompute(alpha, beta)" in r["message"]
    assert "line 41 is indented with 1 tab, you sent 4 spaces" in r["message"]
    assert any("beta" in d and "gamma" in d for d in r["differences"])
    ok = await call(
        client,
        EDIT,
        file_path="long.py",
        old_string="\tcompute(alpha, beta)",
        new_string="\tcompute(alpha, delta)",
    )
    assert ok["ok"], ok  # no partial_view: the refusal showed line 41


editor = client_with(editor=True)


async def test_multi_edit_on_open_document_is_one_workspace_edit(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "o.py"
    f.write_text("".join(f"x{i} = {i}\n" for i in range(30)))
    st: EditorState = editor.editor  # type: ignore[attr-defined]
    uri = open_doc(editor, st, f)
    await settle()
    await call(editor, READ, file_path="o.py")
    r = await call(
        editor,
        MULTI,
        file_path="o.py",
        edits=edits(("x3 = 3", "x3 = 'three'"), ("x20 = 20", "x20 = 'twenty'")),
    )
    assert r["ok"] and r["via"] == "workspaceEdit", r
    (params,) = st.applied  # one WorkspaceEdit: one undo step
    (doc_edit,) = params.edit.document_changes or []
    assert isinstance(doc_edit, types.TextDocumentEdit) and len(doc_edit.edits) == 2
    text = st.buffers[uri].text
    assert "x3 = 'three'\n" in text and "x20 = 'twenty'\n" in text and "x4 = 4\n" in text
