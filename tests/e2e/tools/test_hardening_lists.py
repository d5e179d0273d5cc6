"""Every list a message carries is bounded, and so is the number of sessions: a refusal
names a few sessions and lists at most 100 (however many there are), idle sessions beyond
``maxSessions`` are dropped (never the default session; a read-only one's name stays
read-only); ambiguous places, unseen stretches, duplicate cells, credentials found, files
a rewind went through, and the text edits of one WorkspaceEdit are all bounded, each with a
count of what was left out. Sizes are checked in items and bytes, never in time."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHECKPOINT, EDIT, READ, REWIND, WRITE
from steadyhand.protocol.commands import NOTEBOOK_EDIT as NB_EDIT
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, client_with
from tests.editor import open_doc, settle
from tests.secret_samples import make

plain = client_with()
few_sessions = client_with({"maxSessions": 10})
editor = client_with(editor=True)


async def test_a_fork_refusal_names_a_bounded_number_of_sessions(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    for i in range(300):
        r = await call(plain, READ, file_path="a.txt", session=f"{i:04d}-" + "s" * 200)
        assert r["ok"], r
    r = await call(plain, FORK, session="child", parent="nobody")
    assert r["error"] == "not_found", r
    assert len(r["message"].encode()) < 8_000, len(r["message"])
    assert "more" in r["message"]
    assert len(r["sessions"]) == 100 and r["sessions"][0] == "default"
    assert r["sessions"][1].startswith("0299-")  # the most recently used next
    assert r["sessions_more"] > 0


async def test_idle_sessions_beyond_the_setting_are_dropped(
    few_sessions: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("a\n")
    assert (await call(few_sessions, READ, file_path="a.txt"))["ok"]  # the default session
    ro = await call(few_sessions, FORK, session="ro", parent="default", read_only=True)
    assert ro["ok"] and ro["read_only"], ro
    for i in range(20):
        assert (await call(few_sessions, READ, file_path="a.txt", session=f"s{i}"))["ok"]
    # the oldest are gone: forking from one is refused, and says why it may be gone
    gone = await call(few_sessions, FORK, session="child", parent="s0")
    assert gone["error"] == "not_found" and "maxSessions" in gone["message"], gone
    assert len(gone["sessions"]) == 10
    assert (await call(few_sessions, FORK, session="child", parent="s19"))["ok"]
    # the default session is never dropped: its read still lets it edit
    r = await call(few_sessions, EDIT, file_path="a.txt", old_string="a", new_string="b")
    assert r["ok"], r
    # a dropped read-only session's name stays read-only, used or forked onto
    refused = await call(few_sessions, WRITE, file_path="new.txt", content="x", session="ro")
    assert refused["error"] == "read_only", refused
    again = await call(few_sessions, FORK, session="ro2", parent="default")
    assert again["ok"]
    for i in range(20, 40):
        await call(few_sessions, READ, file_path="a.txt", session=f"s{i}")
    onto = await call(few_sessions, FORK, session="ro", parent="default")
    assert onto["ok"] and onto["read_only"] is True, onto
    assert not (workspace / "new.txt").exists()


async def test_ambiguous_places_are_listed_up_to_a_bound(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "many.py").write_text("x = 1\n" * 5000)
    await call(plain, READ, file_path="many.py", offset=1, limit=5000)
    r = await call(plain, EDIT, file_path="many.py", old_string="x = 1", new_string="x = 2")
    assert r["error"] == "ambiguous" and r["matches"] == 5000, r["error"]
    assert len(r["lines"]) == 100 and r["lines_more"] == 4900
    assert len(r["message"]) < 2_000
    r = await call(
        plain,
        EDIT,
        file_path="many.py",
        old_string="x = 1",
        new_string="x = 2",
        expected_replacements=3,
    )
    assert r["error"] == "count_mismatch" and len(r["lines"]) == 100, r["error"]


async def test_unseen_stretches_are_listed_up_to_a_bound(
    plain: LanguageClient, workspace: Path
) -> None:
    (workspace / "gaps.txt").write_text("token\n" * 600)
    for line in range(1, 600, 2):  # every other line: 300 stretches left unseen
        await call(plain, READ, file_path="gaps.txt", offset=line, limit=1)
    r = await call(
        plain, EDIT, file_path="gaps.txt", old_string="token", new_string="t", replace_all=True
    )
    assert r["error"] == "partial_view", r["error"]
    assert len(r["unseen"]) == 100 and r["unseen_more"] == 200


async def test_credentials_found_are_listed_up_to_a_bound(
    plain: LanguageClient, workspace: Path
) -> None:
    keys = "".join(f"key{i} = {make('AWS access key ID', i)}\n" for i in range(150))
    r = await call(plain, WRITE, file_path="keys.txt", content=keys)
    assert r["ok"], r
    assert len(r["secrets"]) == 100 and r["secrets_more"] == 50


async def test_duplicate_cells_are_listed_up_to_a_bound(
    plain: LanguageClient, workspace: Path
) -> None:
    cell = {"cell_type": "markdown", "id": "dup", "source": "hi", "metadata": {}}
    nb = {"cells": [cell] * 150, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (workspace / "n.ipynb").write_text(json.dumps(nb))
    await call(plain, READ, file_path="n.ipynb")
    r = await call(plain, NB_EDIT, file_path="n.ipynb", cell_id="dup", new_source="x")
    assert r["error"] == "ambiguous" and r["matches"] == 150, r
    assert len(r["cells"]) == 100 and r["cells_more"] == 50
    assert len(r["message"]) < 2_000


async def test_a_rewind_lists_files_up_to_a_bound(plain: LanguageClient, workspace: Path) -> None:
    cp = await call(plain, CHECKPOINT)
    for i in range(150):
        assert (await call(plain, WRITE, file_path=f"f{i:03d}.txt", content="x\n"))["ok"]
    r = await call(plain, REWIND, checkpoint=cp["checkpoint"])
    assert r["ok"], r
    assert len(r["deleted"]) == 100 and r["deleted_more"] == 50
    assert len(r["message"].splitlines()) <= 22
    assert not list(workspace.glob("f*.txt"))


async def test_one_workspace_edit_carries_a_bounded_number_of_edits(
    editor: LanguageClient, workspace: Path
) -> None:
    f = workspace / "buf.txt"
    text = "a\nkeep\n" * 3000
    f.write_text(text)
    open_doc(editor, editor.editor, f)  # type: ignore[attr-defined]
    await settle()
    await call(editor, READ, file_path="buf.txt", offset=1, limit=6000)
    r = await call(
        editor, EDIT, file_path="buf.txt", old_string="a\n", new_string="b\n", replace_all=True
    )
    assert r["ok"], r
    sent = editor.editor.applied[-1].edit.document_changes[0].edits  # type: ignore[attr-defined]
    assert len(sent) <= 1000
    assert editor.editor.buffers[f.as_uri()].text == "b\nkeep\n" * 3000  # type: ignore[attr-defined]
