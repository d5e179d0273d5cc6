"""Taking changes back through the tools, in-process over the disk: an id names one
change or is refused, "taken back already" only when the file holds the lines from
before, line endings and encodings are changes too, and two servers sharing a store
never take each other's sessions for their own."""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

from steadyhand.context import ToolContext
from steadyhand.protocol.params import (
    ChangeParams,
    ChangesParams,
    EditParams,
    HistoryParams,
    UndoParams,
)
from steadyhand.tools import changes as changes_tool
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import history as history_tool
from steadyhand.tools import undo as undo_tool
from tests.unit.apply.test_history_world import (
    _ctx,
    _run,
    _store,
    checkpoint,
    read,
    rewind,
    write,
)

Result = dict[str, Any]


async def edit(ctx: ToolContext, f: Path, old: str, new: str, session: str = "default") -> Result:
    return await _run(lambda: edit_tool.edit(ctx, EditParams(str(f), old, new, session=session)))


async def undo_id(ctx: ToolContext, change_id: str, f: Path | None = None) -> Result:
    path = str(f) if f is not None else None
    return await _run(lambda: undo_tool.undo(ctx, UndoParams(path, id=change_id)))


async def undo_session(ctx: ToolContext, f: Path, session: str) -> Result:
    return await _run(lambda: undo_tool.undo(ctx, UndoParams(str(f), session)))


async def listed(ctx: ToolContext, **params: Any) -> Result:
    return await _run(lambda: changes_tool.changes(ctx, ChangesParams(**params)))


async def change(ctx: ToolContext, change_id: str, f: Path | None = None) -> Result:
    path = str(f) if f is not None else None
    return await _run(lambda: changes_tool.change(ctx, ChangeParams(change_id, path)))


async def last_id(ctx: ToolContext, f: Path) -> str:
    out = await _run(lambda: history_tool.history(ctx, HistoryParams(str(f))))
    assert out["ok"], out
    return str(out["versions"][0]["id"])


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _rewrite_index(ctx: ToolContext, change: Any) -> None:
    """Rewrite the workspace store's index line by line with ``change`` (a function of
    each line's JSON object), as an earlier version could have written it."""
    store = _store(ctx)
    store.flush()
    index = Path(store.index_path)
    lines = [json.loads(x) for x in index.read_text().splitlines()]
    index.write_text("".join(json.dumps(change(obj)) + "\n" for obj in lines))


# -- an id names one change ------------------------------------------------------------


async def _two_changes_sharing_an_id(tmp_path: Path) -> tuple[ToolContext, Path, Path, str]:
    """Changes to ``a`` then ``b`` whose index lines hold the same id, as a store of an
    earlier version (32-bit ids, never checked) could hold them."""
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    a, b = ws / "a.txt", ws / "b.txt"
    for f in (a, b):
        f.write_text(f"{f.stem} 1\n")
        await read(ctx, f)
        assert (await write(ctx, f, f"{f.stem} 2\n"))["ok"]
    shared = await last_id(ctx, b)

    def same_id(obj: dict[str, Any]) -> dict[str, Any]:
        return {**obj, "id": shared} if obj.get("t") == "change" else obj

    _rewrite_index(ctx, same_id)
    return ctx, a, b, shared


async def test_an_id_two_changes_share_is_refused_never_guessed(tmp_path: Path) -> None:
    ctx, a, b, shared = await _two_changes_sharing_an_id(tmp_path)

    out = await undo_id(ctx, shared)
    assert out["ok"] is False and out["error"] == "ambiguous", out
    assert "file_path" in out["message"] and "nothing was changed" in out["message"]
    assert sorted(c["path"] for c in out["candidates"]) == [str(a), str(b)]
    assert (a.read_text(), b.read_text()) == ("a 2\n", "b 2\n")
    shown = await change(ctx, shared)
    assert shown["ok"] is False and shown["error"] == "ambiguous", shown

    # the file tells them apart
    took = await undo_id(ctx, shared, a)
    assert took["ok"], took
    assert (a.read_text(), b.read_text()) == ("a 1\n", "b 2\n")
    shown = await change(ctx, shared, b)
    assert shown["ok"] and shown["before"] == "b 1\n", shown


async def test_an_id_in_two_stores_read_together_is_refused(tmp_path: Path) -> None:
    # a change recorded in the folder's store and one in an earlier version's store for
    # several folders, holding the same id: both are read for the folder's files
    from steadyhand.history.store import HistoryStore, Version, workspace_key

    ws = _workspace(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    state = tmp_path / "state"
    ctx = _ctx(ws, state)
    a = ws / "a.txt"
    a.write_text("a 1\n")
    await read(ctx, a)
    assert (await write(ctx, a, "a 2\n"))["ok"]
    shared = await last_id(ctx, a)
    folders = tuple(sorted([str(ws.resolve()), str(other.resolve())]))
    legacy = HistoryStore(str(state / workspace_key(list(folders))), 1 << 20, 1 << 20, folders)
    key = legacy.put_text("old\n")
    legacy.append(
        Version(
            id=shared,
            path=str(ws / "old.txt"),
            time=1.0,
            session="default",
            tool="write",
            existed=True,
            before=key,
            before_view="x",
            before_size=4,
            encoding="utf-8",
            after_view="y",
            after_size=4,
            added=1,
            removed=1,
        )
    )
    ctx = _ctx(ws, state)  # a server started now finds the earlier store

    out = await undo_id(ctx, shared)
    assert out["ok"] is False and out["error"] == "ambiguous", out
    assert a.read_text() == "a 2\n"
    assert (await undo_id(ctx, shared, a))["ok"]
    assert a.read_text() == "a 1\n"


async def test_an_abbreviated_id_names_its_change_when_it_names_one(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    a = ws / "a.txt"
    a.write_text("one\ntwo\n")
    await read(ctx, a)
    assert (await edit(ctx, a, "one", "ONE"))["ok"]
    first = await last_id(ctx, a)
    assert (await edit(ctx, a, "two", "TWO"))["ok"]

    too_short = await undo_id(ctx, first[:5])
    assert too_short["ok"] is False and too_short["error"] == "no_history", too_short
    out = await undo_id(ctx, first[:6])
    assert out["ok"], out
    assert a.read_text() == "one\nTWO\n"


async def test_two_servers_never_record_one_id_twice(tmp_path: Path, monkeypatch: Any) -> None:
    import secrets
    import types

    from steadyhand.history import store as store_module

    # the first two ids drawn are the same (as 32 random bits were, now and then)
    draws = iter(["a" * 12, "a" * 12, "b" * 12])
    # (ids draw 4 bytes or more; temp file names 3)
    fake = types.SimpleNamespace(
        token_hex=lambda n: next(draws) if n >= 4 else secrets.token_hex(n)
    )
    monkeypatch.setattr(store_module, "secrets", fake)
    ws = _workspace(tmp_path)
    one = _ctx(ws, tmp_path / "state")
    two = _ctx(ws, tmp_path / "state")
    f, g = ws / "f.txt", ws / "g.txt"
    assert (await write(one, f, "f\n"))["ok"]
    _store(one).flush()
    assert (await write(two, g, "g\n"))["ok"]  # drew the same id: drawn again
    _store(two).flush()
    _store(one).refresh()
    ids = [e.id for e in _store(one).entries]
    assert ids == ["a" * 12, "b" * 12], ids


# -- "taken back already" only when it was -------------------------------------------


async def test_a_change_whose_line_is_still_there_is_a_conflict_not_taken_back(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_text("a\na\n")
    await read(ctx, f)
    assert (await write(ctx, f, "a\nU\na\n"))["ok"]  # adds the line U
    added = await last_id(ctx, f)
    assert (await write(ctx, f, "U\nX\na\n"))["ok"]  # U is still there, moved up

    out = await undo_id(ctx, added)
    assert out["ok"] is False and out["error"] == "conflict", out
    assert out["lines"] and "line" in out["message"]
    assert f.read_text() == "U\nX\na\n"


async def test_a_change_taken_back_by_hand_is_no_change(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_text("one\ntwo\nthree\n")
    await read(ctx, f)
    assert (await edit(ctx, f, "two", "TWO"))["ok"]
    changed = await last_id(ctx, f)
    assert (await edit(ctx, f, "three", "THREE"))["ok"]
    assert (await edit(ctx, f, "TWO", "two"))["ok"]  # taken back by hand

    out = await undo_id(ctx, changed)
    assert out["ok"] is False and out["error"] == "no_change", out
    assert "taken back already" in out["message"]
    assert f.read_text() == "one\ntwo\nTHREE\n"


# -- line endings and encodings are changes too -----------------------------------------


async def test_taking_back_a_switch_of_line_endings_restores_them(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_bytes(b"one\ntwo\nthree\n")
    await read(ctx, f)
    assert (await write(ctx, f, "one\r\ntwo\r\nthree\r\n"))["ok"]  # only the endings
    switched = await last_id(ctx, f)
    assert (await edit(ctx, f, "three", "THREE"))["ok"]
    assert f.read_bytes() == b"one\r\ntwo\r\nTHREE\r\n"

    shown = await change(ctx, switched)
    assert shown["ok"] and shown["line_endings"] == ["LF", "CRLF"], shown
    assert "line endings LF → CRLF" in shown["message"]
    out = await undo_id(ctx, switched)
    assert out["ok"], out
    assert f.read_bytes() == b"one\ntwo\nTHREE\n"
    assert "line endings" in out["message"]
    # and it is recorded: undo with file_path brings the switch back
    assert (await _run(lambda: undo_tool.undo(ctx, UndoParams(str(f)))))["ok"]
    assert f.read_bytes() == b"one\r\ntwo\r\nTHREE\r\n"


async def test_endings_switched_again_since_are_kept_and_said(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_bytes(b"one\ntwo\n")
    await read(ctx, f)
    assert (await write(ctx, f, "one\r\ntwo\r\n"))["ok"]
    switched = await last_id(ctx, f)
    assert (await write(ctx, f, "one\rtwo\r"))["ok"]  # switched again, to CR

    out = await undo_id(ctx, switched)
    assert out["ok"] is False and out["error"] == "no_change", out
    assert "keep theirs" in out["message"]
    assert f.read_bytes() == b"one\rtwo\r"


async def test_taking_back_a_change_of_byte_order_mark_restores_it(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    ctx = _ctx(ws, tmp_path / "state")
    f = ws / "f.txt"
    f.write_bytes(b"x\nkeep\n")
    await read(ctx, f)
    assert (await write(ctx, f, "y\nkeep\n"))["ok"]
    f.write_bytes(codecs.BOM_UTF8 + b"y\nkeep\n")  # the user saves it with a BOM
    restored = await _run(lambda: undo_tool.undo(ctx, UndoParams(str(f))))
    assert restored["ok"], restored  # back to "x", stored without the BOM, as it was
    assert f.read_bytes() == b"x\nkeep\n"
    dropped_bom = await last_id(ctx, f)
    await read(ctx, f)
    assert (await edit(ctx, f, "keep", "kept"))["ok"]

    out = await undo_id(ctx, dropped_bom)
    assert out["ok"], out
    assert f.read_bytes() == codecs.BOM_UTF8 + b"y\nkept\n"
    assert "utf-8-sig" in out["message"]


# -- sessions of two servers ----------------------------------------------------------


async def test_a_rewind_takes_back_only_its_own_servers_session(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    state = tmp_path / "state"
    a_srv, b_srv = _ctx(ws, state), _ctx(ws, state)  # both have a session "default"
    shared, mine, theirs = ws / "shared.txt", ws / "mine.txt", ws / "theirs.txt"
    for f in (shared, mine, theirs):
        f.write_text(f"{f.stem} 0\nsecond\n")
        await read(a_srv, f)
        await read(b_srv, f)
    cp = await checkpoint(b_srv)
    assert cp["ok"], cp
    assert (await edit(b_srv, shared, f"{shared.stem} 0", "B's line"))["ok"]
    assert (await edit(b_srv, mine, f"{mine.stem} 0", "B's line"))["ok"]
    await read(a_srv, shared)
    assert (await edit(a_srv, shared, "second", "A's line"))["ok"]
    assert (await edit(a_srv, theirs, "second", "A's line"))["ok"]
    _store(a_srv).flush()  # (a server writes its entries just after its answer)

    out = await rewind(b_srv, cp["checkpoint"])
    assert out["ok"], out
    assert out["restored"] == [str(mine)], out
    assert [s["path"] for s in out["skipped"]] == [str(shared)], out
    assert "another server" in out["skipped"][0]["reason"]
    assert shared.read_text() == "B's line\nA's line\n"
    assert theirs.read_text() == "theirs 0\nA's line\n"  # never B's to take back
    assert mine.read_text() == "mine 0\nsecond\n"


async def test_undo_by_session_and_listings_tell_two_servers_apart(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    state = tmp_path / "state"
    a_srv, b_srv = _ctx(ws, state), _ctx(ws, state)
    f = ws / "f.txt"
    f.write_text("f\n")
    await read(a_srv, f)
    assert (await write(a_srv, f, "A's\n"))["ok"]
    _store(a_srv).flush()  # (a server writes its entries just after its answer)

    out = await undo_session(b_srv, f, "default")
    assert out["ok"] is False and out["error"] == "no_history", out
    assert "another server" in out["message"] and "undo with its id" in out["message"]
    assert f.read_text() == "A's\n"
    mine = await listed(b_srv, session="default")
    assert mine["ok"] and mine["changes"] == [], mine
    every = await listed(b_srv)
    assert [(c["session"], c["other_server"]) for c in every["changes"]] == [("default", True)]
    assert "(another server)" in every["message"]
    own = await listed(a_srv, session="default")
    assert [c["other_server"] for c in own["changes"]] == [False], own

    # a checkpoint of the other server is not this session's to rewind
    cp = await checkpoint(a_srv)
    refused = await rewind(b_srv, cp["checkpoint"])
    assert refused["ok"] is False and "another server" in refused["message"], refused


async def test_an_earlier_versions_lines_still_list_undo_and_rewind(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    state = tmp_path / "state"
    ctx = _ctx(ws, state)
    f = ws / "f.txt"
    f.write_text("one\ntwo\n")
    await read(ctx, f)
    cp = await checkpoint(ctx)
    assert (await edit(ctx, f, "one", "ONE"))["ok"]
    assert (await edit(ctx, f, "two", "TWO"))["ok"]

    def as_before(obj: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in obj.items() if k not in ("instance", "after_encoding")}
        if out.get("t") in ("change", "checkpoint"):  # the ids an earlier version drew
            out["id"] = out["id"][:11] if out["id"].startswith("cp-") else out["id"][:8]
        return out

    _rewrite_index(ctx, as_before)
    ctx = _ctx(ws, state)  # a server of this version, started on that store
    every = await listed(ctx)
    assert every["ok"] and every["total"] == 2, every
    first = every["changes"][1]["id"]
    assert len(first) == 8 and every["changes"][1]["other_server"] is False
    assert (await undo_id(ctx, first))["ok"]
    assert f.read_text() == "one\nTWO\n"
    back = await rewind(ctx, cp["checkpoint"][:11])
    assert back["ok"] and back["restored"] == [str(f)], back
    assert f.read_text() == "one\ntwo\n"
