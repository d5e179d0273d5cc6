"""``steadyhand.createDirectory`` end to end: ``mkdir -p`` inside the workspace, with the
same confinement, deny and protected rules as a write, and the read-only sessions."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CREATE_DIRECTORY as MKDIR
from steadyhand.protocol.commands import LIST
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, call_raw, client_with

maker = client_with({"denyGlobs": ["secrets"]})


async def test_makes_the_folder_and_those_above_it(maker: LanguageClient, workspace: Path) -> None:
    made = await call(maker, MKDIR, path="a/b/c/")
    assert made["ok"] and made["existed"] is False
    assert made["created"] == ["a", "a/b", "a/b/c"]
    assert made["path"] == str(workspace / "a" / "b" / "c")
    assert (workspace / "a" / "b" / "c").is_dir()
    assert "with 2 folders above it" in made["message"]
    again = await call(maker, MKDIR, path=str(workspace / "a" / "b"))
    assert again["ok"] and again["existed"] is True and again["created"] == []
    assert "already exists" in again["message"]
    listed = await call(maker, LIST, type="folders")
    assert [e["path"] for e in listed["entries"]] == ["a", "a/b", "a/b/c"]


async def test_a_file_in_the_way_is_refused(maker: LanguageClient, workspace: Path) -> None:
    (workspace / "f.txt").write_text("x\n")
    for path in ("f.txt", "f.txt/sub"):
        refused = await call(maker, MKDIR, path=path)
        assert refused["error"] == "invalid_path", (path, refused)
    assert (workspace / "f.txt").read_text() == "x\n"


async def test_outside_denied_protected_and_read_only_are_refused(
    maker: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "out").symlink_to(outside)
    for path in (str(tmp_path / "elsewhere"), "out/new", "../x"):
        refused = await call(maker, MKDIR, path=path)
        assert refused["error"] == "outside_workspace", (path, refused)
    assert list(outside.iterdir()) == [] and not (tmp_path / "elsewhere").exists()
    assert (await call(maker, MKDIR, path="secrets/inner"))["error"] == "denied"
    protected = await call(maker, MKDIR, path=".git/hooks/extra")
    assert protected["error"] == "protected" and not (workspace / ".git").exists()
    assert (await call(maker, FORK, session="viewer", read_only=True))["ok"]
    read_only = await call(maker, MKDIR, path="new", session="viewer")
    assert read_only["error"] == "read_only" and not (workspace / "new").exists()
    with pytest.raises(Exception, match="path"):
        await call_raw(maker, MKDIR, [{}])
