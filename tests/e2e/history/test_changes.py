"""The review surface over stdio: ``steadyhand.changes`` (the recorded changes),
``steadyhand.change`` (one change's texts and diff) and ``steadyhand.undo`` with ``id``
(taking back one change, an earlier one merged around the later ones)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHANGE, CHANGES, CHECKPOINT, EDIT, READ, UNDO, WRITE
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, call_raw, client_with
from tests.editor import EditorState, open_doc, settle

client = client_with()
editor_client = client_with(editor=True)

TEN = "".join(f"line {i}\n" for i in range(1, 11))


async def _edit(client: LanguageClient, f: Path, old: str, new: str, **kw: Any) -> None:
    r = await call(client, EDIT, file_path=str(f), old_string=old, new_string=new, **kw)
    assert r["ok"], r


async def _ids(client: LanguageClient, **params: Any) -> list[str]:
    listed = await call(client, CHANGES, **params)
    assert listed["ok"], listed
    return [c["id"] for c in listed["changes"]]


async def test_changes_lists_every_change_newest_first_with_its_fields(
    client: LanguageClient, workspace: Path
) -> None:
    a = workspace / "a.txt"
    a.write_text("one\ntwo\n")
    await call(client, READ, file_path=str(a))
    await _edit(client, a, "two", "TWO")
    await _edit(client, a, "one", "ONE")
    await call(client, FORK, session="helper")
    made = await call(
        client, WRITE, file_path=str(workspace / "sub" / "b.txt"), content="b\n", session="helper"
    )
    assert made["ok"], made

    listed = await call(client, CHANGES)
    assert listed["ok"], listed
    items = listed["changes"]
    assert listed["total"] == 3 and len(items) == 3
    assert [(c["tool"], Path(c["path"]).name) for c in items] == [
        ("write", "b.txt"),
        ("edit", "a.txt"),
        ("edit", "a.txt"),
    ]
    newest_a = items[1]
    assert set(newest_a) >= {
        "id",
        "time",
        "session",
        "tool",
        "path",
        "added",
        "removed",
        "current",
        "restorable",
    }
    assert newest_a["session"] == "default" and items[0]["session"] == "helper"
    assert (newest_a["added"], newest_a["removed"]) == (1, 1)
    assert items[0]["kind"] == "create" and (items[0]["added"], items[0]["removed"]) == (1, 0)
    # only the latest change to a file that still holds what it left is current
    assert [c["current"] for c in items] == [True, True, False]
    assert all(c["restorable"] for c in items)
    assert items[0]["id"] in listed["message"] and "newest first" in listed["message"]

    # filters: session, a folder, a file, and a limit (the newest)
    assert await _ids(client, session="helper") == [items[0]["id"]]
    assert await _ids(client, path=str(workspace / "sub")) == [items[0]["id"]]
    assert await _ids(client, path="a.txt") == [items[1]["id"], items[2]["id"]]
    limited = await call(client, CHANGES, limit=1)
    assert [c["id"] for c in limited["changes"]] == [items[0]["id"]]
    assert limited["total"] == 3 and "showing 1" in limited["message"]

    # a change the user made behind the agent's back: the file's latest is not current
    a.write_text("ONE\nTWO\nuser\n")
    again = await call(client, CHANGES, path=str(a))
    assert [c["current"] for c in again["changes"]] == [False, False]


async def test_changes_since_a_checkpoint_and_the_checkpoints_among_them(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "f.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 1\n", "first\n")
    cp = await call(client, CHECKPOINT, label="before the refactor")
    assert cp["ok"], cp
    await _edit(client, f, "line 5\n", "fifth\n")
    await _edit(client, f, "line 9\n", "ninth\n")

    since = await call(client, CHANGES, since="before the refactor")
    assert since["total"] == 2, since
    assert all(c["checkpoint"] == cp["checkpoint"] for c in since["changes"])
    by_id = await call(client, CHANGES, since=cp["checkpoint"], session="default")
    assert [c["id"] for c in by_id["changes"]] == [c["id"] for c in since["changes"]]

    everything = await call(client, CHANGES)
    assert [c["checkpoint"] for c in everything["changes"]] == [
        cp["checkpoint"],
        cp["checkpoint"],
        None,
    ]
    assert [x["id"] for x in everything["checkpoints"]] == [cp["checkpoint"]]
    assert everything["checkpoints"][0]["label"] == "before the refactor"

    unknown = await call(client, CHANGES, since="no such checkpoint")
    assert unknown["ok"] is False and unknown["error"] == "no_history", unknown
    assert cp["checkpoint"] in unknown["message"]


async def test_change_answers_both_texts_and_the_diff(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "c.txt"
    f.write_text("alpha\r\nbeta\r\n")
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "beta", "gamma")
    made = await call(client, WRITE, file_path=str(workspace / "new.txt"), content="fresh\n")
    assert made["ok"], made
    edit_id, create_id = (await _ids(client))[::-1]

    one = await call(client, CHANGE, id=edit_id)
    assert one["ok"], one
    assert one["before"] == "alpha\r\nbeta\r\n" and one["after"] == "alpha\r\ngamma\r\n"
    assert "-beta\n+gamma" in one["diff"] and one["diff"] in one["message"]
    assert (one["id"], one["tool"], one["path"]) == (edit_id, "edit", str(f))
    assert one["current"] is True and one["restorable"] is True
    assert (one["added"], one["removed"]) == (1, 1)

    created = await call(client, CHANGE, id=create_id)
    assert created["ok"], created
    assert created["before"] is None and created["after"] == "fresh\n"
    assert created["kind"] == "create" and "+fresh" in created["diff"]

    # taken back, the creation's undo is a deletion: no text after it
    undone = await call(client, UNDO, id=create_id)
    assert undone["ok"] and undone["type"] == "delete", undone
    deletion = (await _ids(client))[0]
    gone = await call(client, CHANGE, id=deletion)
    assert gone["ok"] and gone["after"] is None and gone["before"] == "fresh\n", gone
    assert gone["kind"] == "delete"

    missing = await call(client, CHANGE, id="deadbeef")
    assert missing["ok"] is False and missing["error"] == "no_history", missing
    assert "changes" in missing["message"]


async def test_change_of_an_oversized_or_binary_version_answers_too_large(
    client: LanguageClient, workspace: Path
) -> None:
    big = "x" * 99 + "\n"
    made = await call(
        client, WRITE, file_path=str(workspace / "big.txt"), content=big * 45_000
    )  # 4.5 MB
    assert made["ok"], made
    (big_id,) = await _ids(client)

    large = await call(client, CHANGE, id=big_id)
    assert large["ok"] is False and large["error"] == "too_large", large
    assert large["size_before"] is None and large["size_after"] == 4_500_000
    assert large["binary"] is False and large["id"] == big_id
    assert "before" not in large and "after" not in large


async def test_change_of_a_binary_version_answers_too_large(
    editor_client: LanguageClient, workspace: Path
) -> None:
    """A version holding a NUL: no tool makes one (a change that would make a file
    binary is refused), but an editor buffer may already hold one when an agent edits it."""
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    f = workspace / "nul.txt"
    refused = await call(editor_client, WRITE, file_path=str(f), content="a\x00b\n")
    assert refused["ok"] is False and refused["error"] == "binary", refused
    f.write_text("a\n")
    open_doc(editor_client, state, f, "a\x00b\n")  # the user typed a NUL, unsaved
    await settle()
    assert (await call(editor_client, READ, file_path=str(f)))["ok"]
    await _edit(editor_client, f, "b", "c")
    (nul_id,) = await _ids(editor_client)
    binary = await call(editor_client, CHANGE, id=nul_id)
    assert binary["ok"] is False and binary["error"] == "too_large", binary
    assert binary["binary"] is True and binary["size_after"] == 4


async def test_taking_back_the_latest_change_by_id_is_an_undo(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "l.txt"
    f.write_text("one\ntwo\n")
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "two", "2")
    (latest,) = await _ids(client)
    f.write_text("one\n2\nthree\n")  # the user adds a line behind the agent's back

    refused = await call(client, UNDO, id=latest)
    assert refused["ok"] is False and refused["error"] == "stale", refused
    assert refused["can_force"] is True
    assert f.read_text() == "one\n2\nthree\n"

    forced = await call(client, UNDO, id=latest, force=True)
    assert forced["ok"] and forced["type"] == "restore" and forced["undone"] == latest, forced
    assert f.read_text() == "one\ntwo\n"


async def test_an_earlier_change_is_taken_back_keeping_a_later_one_on_other_lines(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "m.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    await _edit(client, f, "line 8\n", "eighth\n")
    later, earlier = await _ids(client)

    out = await call(client, UNDO, id=earlier)
    assert out["ok"], out
    assert out["type"] == "revert" and out["undone"] == earlier
    assert (out["added"], out["removed"]) == (1, 1) and "-second\n+line 2" in out["diff"]
    assert "later change" in out["message"]
    assert f.read_text() == TEN.replace("line 8\n", "eighth\n")

    # recorded like every change: the revert is the file's latest change, and undoing
    # it brings the earlier change back
    newest = (await call(client, CHANGES, limit=1))["changes"][0]
    assert newest["tool"] == "undo" and newest["current"] is True
    assert (await call(client, UNDO, file_path=str(f)))["ok"]
    assert f.read_text() == TEN.replace("line 2\n", "second\n").replace("line 8\n", "eighth\n")

    # the session can edit again without a read
    await _edit(client, f, "line 5\n", "fifth\n")
    assert later in await _ids(client)


async def test_an_earlier_change_overlapped_by_a_later_one_is_a_conflict(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "o.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 3\n", "third\n")
    await _edit(client, f, "third\nline 4\n", "3rd\n4th\n")
    _, earlier = await _ids(client)
    before = f.read_text()

    out = await call(client, UNDO, id=earlier)
    assert out["ok"] is False and out["error"] == "conflict", out
    assert out["lines"] == [[3, 4]], out
    assert "lines 3-4" in out["message"] and "nothing was changed" in out["message"]
    assert f.read_text() == before
    assert len(await _ids(client)) == 2  # nothing recorded

    # a force does not throw the later work away
    forced = await call(client, UNDO, id=earlier, force=True)
    assert forced["error"] == "conflict" and f.read_text() == before


async def test_an_earlier_change_already_taken_back_changes_nothing(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "t.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    await _edit(client, f, "line 9\n", "ninth\n")
    earlier = (await _ids(client))[1]
    assert (await call(client, UNDO, id=earlier))["ok"]
    text = f.read_text()
    again = await call(client, UNDO, id=earlier)
    assert again["ok"] is False and again["error"] == "no_change", again
    assert f.read_text() == text


async def test_a_change_the_user_made_by_hand_since_is_kept_too(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "u.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    await _edit(client, f, "line 6\n", "sixth\n")
    earlier = (await _ids(client))[1]
    f.write_text(f.read_text().replace("line 9\n", "typed by the user\n"))
    out = await call(client, UNDO, id=earlier)
    assert out["ok"], out
    assert f.read_text() == TEN.replace("line 6\n", "sixth\n").replace(
        "line 9\n", "typed by the user\n"
    )


async def test_undo_by_id_keeps_the_rules_of_undo(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "r.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 1\n", "first\n")
    await _edit(client, f, "line 7\n", "seventh\n")
    earlier = (await _ids(client))[1]
    await call(client, FORK, session="viewer", read_only=True)
    ro = await call(client, UNDO, id=earlier, session="viewer")
    assert ro["ok"] is False and ro["error"] == "read_only", ro
    wrong = await call(client, UNDO, id=earlier, file_path=str(workspace / "other.txt"))
    assert wrong["ok"] is False and wrong["error"] == "no_history", wrong
    unknown = await call(client, UNDO, id="cafe0000")
    assert unknown["ok"] is False and unknown["error"] == "no_history", unknown
    with pytest.raises(Exception, match="file_path"):
        await call_raw(client, UNDO, [{}])
    assert f.read_text() == TEN.replace("line 1\n", "first\n").replace("line 7\n", "seventh\n")


def _index(workspace: Path) -> Path:
    (store,) = [p for p in (workspace.parent / "state").iterdir() if p.is_dir()]
    return store / "index.jsonl"


def _strip_after(index: Path) -> None:
    """Rewrite the index as a version that did not keep the text after a change would."""
    lines = []
    for line in index.read_text().splitlines():
        obj = json.loads(line)
        obj.pop("after", None)
        lines.append(json.dumps(obj))
    index.write_text("\n".join(lines) + "\n")


async def test_entries_of_older_stores_are_taken_back_when_the_next_change_shows_the_text(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "old.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    await _edit(client, f, "line 8\n", "eighth\n")
    later, earlier = await _ids(client)
    _strip_after(_index(workspace))
    listed = await call(client, CHANGES)
    assert [c["restorable"] for c in listed["changes"]] == [True, True], listed
    shown = await call(client, CHANGE, id=earlier)
    assert shown["ok"] and shown["after"] == TEN.replace("line 2\n", "second\n"), shown
    out = await call(client, UNDO, id=earlier)
    assert out["ok"], out
    assert f.read_text() == TEN.replace("line 8\n", "eighth\n")
    assert later


async def test_entries_of_older_stores_without_the_text_are_not_restorable(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "old.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    f.write_text(f.read_text().replace("line 5\n", "by hand\n"))  # between the changes
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 8\n", "eighth\n")
    _, earlier = await _ids(client)
    _strip_after(_index(workspace))

    listed = await call(client, CHANGES)
    assert [c["restorable"] for c in listed["changes"]] == [True, False], listed
    assert "not restorable" in listed["message"]
    before = f.read_text()
    out = await call(client, UNDO, id=earlier)
    assert out["ok"] is False and out["error"] == "no_history", out
    assert out["restorable"] is False and "restorable: false" in out["message"]
    assert f.read_text() == before
    shown = await call(client, CHANGE, id=earlier)
    assert shown["ok"] is False and shown["error"] == "no_history", shown


async def test_an_earlier_change_to_an_open_buffer_is_taken_back_through_the_editor(
    editor_client: LanguageClient, workspace: Path
) -> None:
    state: EditorState = editor_client.editor  # type: ignore[attr-defined]
    f = workspace / "open.txt"
    f.write_text(TEN)
    uri = open_doc(editor_client, state, f)
    await settle()
    await call(editor_client, READ, file_path=str(f))
    await _edit(editor_client, f, "line 2\n", "second\n")
    await _edit(editor_client, f, "line 8\n", "eighth\n")
    earlier = (await _ids(editor_client))[1]
    # the user types on another line, unsaved
    from tests.editor import type_text

    typed = state.buffers[uri].text.replace("line 5\n", "typed\n")
    type_text(editor_client, state, uri, typed)
    await settle()
    applied = len(state.applied)

    out = await call(editor_client, UNDO, id=earlier)
    assert out["ok"], out
    assert out["via"] == "workspaceEdit" and out["type"] == "revert"
    assert len(state.applied) == applied + 1
    edit = state.applied[-1].edit
    assert edit.document_changes, edit
    (doc_edit,) = edit.document_changes
    assert isinstance(doc_edit, types.TextDocumentEdit)
    # one small text edit on line 2, nothing else in the buffer touched
    assert [e.range.start.line for e in doc_edit.edits] == [1], doc_edit.edits
    assert state.buffers[uri].text == TEN.replace("line 5\n", "typed\n").replace(
        "line 8\n", "eighth\n"
    )
    # the buffer held the user's unsaved typing: it is left unsaved
    assert out["on_disk"] is False
    assert f.read_text() == TEN.replace("line 2\n", "second\n").replace("line 8\n", "eighth\n")


async def test_taking_back_an_earlier_change_keeps_the_files_line_endings_and_encoding(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "win.txt"
    text = TEN.replace("\n", "\r\n")
    f.write_bytes(("\ufeff" + text).encode("utf-16-le"))
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2", "second")
    await _edit(client, f, "line 8", "eighth")
    earlier = (await _ids(client))[1]
    out = await call(client, UNDO, id=earlier)
    assert out["ok"], out
    expected = "\ufeff" + text.replace("line 8", "eighth")
    assert f.read_bytes() == expected.encode("utf-16-le")


# -- an id names one change ----------------------------------------------------------------


def _rewrite(index: Path, change: Any) -> None:
    """Rewrite the index line by line with ``change`` (a function of each line's object)."""
    lines = [change(json.loads(x)) for x in index.read_text().splitlines()]
    index.write_text("".join(json.dumps(obj) + "\n" for obj in lines))


async def test_an_id_two_changes_share_is_refused_and_file_path_tells_them_apart(
    client: LanguageClient, workspace: Path
) -> None:
    a, b = workspace / "a.txt", workspace / "b.txt"
    for f in (a, b):
        f.write_text(f"{f.stem} 1\n")
        await call(client, READ, file_path=str(f))
        assert (await call(client, WRITE, file_path=str(f), content=f"{f.stem} 2\n"))["ok"]
    shared = (await _ids(client))[0]  # b's change; a's takes the same id below
    # as in a store an earlier version wrote (32-bit ids, never checked): the same id twice
    _rewrite(_index(workspace), lambda o: {**o, "id": shared} if o["t"] == "change" else o)

    out = await call(client, UNDO, id=shared)
    assert out["ok"] is False and out["error"] == "ambiguous", out
    assert "file_path" in out["message"] and "nothing was changed" in out["message"]
    assert sorted(c["path"] for c in out["candidates"]) == [str(a), str(b)]
    assert (a.read_text(), b.read_text()) == ("a 2\n", "b 2\n")
    shown = await call(client, CHANGE, id=shared)
    assert shown["ok"] is False and shown["error"] == "ambiguous", shown

    took = await call(client, UNDO, id=shared, file_path=str(a))
    assert took["ok"], took
    assert (a.read_text(), b.read_text()) == ("a 1\n", "b 2\n")
    shown = await call(client, CHANGE, id=shared, file_path=str(b))
    assert shown["ok"] and shown["before"] == "b 1\n", shown


async def test_ids_are_unique_and_may_be_abbreviated(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "p.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    await _edit(client, f, "line 8\n", "eighth\n")
    later, earlier = await _ids(client)
    assert len(earlier) == 12 and earlier != later
    out = await call(client, UNDO, id=earlier[:7])
    assert out["ok"] and out["undone"] == earlier, out
    assert f.read_text() == TEN.replace("line 8\n", "eighth\n")


# -- taken back already only when the file holds the lines from before --------------------


async def test_a_change_whose_added_line_is_still_there_is_a_conflict(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "m.txt"
    f.write_text("a\na\n")
    await call(client, READ, file_path=str(f))
    assert (await call(client, WRITE, file_path=str(f), content="a\nU\na\n"))["ok"]
    assert (await call(client, WRITE, file_path=str(f), content="U\nX\na\n"))["ok"]
    earlier = (await _ids(client))[1]
    out = await call(client, UNDO, id=earlier)
    assert out["ok"] is False and out["error"] == "conflict", out
    assert out["lines"] and "nothing was changed" in out["message"]
    assert f.read_text() == "U\nX\na\n"


# -- line endings are changes too ------------------------------------------------------------


async def test_taking_back_a_switch_of_line_endings_restores_them(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "crlf.txt"
    f.write_bytes(TEN.encode())
    await call(client, READ, file_path=str(f))
    crlf = TEN.replace("\n", "\r\n")
    assert (await call(client, WRITE, file_path=str(f), content=crlf))["ok"]
    await _edit(client, f, "line 9", "ninth")
    earlier = (await _ids(client))[1]
    out = await call(client, UNDO, id=earlier)
    assert out["ok"], out
    assert "line endings" in out["message"]
    assert f.read_bytes() == TEN.replace("line 9", "ninth").encode()


async def test_lines_of_an_earlier_version_still_list_and_undo(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "v1.txt"
    f.write_text(TEN)
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "line 2\n", "second\n")
    await _edit(client, f, "line 8\n", "eighth\n")
    assert len(await _ids(client)) == 2  # (the index lines are written by now)

    def as_written_before(obj: dict[str, Any]) -> dict[str, Any]:
        # no instance nor after_encoding, and the 8-digit ids of that version
        out = {k: v for k, v in obj.items() if k not in ("instance", "after_encoding")}
        return {**out, "id": out["id"][:8]} if out["t"] == "change" else out

    _rewrite(_index(workspace), as_written_before)
    listed = await call(client, CHANGES)
    assert listed["ok"] and [len(c["id"]) for c in listed["changes"]] == [8, 8], listed
    assert [c["other_server"] for c in listed["changes"]] == [False, False]
    earlier = listed["changes"][1]["id"]
    out = await call(client, UNDO, id=earlier)
    assert out["ok"], out
    assert f.read_text() == TEN.replace("line 8\n", "eighth\n")
    back = await call(client, UNDO, file_path=str(f), session="default")
    assert back["ok"], back  # the undo just made, by this server's session
    assert f.read_text() == TEN.replace("line 2\n", "second\n").replace("line 8\n", "eighth\n")


async def test_taking_back_an_earlier_change_reports_the_syntax_errors_it_brings_back(
    client: LanguageClient, workspace: Path
) -> None:
    # Every change's result carries what the guards found, a take-back's too: here the
    # fix it undoes brings back a syntax error the file had before.
    f = workspace / "broken.py"
    f.write_text("def f(a):\n    return (a\n\n\nx = 1\n")
    await call(client, READ, file_path=str(f))
    await _edit(client, f, "(a\n", "(a)\n")
    fix = (await _ids(client))[0]
    await _edit(client, f, "x = 1", "x = 2")
    r = await call(client, UNDO, id=fix)
    assert r["ok"] and r["type"] == "revert", r
    assert f.read_text() == "def f(a):\n    return (a\n\n\nx = 2\n"
    assert [e["line"] for e in r["syntax_errors"]] == [2], r
    assert "syntax error at line 2" in r["message"]
