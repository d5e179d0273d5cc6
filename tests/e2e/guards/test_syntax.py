"""The syntax guard end to end, over stdio with the real server: in every checked
language a change that breaks the syntax is reported (``warn``) or refused (``block``),
never blamed for an error the file already had, silent when it fixes one, and off when
asked; dry runs say the same; open buffers are checked by their language id; notebooks
cell by cell; and a check that cannot finish in time says so."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest
from lsprotocol import types
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHECKPOINT, EDIT, READ, REWIND, UNDO, WRITE
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from steadyhand.protocol.commands import NOTEBOOK_EDIT as NB_EDIT
from steadyhand.syntax.engine import DEADLINE_ENV
from tests.conftest import call, client_with
from tests.editor import EditorState, open_doc, settle
from tests.unit.syntax.samples import SAMPLES

client = client_with()
blocking = client_with({"syntaxCheck": "block"})
unchecked = client_with({"syntaxCheck": "off"})
editor_client = client_with(editor=True)
#: A server with the deadline it has by default (the tests' servers get a long one, so
#: that no other result depends on the machine's load: tests/conftest.py).
default_deadline = client_with(env={DEADLINE_ENV: ""})


def sample_file(workspace: Path, lang: str, units: int = 12) -> tuple[Path, str]:
    s = SAMPLES[lang]
    path = workspace / s.name
    text = s.text(units)
    path.write_text(text)
    return path, text


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def breaking(lang: str, units: int = 12) -> tuple[str, str, str]:
    """An edit that breaks unit ``units // 2`` of a sample file: (old_string,
    new_string, the text from that unit's start to the break, for its line)."""
    s = SAMPLES[lang]
    unit = s.unit.format(i=units // 2)
    old, broken = s.breaks
    return unit, unit.replace(old, broken, 1), unit[: unit.index(old)]


async def test_a_break_is_reported_in_every_language(
    client: LanguageClient, workspace: Path
) -> None:
    failures: list[str] = []
    for lang in SAMPLES:
        path, text = sample_file(workspace, lang)
        await call(client, READ, file_path=str(path))
        old, broken, _ = breaking(lang)
        r = await call(client, EDIT, file_path=str(path), old_string=old, new_string=broken)
        errors = r.get("syntax_errors")
        if not r["ok"] or not errors:
            failures.append(f"{lang}: {r}")
            continue
        first = errors[0]
        assert set(first) == {"line", "column", "message", "excerpt"}, first
        assert (
            f"Syntax check: the change leaves {'a syntax error' if len(errors) == 1 else ''}"
            in r["message"]
            or "Syntax check: the change leaves" in r["message"]
        )
        assert f"line {first['line']}, column {first['column']}" in r["message"]
        assert "another edit" in r["message"]
        assert path.read_text() == text.replace(old, broken, 1)  # warn: the change is made
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("lang", ["python", "json", "go", "yaml"])
async def test_the_line_named_is_where_the_break_is(
    client: LanguageClient, workspace: Path, lang: str
) -> None:
    path, text = sample_file(workspace, lang)
    await call(client, READ, file_path=str(path))
    old, broken, head = breaking(lang)
    r = await call(client, EDIT, file_path=str(path), old_string=old, new_string=broken)
    assert r["ok"] and r["syntax_errors"], r
    line = line_of(text, old) + head.count("\n")
    assert r["syntax_errors"][0]["line"] == line, r["syntax_errors"]


async def test_an_error_the_file_had_is_not_blamed_and_a_fix_reports_nothing(
    client: LanguageClient, workspace: Path
) -> None:
    path, text = sample_file(workspace, "python")
    broken_text = text.replace("return a + (b or 0)", "return a + (b or 0", 1)  # in f0
    path.write_text(broken_text)
    await call(client, READ, file_path=str(path))
    # an edit elsewhere: the error that was there stays unmentioned
    r = await call(
        client,
        EDIT,
        file_path=str(path),
        old_string="class Tail:\n    pass\n",
        new_string="class Tail:\n    value = 1\n",
    )
    assert r["ok"] and r["syntax_errors"] == [], r
    assert "Syntax check" not in r["message"]
    # the fix: nothing to say either
    r = await call(
        client, EDIT, file_path=str(path), old_string="(b or 0\n", new_string="(b or 0)\n"
    )  # the only place without its `)`
    assert r["ok"] and r["syntax_errors"] == [] and "Syntax check" not in r["message"], r
    # a clean edit of a clean file
    r = await call(
        client, EDIT, file_path=str(path), old_string="value = 1", new_string="value = 2"
    )
    assert r["ok"] and r["syntax_errors"] == [], r


async def test_write_multi_edit_and_new_files_are_checked(
    client: LanguageClient, workspace: Path
) -> None:
    created = await call(
        client, WRITE, file_path=str(workspace / "new.json"), content='{"a": 1,}\n'
    )
    assert created["ok"] and created["type"] == "create"
    assert [e["line"] for e in created["syntax_errors"]] == [1], created
    path, text = sample_file(workspace, "javascript")
    await call(client, READ, file_path=str(path))
    r = await call(
        client,
        MULTI,
        file_path=str(path),
        edits=[
            {"old_string": "'use strict';", "new_string": "'use strict'"},
            {"old_string": "module.exports = {};", "new_string": "module.exports = {;"},
        ],
    )
    assert r["ok"] and [e["line"] for e in r["syntax_errors"]] == [text.count("\n")], r
    # a whole-file write that breaks it again elsewhere reports that error only
    current = path.read_text()
    r = await call(
        client,
        WRITE,
        file_path=str(path),
        content=current.replace("const path = require('path');", "const path = require('path';"),
    )
    assert r["ok"] and [e["line"] for e in r["syntax_errors"]] == [2], r


async def test_block_refuses_and_leaves_every_byte(
    blocking: LanguageClient, workspace: Path
) -> None:
    path, text = sample_file(workspace, "rust")
    before = path.read_bytes()
    await call(blocking, READ, file_path=str(path))
    old, broken, head = breaking("rust")
    r = await call(blocking, EDIT, file_path=str(path), old_string=old, new_string=broken)
    assert r["ok"] is False and r["error"] == "syntax_error", r
    assert path.read_bytes() == before
    line = line_of(text, old) + head.count("\n")
    assert f"line {line}" in r["message"] and "nothing was written" in r["message"]
    assert r["syntax_errors"][0]["line"] == line
    # the refusal changed nothing: a valid edit goes through, with nothing to report
    ok = await call(
        blocking,
        EDIT,
        file_path=str(path),
        old_string=old,
        new_string=old.replace("return a + b;", "return b + a;"),
    )
    assert ok["ok"] and ok["syntax_errors"] == [], ok
    # a new file that does not parse is not created
    r = await call(blocking, WRITE, file_path=str(workspace / "bad.py"), content="def f(:\n")
    assert r["ok"] is False and r["error"] == "syntax_error" and not (workspace / "bad.py").exists()
    # a dry run answers as the real call would
    r = await call(
        blocking,
        EDIT,
        file_path=str(path),
        old_string="return b + a;",
        new_string="return (b + a;",
        dry_run=True,
    )
    assert r["ok"] is False and r["error"] == "syntax_error", r


async def test_undo_is_never_refused_and_says_what_it_brought_back(
    blocking: LanguageClient, workspace: Path
) -> None:
    path = workspace / "broken.py"
    path.write_text("def f(a):\n    return (a\n")  # broken before the agent came
    await call(blocking, READ, file_path=str(path))
    fixed = await call(blocking, EDIT, file_path=str(path), old_string="(a\n", new_string="(a)\n")
    assert fixed["ok"] and fixed["syntax_errors"] == [], fixed
    undone = await call(blocking, UNDO, file_path=str(path))
    assert undone["ok"], undone
    assert path.read_text() == "def f(a):\n    return (a\n"
    assert undone["syntax_errors"][0]["line"] == 2
    assert "Syntax check: the restored text has a syntax error at line 2" in undone["message"]


async def test_rewind_reports_each_file(client: LanguageClient, workspace: Path) -> None:
    a, b = workspace / "a.py", workspace / "b.py"
    a.write_text("x = (1\n")
    b.write_text("y = 2\n")
    cp = await call(client, CHECKPOINT, label="start")
    for f, content in ((a, "x = (1)\n"), (b, "y = 3\n")):
        await call(client, READ, file_path=str(f))
        assert (await call(client, WRITE, file_path=str(f), content=content))["ok"]
    r = await call(client, REWIND, checkpoint=cp["checkpoint"])
    assert r["ok"] and sorted(r["restored"]) == sorted([str(a), str(b)]), r
    assert [(e["path"], e["line"]) for e in r["syntax_errors"]] == [(str(a), 1)], r
    assert f"- restored {a} (it has a syntax error at line 1" in r["message"]
    assert "1 restored file has a syntax error it did not have just before" in r["message"]


async def test_off_checks_nothing(unchecked: LanguageClient, workspace: Path) -> None:
    path, _ = sample_file(workspace, "python")
    await call(unchecked, READ, file_path=str(path))
    old, broken, _ = breaking("python")
    r = await call(unchecked, EDIT, file_path=str(path), old_string=old, new_string=broken)
    assert r["ok"] and "syntax_errors" not in r and "syntax_check" not in r, r
    assert "Syntax check" not in r["message"]


async def test_files_of_no_checked_language_pass_unchecked(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "notes.md"
    path.write_text("# Notes\n\n- one\n")
    await call(client, READ, file_path=str(path))
    r = await call(client, EDIT, file_path=str(path), old_string="- one", new_string="- one (")
    assert r["ok"] and "syntax_errors" not in r, r


async def test_a_script_is_known_by_its_first_line(client: LanguageClient, workspace: Path) -> None:
    path = workspace / "deploy"
    path.write_text("#!/usr/bin/env bash\nif true; then\n  echo hi\nfi\n")
    await call(client, READ, file_path=str(path))
    r = await call(client, EDIT, file_path=str(path), old_string="fi\n", new_string="")
    assert r["ok"] and r["syntax_errors"], r


async def test_dry_runs_report_it_too(client: LanguageClient, workspace: Path) -> None:
    path, text = sample_file(workspace, "typescript")
    await call(client, READ, file_path=str(path))
    old, broken, _ = breaking("typescript")
    r = await call(
        client, EDIT, file_path=str(path), old_string=old, new_string=broken, dry_run=True
    )
    assert r["ok"] and r["dry_run"] and r["syntax_errors"], r
    assert "Syntax check: the change leaves" in r["message"]
    assert path.read_text() == text
    w = await call(
        client, WRITE, file_path=str(path), content=text.replace(old, broken), dry_run=True
    )
    assert w["ok"] and w["dry_run"] and w["syntax_errors"] == r["syntax_errors"], w
    c = await call(
        client, WRITE, file_path=str(workspace / "n.toml"), content="a = \n", dry_run=True
    )
    assert c["ok"] and c["type"] == "create" and c["syntax_errors"], c
    assert not (workspace / "n.toml").exists()


async def test_an_open_buffer_is_checked_by_its_language_id(
    editor_client: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    script = workspace / "tool"  # no extension, no #! line: only the editor knows
    script.write_text("def main():\n    return 1\n")
    uri = open_doc(editor_client, state, script, language_id="python")
    plain = workspace / "plain"
    plain.write_text("def main():\n    return 1\n")
    open_doc(editor_client, state, plain)  # plaintext: not checked
    await settle()
    for f in (script, plain):
        await call(editor_client, READ, file_path=str(f))
    r = await call(
        editor_client, EDIT, file_path=str(script), old_string="return 1", new_string="return (1"
    )
    assert r["ok"] and r["via"] == "workspaceEdit", r
    assert [e["line"] for e in r["syntax_errors"]] == [2], r
    assert state.buffers[uri].text == "def main():\n    return (1\n"
    r = await call(
        editor_client, EDIT, file_path=str(plain), old_string="return 1", new_string="return (1"
    )
    assert r["ok"] and "syntax_errors" not in r, r


async def test_an_open_buffer_with_unsaved_typing_is_judged_on_the_buffer(
    editor_client: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    path = workspace / "m.py"
    path.write_text("a = 1\nb = 2\n")
    # the user's buffer already has a broken line the disk does not
    open_doc(editor_client, state, path, text="a = 1\nb = (2\n")
    await settle()
    await call(editor_client, READ, file_path=str(path))
    r = await call(editor_client, EDIT, file_path=str(path), old_string="a = 1", new_string="a = 3")
    assert r["ok"] and r["syntax_errors"] == [], r  # the user's own error is not the agent's


def make_notebook() -> Any:
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Title"),
            new_code_cell("%matplotlib inline\nimport os\n!pip install x"),
            new_code_cell("x = 1\nprint(x)"),
        ]
    )
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Py"}
    return nb


async def test_notebook_code_cells_are_checked_one_by_one(
    client: LanguageClient, workspace: Path
) -> None:
    nb = make_notebook()
    path = workspace / "n.ipynb"
    path.write_text(nbformat.writes(nb))
    await call(client, READ, file_path=str(path))
    cell = nb.cells[2].id
    r = await call(
        client, NB_EDIT, file_path=str(path), cell_id=cell, new_source="x = (1\nprint(x)"
    )
    assert r["ok"], r
    assert r["syntax_errors"] == [
        {"line": 1, "column": 5, "message": "unclosed `(`", "excerpt": "x = (1", "cell": cell}
    ], r
    assert f"line 1, column 5 of cell {cell}" in r["message"]
    # IPython's magics are no errors, nor is a markdown cell's text
    magic = nb.cells[1].id
    r = await call(
        client,
        NB_EDIT,
        file_path=str(path),
        cell_id=magic,
        new_source="%time import sys\n!ls -la\nfiles = !ls\nos.path?",
    )
    assert r["ok"] and r["syntax_errors"] == [], r
    r = await call(
        client, NB_EDIT, file_path=str(path), cell_id=nb.cells[0].id, new_source="# (unclosed"
    )
    assert r["ok"] and r["syntax_errors"] == [], r
    # a new code cell is checked whole
    r = await call(
        client,
        NB_EDIT,
        file_path=str(path),
        cell_id=cell,
        edit_mode="insert",
        cell_type="code",
        new_source="def f(:\n    pass",
    )
    assert r["ok"] and r["syntax_errors"] and r["syntax_errors"][0]["cell"] != cell, r


async def test_a_check_that_cannot_finish_in_time_is_skipped_and_says_so(
    default_deadline: LanguageClient, workspace: Path
) -> None:
    client = default_deadline
    # a new file (no tree to start from) of valid Python under 1 MiB that takes about two
    # seconds to parse here: far over the 50 ms deadline on any machine
    text = "f(g(h(i(j(k(1, 2), 3), 4), 5), 6), 7)\n" * 25_000
    r = await call(client, WRITE, file_path=str(workspace / "slow.py"), content=text)
    assert r["ok"], {k: v for k, v in r.items() if k != "diff"}
    assert r["syntax_check"] == "skipped" and "syntax_errors" not in r
    assert "(The syntax check was skipped: it could not finish within 50 ms.)" in r["message"]
    # over 1 MiB: not even tried
    r = await call(client, WRITE, file_path=str(workspace / "big.py"), content="x = 1\n" * 200_000)
    assert r["ok"] and r["syntax_check"] == "skipped", {k: v for k, v in r.items() if k != "diff"}
    assert "(The syntax check was skipped: the file is too large to check.)" in r["message"]


@pytest.mark.slow
async def test_a_file_read_before_an_edit_is_checked_from_its_tree(
    client: LanguageClient, workspace: Path
) -> None:
    # some 10,000 lines: parsed in the background after the read, so the edit is checked
    path, text = sample_file(workspace, "python", units=1000)
    await call(client, READ, file_path=str(path), offset=5000, limit=10)
    await asyncio.sleep(2.0)  # the agent thinks; the tree is built meanwhile
    at = text.index("return a + (b or 0)", len(text) // 2)
    line = text[:at].count("\n") + 1
    await call(client, READ, file_path=str(path), offset=line - 2, limit=5)
    r = await call(
        client,
        EDIT,
        file_path=str(path),
        old_string=text[at - 40 : at] + "return a + (b or 0)",
        new_string=text[at - 40 : at] + "return a + (b or 0",
    )
    assert r["ok"] and "syntax_check" not in r, {k: v for k, v in r.items() if k != "diff"}
    assert [e["line"] for e in r["syntax_errors"]] == [line], r["syntax_errors"]


async def test_settings_switch_at_once(client: LanguageClient, workspace: Path) -> None:
    path, _ = sample_file(workspace, "c")
    await call(client, READ, file_path=str(path))
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": {"syntaxCheck": "block"}})
    )
    await settle()
    old, broken, _ = breaking("c")
    r = await call(client, EDIT, file_path=str(path), old_string=old, new_string=broken)
    assert r["ok"] is False and r["error"] == "syntax_error", r
