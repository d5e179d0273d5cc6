"""The syntax guard against what broke it, end to end over stdio with the real server: a
file nested thousands deep, edits and comments near an error the file already had, and
code the language's own tools accept but the grammar does not know."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from tests.conftest import call, client_with

READ, EDIT, WRITE = "steadyhand.read", "steadyhand.edit", "steadyhand.write"

blocking = client_with({"syntaxCheck": "block"})


async def test_a_file_nested_thousands_deep_is_edited_and_dry_run(
    blocking: LanguageClient, workspace: Path
) -> None:
    depth = 3000
    path = workspace / "deep.json"
    text = '{"pad": [1, 2, 3],\n "x": ' + '{"a": ' * depth + "1" + "}" * depth + ',\n "b": 2}\n'
    path.write_text(text)
    await call(blocking, READ, file_path=str(path))
    dry = await call(
        blocking, EDIT, file_path=str(path), old_string='"b": 2', new_string='"b": 3', dry_run=True
    )
    assert dry["ok"] and dry["syntax_errors"] == [], dry
    r = await call(blocking, EDIT, file_path=str(path), old_string='"b": 2', new_string='"b": 3')
    assert r["ok"] and r["syntax_errors"] == [], r
    # a break next to the nesting is still refused, with where it is
    r = await call(blocking, EDIT, file_path=str(path), old_string='"b": 3', new_string='"b": ')
    assert r["ok"] is False and r["error"] == "syntax_error", r
    assert r["syntax_errors"][0]["line"] == 3
    assert path.read_text() == text.replace('"b": 2', '"b": 3')
