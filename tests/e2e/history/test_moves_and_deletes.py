"""Moves and deletions in history, over stdio: listed by ``changes``, shown by
``change``, taken back by ``undo`` (by file and by id) and by ``rewind``, byte for
byte; an undo taken back again redoes it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import (
    CHANGE,
    CHANGES,
    CHECKPOINT,
    DELETE,
    EDIT,
    HISTORY,
    MOVE,
    READ,
    REWIND,
    UNDO,
    WRITE,
)
from tests.conftest import call, client_with

c = client_with()


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every file (its bytes) and folder (None) under ``root``."""
    out: dict[str, bytes | None] = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = None if p.is_dir() else p.read_bytes()
    return out


async def test_undo_by_file_and_by_id_move_it_back_and_again(
    c: LanguageClient, workspace: Path
) -> None:
    a, b = workspace / "a.txt", workspace / "sub" / "b.txt"
    a.write_text("v1\n")
    assert (await call(c, READ, file_path="a.txt"))["ok"]
    moved = await call(c, MOVE, source_path="a.txt", destination_path="sub/b.txt")
    # by the destination's path: its last change is the move
    first = await call(c, UNDO, file_path="sub/b.txt")
    assert first["ok"] and first["type"] == "move" and first["undone"] == moved["change_id"]
    assert a.read_text() == "v1\n" and not b.exists()
    assert not (workspace / "sub").exists()  # the folder the move made went with it
    # undoing that undo (by the source's path) moves it again
    second = await call(c, UNDO, file_path="a.txt")
    assert second["ok"] and b.read_text() == "v1\n" and not a.exists(), second
    listing = await call(c, HISTORY, file_path=str(b))
    kinds = [v.get("kind") for v in listing["versions"]]
    assert kinds == ["move", "move", "move"] and "moved to" in listing["message"], listing
    # by id, after an edit there: the edit moves back with it
    assert (await call(c, EDIT, file_path="sub/b.txt", old_string="v1", new_string="v2"))["ok"]
    third = await call(c, UNDO, id=second["change_ids"][0])
    assert third["ok"] and a.read_text() == "v2\n" and not b.exists(), third


async def test_a_replacing_move_taken_back_by_id_brings_both_back_byte_for_byte(
    c: LanguageClient, workspace: Path
) -> None:
    a, b = workspace / "a.txt", workspace / "b.txt"
    a.write_bytes(b"new\r\n")
    b.write_bytes(b"\xef\xbb\xbfold\n")
    os.chmod(b, 0o640)
    assert (await call(c, READ, file_path="b.txt"))["ok"]
    moved = await call(c, MOVE, source_path="a.txt", destination_path="b.txt", overwrite=True)
    assert moved["ok"] and b.read_bytes() == b"new\r\n", moved
    listed = await call(c, CHANGES)
    item = listed["changes"][0]
    assert item["kind"] == "move" and item["path"] == str(a) and item["destination"] == str(b)
    assert item["replaced"] is True and item["current"] and item["restorable"], item
    shown = await call(c, CHANGE, id=moved["change_id"])
    assert shown["ok"] and shown["before"] == shown["after"] == "new\r\n", shown
    assert f"rename from {a}" in shown["diff"]
    back = await call(c, UNDO, id=moved["change_id"])
    assert back["ok"], back
    assert a.read_bytes() == b"new\r\n" and b.read_bytes() == b"\xef\xbb\xbfold\n"
    assert b.stat().st_mode & 0o777 == 0o640


async def test_a_deleted_file_comes_back_by_file_path_and_is_listed(
    c: LanguageClient, workspace: Path
) -> None:
    f = workspace / "notes.md"
    f.write_bytes(b"# Notes\n\nline\n")
    assert (await call(c, READ, file_path="notes.md"))["ok"]
    gone = await call(c, DELETE, file_path="notes.md")
    assert gone["ok"] and not f.exists(), gone
    listed = await call(c, CHANGES, path=str(f))
    item = listed["changes"][0]
    assert item["kind"] == "delete" and item["removed"] == 3 and item["current"], item
    shown = await call(c, CHANGE, id=gone["change_id"])
    assert shown["before"] == "# Notes\n\nline\n" and shown["after"] is None, shown
    assert "-line" in shown["diff"]
    back = await call(c, UNDO, file_path=str(f))
    assert back["ok"] and f.read_bytes() == b"# Notes\n\nline\n", back
    # what the session knew of it is back too: it edits without reading again
    assert (await call(c, EDIT, file_path=str(f), old_string="line", new_string="l"))["ok"]


async def test_a_later_move_stands_in_the_way_of_an_earlier_change_and_says_so(
    c: LanguageClient, workspace: Path
) -> None:
    a = workspace / "a.txt"
    a.write_text("1\n")
    assert (await call(c, READ, file_path="a.txt"))["ok"]
    assert (await call(c, EDIT, file_path="a.txt", old_string="1", new_string="2"))["ok"]
    moved = await call(c, MOVE, source_path="a.txt", destination_path="b.txt")
    listed = await call(c, CHANGES)
    edit_id = next(x["id"] for x in listed["changes"] if x["tool"] == "edit")
    refused = await call(c, UNDO, id=edit_id)
    assert refused["error"] == "conflict" and moved["change_id"] in refused["message"], refused
    assert (workspace / "b.txt").read_text() == "2\n"
    # a move that a later move built on is refused too
    again = await call(c, MOVE, source_path="b.txt", destination_path="c.txt")
    assert again["ok"]
    first = await call(c, UNDO, id=moved["change_id"])
    assert first["error"] == "conflict" and again["change_id"] in first["message"], first


async def test_rewind_takes_back_moves_deletions_and_edits_in_order(
    c: LanguageClient, workspace: Path
) -> None:
    (workspace / "keep").mkdir()
    (workspace / "keep" / "k.txt").write_text("k\n")
    (workspace / "e.txt").write_bytes(b"e1\r\ne2\r\n")
    (workspace / "d" / "deep").mkdir(parents=True)
    (workspace / "d" / "deep" / "x.bin").write_bytes(bytes(range(200)))
    (workspace / "d" / "y.txt").write_text("y\n")
    before = _tree(workspace)
    cp = await call(c, CHECKPOINT, label="start")
    assert cp["ok"]
    assert (await call(c, READ, file_path="e.txt"))["ok"]
    assert (await call(c, EDIT, file_path="e.txt", old_string="e1", new_string="E1"))["ok"]
    assert (await call(c, MOVE, source_path="e.txt", destination_path="moved/e.txt"))["ok"]
    assert (await call(c, EDIT, file_path="moved/e.txt", old_string="e2", new_string="E2"))["ok"]
    assert (await call(c, MOVE, source_path="keep", destination_path="kept"))["ok"]
    assert (await call(c, DELETE, file_path="d", recursive=True, force=True))["ok"]
    assert (await call(c, WRITE, file_path="new.txt", content="new\n"))["ok"]
    assert _tree(workspace) != before
    r = await call(c, REWIND, checkpoint="start")
    assert r["ok"], r
    await asyncio.sleep(0.3)  # the copies the restores displaced go just after the answer
    assert _tree(workspace) == before, r["message"]
    assert {m["to"] for m in r["moved_back"]} == {str(workspace / "e.txt"), str(workspace / "keep")}
    assert r["made_again"] == [str(workspace / "d")] and r["skipped"] == []
    assert str(workspace / "new.txt") in r["deleted"]


async def test_rewind_skips_a_move_another_session_built_on(
    c: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    assert (await call(c, CHECKPOINT, label="cp"))["ok"]
    assert (await call(c, MOVE, source_path="a.txt", destination_path="b.txt"))["ok"]
    other = await call(c, MOVE, source_path="b.txt", destination_path="c.txt", session="other")
    assert other["ok"]
    r = await call(c, REWIND, checkpoint="cp")
    assert r["ok"] and r["moved_back"] == [], r
    assert r["skipped"][0]["path"] == str(workspace / "a.txt")
    assert "'other'" in r["skipped"][0]["reason"]
    assert (workspace / "c.txt").read_text() == "a\n"
