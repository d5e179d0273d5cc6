"""The outline of a text file too large to read whole: a refusal that maps the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from tests.conftest import call


def _configure(client: LanguageClient, **settings: object) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": settings})
    )


def python_source(functions: int) -> tuple[str, dict[str, int]]:
    """A module with a class and many functions; returns it and the line of each definition."""
    lines = ['"""A generated module."""', "", "import os", ""]
    where: dict[str, int] = {}
    lines.append("class Registry:")
    where["Registry"] = len(lines)
    lines += ["    def method(self):", "        return 1", ""]
    for i in range(functions):
        lines.append(f"def handler_{i}(request, *args):")
        where[f"handler_{i}"] = len(lines)
        lines += [f"    value = {i} * 2  # " + "padding " * 8, "    return value", ""]
    lines.append("async def main():")
    where["main"] = len(lines)
    lines.append("    pass")
    return "\n".join(lines) + "\n", where


async def test_large_python_file_outline(client: LanguageClient, workspace: Path) -> None:
    text, where = python_source(4000)  # about 370 KB, over the 256 KiB default cap
    path = workspace / "big_module.py"
    path.write_text(text)
    total = text.count("\n")
    r = await call(client, READ, file_path="big_module.py")
    assert r["ok"] is False and r["error"] == "too_large" and r["type"] == "outline"
    assert r["total_lines"] == total and r["size"] == len(text.encode())
    assert "offset" in r["message"] and "limit" in r["message"]
    msg = r["message"]
    assert '     1\t"""A generated module."""' in msg and r["head_lines"] == 20
    entries = {e["text"]: e["line"] for e in r["outline"]}
    assert entries["class Registry:"] == where["Registry"]
    assert entries["def handler_0(request, *args):"] == where["handler_0"]
    assert "    def method(self):" not in entries  # only top-level definitions
    assert len(r["outline"]) == 300 and r["outline_more"] == 4002 - 300
    assert f"{where['handler_5']:>6}\tdef handler_5(request, *args):" in msg
    # the outline's line numbers are the ones a ranged read uses
    line = where["handler_10"]
    part = await call(client, READ, file_path="big_module.py", offset=line, limit=2)
    assert part["ok"] and part["message"].startswith(f"{line:>6}\tdef handler_10(")
    # the first lines were shown: editing them needs no other read
    e = await call(
        client,
        EDIT,
        file_path="big_module.py",
        old_string="import os",
        new_string="import sys",
    )
    assert e["ok"], e


async def test_markdown_headings_skip_code_fences(client: LanguageClient, workspace: Path) -> None:
    _configure(client, maxReadBytes=1000)
    body = ["# Guide", "", "intro " * 30, "", "## Install", "```bash", "# not a heading", "```"]
    body += ["text line"] * 100 + ["## Usage", "~~~", "# also not", "~~~", "### Details", "end"]
    (workspace / "guide.md").write_text("\r\n".join(body) + "\r\n")
    r = await call(client, READ, file_path="guide.md")
    assert r["error"] == "too_large" and r["type"] == "outline"
    got = [(e["line"], e["text"]) for e in r["outline"]]
    want = [(i + 1, t) for i, t in enumerate(body) if t.startswith("#") and "not" not in t]
    assert got == want and "Headings" in r["message"]
    assert r["total_lines"] == len(body)


async def test_token_cap_outline(client: LanguageClient, workspace: Path) -> None:
    _configure(client, maxReadTokens=500)
    src = "\n".join(f"func Handler{i}(w http.ResponseWriter) {{\n\treturn\n}}" for i in range(60))
    (workspace / "h.go").write_text("package main\n\n" + src + "\n")
    r = await call(client, READ, file_path="h.go")
    assert r["ok"] is False and r["error"] == "too_large" and "token" in r["message"]
    assert r["type"] == "outline" and r["outline"][0] == {
        "line": 3,
        "text": "func Handler0(w http.ResponseWriter) {",
        "kind": "definition",
    }


async def test_outline_of_unknown_kind_and_long_lines(
    client: LanguageClient, workspace: Path
) -> None:
    _configure(client, maxReadBytes=10_000)
    (workspace / "data.log").write_text("x" * 5000 + "\n" + "entry\n" * 3000)
    r = await call(client, READ, file_path="data.log")
    assert r["type"] == "outline" and r["outline"] == [] and r["total_lines"] == 3001
    assert "No structure is detected" in r["message"]
    assert "[line cut: 3000 more characters]" in r["message"]


def _peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_outline_of_a_huge_file_in_bounded_memory(
    client: LanguageClient, workspace: Path
) -> None:
    path = workspace / "huge.py"
    block = "".join(f"def f{i}():\n    return {i}  # {'z' * 40}\n\n" for i in range(2000))
    size = 0
    with open(path, "w") as fh:
        while size < 80 * 1024 * 1024:
            fh.write(block)
            size += len(block)
    server = getattr(client, "_server", None) or getattr(client, "server", None)
    pid = getattr(server, "pid", None)
    assert isinstance(pid, int)
    before = _peak_rss_kb(pid)
    r = await call(client, READ, file_path="huge.py")
    after = _peak_rss_kb(pid)
    assert r["type"] == "outline" and r["size"] == size
    assert r["total_lines"] == (size // len(block)) * 6000
    assert r["outline"][1] == {"line": 4, "text": "def f1():", "kind": "definition"}
    assert after - before < 48 * 1024, (before, after)  # far below the file's 80 MB
