"""``steadyhand.search`` end to end: output modes and their forms, filters, ignore and
deny rules, confinement, refusals, bounds, the two engines answering alike through the
real command, and open buffers searched as the editor holds them."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, PING, SEARCH
from tests.conftest import call, call_raw, client_with, init_params, server_config
from tests.editor import open_doc, type_text

OPTIONS = {"denyGlobs": ["secrets", "*.pem"]}
searcher = client_with(OPTIONS)
editor_client = client_with(OPTIONS, editor=True)


def _engine_client(engine: str):  # type: ignore[no-untyped-def]
    @pytest_lsp.fixture(config=server_config())
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        opts = {**OPTIONS, "searchEngine": engine, "historyDir": str(workspace.parent / engine)}
        await lsp_client.initialize_session(init_params(workspace, opts))
        yield
        await lsp_client.shutdown_session()

    return fixture


by_ripgrep = _engine_client("ripgrep")
by_python = _engine_client("python")


def _tree(ws: Path, files: dict[str, str | bytes]) -> None:
    for rel, data in files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            p.write_bytes(data)
        else:
            p.write_text(data)


SAMPLE: dict[str, str | bytes] = {
    ".gitignore": "build/\n*.log\n",
    "src/app.py": "import os\n\ndef main():\n    value = compute()\n    return value\n",
    "src/util.py": "def compute():\n    return 42  # value\n",
    "src/web/page.ts": "export const value = 1;\r\nconst other = 2;\r\n",
    "docs/guide.md": "# Guide\nThe Value is here.\n",
    "build/out.py": "value = 'built'\n",
    "debug.log": "value logged\n",
    "secrets/token.txt": "value = 'hidden'\n",
    "key.pem": "value\n",
    "data.bin": b"value\x00\x01\x02",
    "u16.txt": "value in utf-16\n".encode("utf-16"),
}


async def test_output_modes(searcher: LanguageClient, workspace: Path) -> None:
    _tree(workspace, SAMPLE)
    files = await call(searcher, SEARCH, pattern="value")
    assert files["files"] == ["src/app.py", "src/util.py", "src/web/page.ts", "u16.txt"]
    assert files["total_files"] == 4 and "total_matches" not in files
    assert files["message"].splitlines()[1:] == files["files"]
    content = await call(searcher, SEARCH, pattern="value", output_mode="content", path="src")
    assert content["message"].splitlines()[1:] == [
        "src/app.py:4:    value = compute()",
        "src/app.py:5:    return value",
        "src/util.py:2:    return 42  # value",
        "src/web/page.ts:1:export const value = 1;",
    ]
    assert content["matches"][0] == {
        "path": "src/app.py",
        "line": 4,
        "text": "    value = compute()",
    }
    assert content["path"] == str(workspace / "src")
    around = await call(
        searcher, SEARCH, pattern="value", output_mode="content", path="src", before=1, after=0
    )
    assert around["message"].splitlines()[1:] == [
        "src/app.py-3-def main():",
        "src/app.py:4:    value = compute()",
        "src/app.py:5:    return value",
        "--",
        "src/util.py-1-def compute():",
        "src/util.py:2:    return 42  # value",
        "--",
        "src/web/page.ts:1:export const value = 1;",
    ]
    counts = await call(searcher, SEARCH, pattern="value", output_mode="count")
    assert counts["counts"][0] == {"path": "src/app.py", "count": 2}
    assert "src/app.py:2" in counts["message"].splitlines()
    grep_name = await call(searcher, SEARCH, pattern="value", output_mode="files_with_matches")
    assert grep_name["files"] == files["files"]


async def test_regex_literal_case_multiline_glob_and_type(
    searcher: LanguageClient, workspace: Path
) -> None:
    _tree(workspace, SAMPLE)
    assert (await call(searcher, SEARCH, pattern=r"return \d+"))["files"] == ["src/util.py"]
    assert (await call(searcher, SEARCH, pattern="= compute()", literal=True))["files"] == [
        "src/app.py"
    ]
    assert (await call(searcher, SEARCH, pattern="THE VALUE", case_insensitive=True))["files"] == [
        "docs/guide.md"
    ]
    multi = await call(
        searcher, SEARCH, pattern=r"main\(\):\n\s+value", multiline=True, output_mode="content"
    )
    assert [m["line"] for m in multi["matches"]] == [3, 4]
    assert (await call(searcher, SEARCH, pattern="value", type="py"))["files"] == [
        "src/app.py",
        "src/util.py",
    ]
    assert (await call(searcher, SEARCH, pattern="value", type="typescript"))["files"] == [
        "src/web/page.ts"
    ]
    assert (await call(searcher, SEARCH, pattern="value", glob="src/*.py"))["files"] == [
        "src/app.py",
        "src/util.py",
    ]
    assert (await call(searcher, SEARCH, pattern="value", glob="!*.py"))["files"] == [
        "src/web/page.ts",
        "u16.txt",
    ]
    one_file = await call(searcher, SEARCH, pattern="value", path="src/app.py", output_mode="count")
    assert one_file["counts"] == [{"path": "src/app.py", "count": 2}]


async def test_bad_patterns_and_types_are_refused_with_a_code(
    searcher: LanguageClient, workspace: Path
) -> None:
    _tree(workspace, SAMPLE)
    bad = await call(searcher, SEARCH, pattern="compute(")
    assert bad["ok"] is False and bad["error"] == "invalid_pattern"
    assert "literal: true" in bad["message"]
    kind = await call(searcher, SEARCH, pattern="x", type="pyhton")
    assert kind["error"] == "invalid_pattern" and "py" in kind["message"]
    glob = await call(searcher, SEARCH, pattern="x", glob="[z-a]")
    assert glob["error"] == "invalid_pattern"
    with pytest.raises(Exception, match="output_mode"):
        await call_raw(searcher, SEARCH, [{"pattern": "x", "output_mode": "lines"}])
    with pytest.raises(Exception, match="pattern"):
        await call_raw(searcher, SEARCH, [{"pattern": ""}])


async def test_ignored_denied_git_and_binary_files_are_not_searched(
    searcher: LanguageClient, workspace: Path
) -> None:
    _tree(workspace, SAMPLE)
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("value\n")
    found = (await call(searcher, SEARCH, pattern="value"))["files"]
    assert not [f for f in found if f.startswith(("build", "secrets", ".git")) or "." in f[:1]]
    assert "debug.log" not in found and "key.pem" not in found and "data.bin" not in found
    every = (await call(searcher, SEARCH, pattern="value", include_ignored=True))["files"]
    assert {"build/out.py", "debug.log"} <= set(every)
    assert not [f for f in every if f.startswith(("secrets", ".git")) or f.endswith(".pem")]
    assert (await call(searcher, SEARCH, pattern="x", path="secrets"))["error"] == "denied"
    explicit = await call(searcher, SEARCH, pattern="value", path="build")
    assert explicit["files"] == ["build/out.py"]  # a folder named on purpose is searched
    binary = await call(searcher, SEARCH, pattern="value", path="data.bin")
    assert binary["error"] == "binary"


async def test_nothing_outside_the_workspace_is_searched(
    searcher: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("needle outside\n")
    (workspace / "in.txt").write_text("needle inside\n")
    (workspace / "link_dir").symlink_to(outside)
    (workspace / "link_file.txt").symlink_to(outside / "private.txt")
    found = await call(searcher, SEARCH, pattern="needle", output_mode="content")
    assert [m["path"] for m in found["matches"]] == ["in.txt"]
    for path in (str(outside), "link_dir", "link_file.txt", "../outside"):
        refused = await call(searcher, SEARCH, pattern="needle", path=path)
        assert refused["error"] == "outside_workspace", (path, refused)
        assert "needle outside" not in refused["message"]


async def test_a_file_with_another_name_outside_is_not_searched(
    by_ripgrep: LanguageClient, by_python: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("needle outside\n")
    os.link(outside, workspace / "linked.txt")
    (workspace / "own.txt").write_text("needle inside\n")
    for client in (by_ripgrep, by_python):
        found = await call(client, SEARCH, pattern="needle", include_ignored=True)
        assert found["files"] == ["own.txt"], found


async def test_a_search_is_bounded_and_says_what_it_left_out(
    searcher: LanguageClient, workspace: Path
) -> None:
    _tree(workspace, {f"f{i:02d}.txt": "hit\nhit\n" for i in range(30)})
    files = await call(searcher, SEARCH, pattern="hit", limit=5)
    assert len(files["files"]) == 5 and files["files_more"] == 25
    assert files["truncated"] is True and files["cut"] == "limit"
    assert files["total_files"] == 30 and "showing the first 5 files" in files["message"]
    lines = await call(searcher, SEARCH, pattern="hit", output_mode="content", limit=7)
    assert len(lines["message"].splitlines()) == 1 + 7 + 1
    assert lines["matches_more"] == 60 - 7 and lines["cut"] == "limit"
    (workspace / "long.txt").write_text("x" * 5000 + "needle" + "y" * 5000 + "\n")
    long = await call(searcher, SEARCH, pattern="needle", output_mode="content")
    (text,) = [m["text"] for m in long["matches"]]
    assert "needle" in text and len(text) < 600 and "characters cut" in text


async def test_a_search_is_no_read(searcher: LanguageClient, workspace: Path) -> None:
    f = workspace / "a.py"
    f.write_text("x = 1\n")
    assert (await call(searcher, SEARCH, pattern="x", output_mode="content"))["ok"]
    refused = await call(searcher, EDIT, file_path=str(f), old_string="x = 1", new_string="x = 2")
    assert refused["error"] == "not_read"


async def test_the_server_answers_while_a_search_runs(
    by_python: LanguageClient, workspace: Path
) -> None:
    for d in range(40):
        folder = workspace / f"d{d}"
        folder.mkdir()
        for f in range(100):
            (folder / f"f{f}.txt").write_text("abc " * 200 + "\n")
    order: list[str] = []

    async def run(name: str, command: str, **params: Any) -> None:
        await call(by_python, command, **params)
        order.append(name)

    await asyncio.gather(run("search", SEARCH, pattern=r"(a|b|c)+\s+zzz"), run("ping", PING))
    assert order[0] == "ping", order


# -- both engines, through the real command -------------------------------------------

PARITY: dict[str, str | bytes] = {
    **SAMPLE,
    "sub/.gitignore": "*.md\n!keep.md\n",
    "sub/a.md": "value\n",
    "sub/keep.md": "value\nVALUE\n",
    "sub/deep/.ignore": "x*\n",
    "sub/deep/xray.txt": "value\n",
    "sub/deep/ok.txt": "foo value bar\r\nvalue\r\n\r\nend",
    "unicode.txt": "café value\nnaïve\n",
    "empty.txt": "",
}
QUERIES: list[dict[str, Any]] = [
    {"pattern": "value"},
    {"pattern": "value", "output_mode": "content", "context": 1},
    {"pattern": "VALUE", "case_insensitive": True, "output_mode": "count"},
    {"pattern": "^value$", "output_mode": "content"},
    {"pattern": r"\bva\w+", "output_mode": "content", "after": 2},
    {"pattern": "(value", "literal": True},
    {"pattern": "é", "output_mode": "content"},
    {"pattern": "value", "include_ignored": True},
    {"pattern": "value", "path": "sub"},
    {"pattern": "value", "type": "md", "include_ignored": True},
    {"pattern": "bar\\r?\\nvalue", "multiline": True, "output_mode": "content"},
    {"pattern": "(?=value)v", "output_mode": "content"},
]


@pytest.mark.parametrize("query", QUERIES, ids=[str(i) for i in range(len(QUERIES))])
async def test_ripgrep_and_python_answer_alike(
    by_ripgrep: LanguageClient, by_python: LanguageClient, workspace: Path, query: dict[str, Any]
) -> None:
    _tree(workspace, PARITY)
    rg = await call(by_ripgrep, SEARCH, **query)
    py = await call(by_python, SEARCH, **query)
    assert py["engine"] == "python"
    portable = "(?=" not in query["pattern"]
    assert rg["engine"] == ("ripgrep" if portable else "python"), rg
    assert {k: v for k, v in rg.items() if k != "engine"} == {
        k: v for k, v in py.items() if k != "engine"
    }
    assert rg["ok"]


# -- open buffers ----------------------------------------------------------------------


async def test_open_buffers_are_searched_as_the_editor_holds_them(
    editor_client: LanguageClient, workspace: Path
) -> None:
    _tree(
        workspace,
        {
            ".gitignore": "ignored/\n",
            "a.py": "def old_name():\n    pass\n",
            "b.py": "old_name()\n",
            "ignored/c.py": "x\n",
            "secrets/d.py": "x\n",
        },
    )
    state = editor_client.editor  # type: ignore[attr-defined]
    uri = open_doc(editor_client, state, workspace / "a.py")
    type_text(editor_client, state, uri, "def new_name():\n    pass\n\n# typed new_name\n")
    # Buffers the search must leave alone: ignored, denied, not yet on disk (new file).
    for rel in ("ignored/c.py", "secrets/d.py"):
        u = open_doc(editor_client, state, workspace / rel)
        type_text(editor_client, state, u, "new_name here\n")
    fresh = open_doc(editor_client, state, workspace / "fresh.py", "new_name = 1\n")
    assert fresh
    found = await call(editor_client, SEARCH, pattern="new_name", output_mode="content")
    assert found["message"].splitlines()[1:] == [
        "a.py:1:def new_name():",
        "a.py:4:# typed new_name",
        "fresh.py:1:new_name = 1",
    ]
    old = await call(editor_client, SEARCH, pattern="old_name")
    assert old["files"] == ["b.py"]  # the disk still has it in a.py; the buffer does not
    counted = await call(
        editor_client, SEARCH, pattern="new_name", output_mode="count", path="a.py"
    )
    assert counted["counts"] == [{"path": "a.py", "count": 2}]
    with_ignored = await call(editor_client, SEARCH, pattern="new_name", include_ignored=True)
    assert "ignored/c.py" in with_ignored["files"] and "secrets/d.py" not in with_ignored["files"]
    # A search is no read, of a buffer either.
    refused = await call(
        editor_client, EDIT, file_path=str(workspace / "a.py"), old_string="pass", new_string="x"
    )
    assert refused["error"] == "not_read"
