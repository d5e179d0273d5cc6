"""The syntax guard against what broke it, end to end over stdio with the real server: a
file nested thousands deep, edits and comments near an error the file already had, and
code the language's own tools accept but the grammar does not know."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from tests.conftest import call, client_with
from tests.unit.syntax.samples import SAMPLES

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


async def test_block_lets_an_edit_next_to_an_error_the_file_had_through(
    blocking: LanguageClient, workspace: Path
) -> None:
    path = workspace / "mod.py"
    text = SAMPLES["python"].text(4).replace("if a > 0:", "if a > 0", 1)  # broken already
    path.write_text(text)
    await call(blocking, READ, file_path=str(path))
    r = await call(
        blocking,
        EDIT,
        file_path=str(path),
        old_string="    if a > 0\n        return a + (b or 0)",
        new_string="    if a > 0\n        import logging",
    )
    assert r["ok"] and r["syntax_errors"] == [] and "syntax_warnings" not in r, r
    assert "Syntax check" not in r["message"]
    # a break of its own, three functions away from that error, is still refused
    current = path.read_text()
    r = await call(
        blocking, EDIT, file_path=str(path), old_string="    pass\n", new_string="    pass(\n"
    )
    assert r["ok"] is False and r["error"] == "syntax_error", r
    assert r["syntax_errors"][0]["line"] == current.count("\n")
    assert path.read_text() == current


async def test_block_lets_a_comment_only_write_through(
    blocking: LanguageClient, workspace: Path
) -> None:
    path = workspace / "app.js"
    text = SAMPLES["javascript"].text(1).replace("if (a > 0) {", "if (a", 1)  # unfinished
    path.write_text(text)
    await call(blocking, READ, file_path=str(path))
    lines = text.split("\n")
    noted = "\n".join([*lines[:6], "// note", *lines[6:]])
    r = await call(blocking, WRITE, file_path=str(path), content=noted, dry_run=True)
    assert r["ok"] and r["syntax_errors"] == [], r
    r = await call(blocking, WRITE, file_path=str(path), content=noted)
    assert r["ok"] and r["syntax_errors"] == [] and "syntax_warnings" not in r, r
    assert path.read_text() == noted


async def test_an_error_the_check_cannot_pin_on_the_change_is_a_warning(
    blocking: LanguageClient, workspace: Path
) -> None:
    path = workspace / "mod.py"
    text = SAMPLES["python"].text(1).replace("if a > 0:", "if a > 0", 1)  # broken already
    path.write_text(text)
    await call(blocking, READ, file_path=str(path))
    # the loop's header goes, next to the old error: its body is now indented for
    # nothing, but where one error ends and the other starts the check cannot tell
    r = await call(
        blocking, EDIT, file_path=str(path), old_string="    for x in items:\n", new_string=""
    )
    assert r["ok"] and r["syntax_errors"] == [], r
    warnings = r["syntax_warnings"]
    assert warnings and set(warnings[0]) == {"line", "column", "message", "excerpt", "reason"}
    assert "the file already had a syntax error at line" in warnings[0]["reason"]
    assert "Syntax check: possibly a syntax error at line" in r["message"]
    assert "not counted against the change" in r["message"]
    assert path.read_text() == text.replace("    for x in items:\n", "")


async def test_block_never_refuses_what_the_languages_own_tools_accept(
    blocking: LanguageClient, workspace: Path
) -> None:
    # a C header whose `extern "C" {` is split by `#ifdef __cplusplus` (cc compiles it)
    header = (
        '#ifndef LIB_H\n#define LIB_H\n\n#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
        "int lib_init(void);\n\n#ifdef __cplusplus\n}\n#endif\n\n#endif\n"
    )
    r = await call(blocking, WRITE, file_path=str(workspace / "lib.h"), content=header)
    assert r["ok"] and r["syntax_errors"] == [], r
    assert "preprocessor conditionals" in r["syntax_warnings"][0]["reason"]
    assert "Syntax check: possibly a syntax error at line" in r["message"]
    # Python 3.13 type parameter defaults
    py = "def first[T = int](items: list[T]) -> T:\n    return items[0]\n"
    r = await call(blocking, WRITE, file_path=str(workspace / "gen.py"), content=py)
    assert r["ok"] and r["syntax_errors"] == [], r
    assert "Python 3.13" in r["syntax_warnings"][0]["reason"]
    # C++23 `if consteval`, put into a file that was valid
    cpp = workspace / "f.cpp"
    cpp.write_text("int f(int x) {\n    return x;\n}\n")
    await call(blocking, READ, file_path=str(cpp))
    r = await call(
        blocking,
        EDIT,
        file_path=str(cpp),
        old_string="    return x;\n",
        new_string="    if consteval {\n        return 1;\n    }\n    return x;\n",
    )
    assert r["ok"] and r["syntax_errors"] == [], r
    assert "C++23" in r["syntax_warnings"][0]["reason"]
    # a tsconfig.json with comments and trailing commas: nothing to say at all
    tsconfig = workspace / "tsconfig.json"
    text = '{\n  // options\n  "compilerOptions": {\n    "strict": true,\n  },\n}\n'
    r = await call(blocking, WRITE, file_path=str(tsconfig), content=text)
    assert r["ok"] and r["syntax_errors"] == [] and "syntax_warnings" not in r, r
    r = await call(
        blocking,
        EDIT,
        file_path=str(tsconfig),
        old_string='"strict": true,',
        new_string='"strict": true,\n    "target": "es2022",',
    )
    assert r["ok"] and r["syntax_errors"] == [] and "syntax_warnings" not in r, r
    # ... while a real error there is still refused
    r = await call(
        blocking, EDIT, file_path=str(tsconfig), old_string='"es2022"', new_string='"es2022'
    )
    assert r["ok"] is False and r["error"] == "syntax_error", r
