"""Edge cases of edit matching end to end: the real server over stdio, edits on disk."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from tests.conftest import call


async def edit(client: LanguageClient, f: Path, old: str, new: str) -> dict[str, object]:
    await call(client, READ, file_path=f.name)
    return await call(client, EDIT, file_path=f.name, old_string=old, new_string=new)


async def test_tab_file_first_line_copied_without_indent(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "t.py"
    f.write_text("def f():\n\tif a:\n\t\tb()\n\treturn 1\n")
    r = await edit(client, f, "if a:\n    b()", "if a:\n    b()\nc()")
    assert r["ok"] and r["matched"] == "indentation", r
    assert f.read_text() == "def f():\n\tif a:\n\t\tb()\n\tc()\n\treturn 1\n"


async def test_blank_lines_keep_the_files_whitespace(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "b.py"
    f.write_text("def f():\n\tif x:\n\t\n\t\treturn 1\n")
    r = await edit(
        client, f, "    if x:\n    \n        return 1", "    if x:\n    \n        return 2"
    )
    assert r["ok"], r
    assert f.read_text() == "def f():\n\tif x:\n\t\n\t\treturn 2\n"


async def test_inserted_quoted_item_keeps_pairs(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "q.txt"
    f.write_text("f(\u201ca\u201d, \u201cb\u201d)\n")
    r = await edit(client, f, 'f("a", "b")', 'f("a", "z", "b")')
    assert r["ok"] and r["matched"] == "quotes", r
    assert f.read_text() == 'f(\u201ca\u201d, "z", \u201cb\u201d)\n'


async def test_mixed_endings_keep_unchanged_breaks(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "m.txt"
    f.write_bytes(b"a\r\nb\nc\r\nd\r\n")
    r = await edit(client, f, "b\nc", "B\nC")
    assert r["ok"], r
    assert f.read_bytes() == b"a\r\nB\nC\r\nd\r\n"
    g = workspace / "n.txt"
    g.write_bytes(b"a\rb\nc\r\n")
    r = await edit(client, g, "a\nb", "A\nB")
    assert r["ok"], r
    assert g.read_bytes() == b"A\rB\nc\r\n"


async def test_lone_cr_and_lf_never_merge_into_one_break(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "cr.txt"
    f.write_bytes(b"a\rX\nb\n")
    r = await edit(client, f, "X", "")
    assert r["ok"], r
    assert f.read_bytes() == b"a\r\r\nb\n"  # still three lines: a, an empty one, b
    r2 = await call(client, READ, file_path=f.name)
    assert r2["total_lines"] == 3, r2
