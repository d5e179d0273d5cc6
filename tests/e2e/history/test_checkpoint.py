"""Checkpoints, rewind and the history budget, end to end through the real server."""

from __future__ import annotations

import os
from pathlib import Path

from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHECKPOINT, EDIT, HISTORY, READ, REWIND, UNDO, WRITE
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, client_with

client = client_with()
small_budget = client_with({"historyMaxBytes": 4000})


async def test_rewind_restores_every_file_and_skips_one_the_user_changed(
    client: LanguageClient, workspace: Path
) -> None:
    a, b, c = workspace / "a.txt", workspace / "b.txt", workspace / "new" / "c.txt"
    a.write_text("a1\n")
    b.write_text("b1\n")
    for f in (a, b):
        await call(client, READ, file_path=str(f), session="agent")
    cp = await call(client, CHECKPOINT, session="agent", label="before refactor")
    assert cp["ok"] and cp["checkpoint"].startswith("cp-")

    assert (await call(client, WRITE, file_path=str(a), content="a2\n", session="agent"))["ok"]
    r = await call(
        client, EDIT, file_path=str(a), old_string="a2", new_string="a3", session="agent"
    )
    assert r["ok"], r
    assert (await call(client, WRITE, file_path=str(b), content="b2\n", session="agent"))["ok"]
    assert (await call(client, WRITE, file_path=str(c), content="c\n", session="agent"))["ok"]
    b.write_text("b2 plus the user's fix\n")  # the user changed b since

    out = await call(client, REWIND, session="agent", checkpoint=cp["checkpoint"])
    assert out["ok"], out
    assert out["restored"] == [str(a)]
    assert out["deleted"] == [str(c)]
    assert [s["path"] for s in out["skipped"]] == [str(b)]
    assert "changed since" in out["skipped"][0]["reason"]
    assert f"skipped {b}" in out["message"]

    assert a.read_text() == "a1\n"
    assert not c.exists()
    assert b.read_text() == "b2 plus the user's fix\n"  # left as the user made it

    # The rewind is history too: the latest change to a can be undone.
    back = await call(client, UNDO, file_path=str(a), session="agent")
    assert back["ok"], back
    assert a.read_text() == "a3\n"


async def test_rewind_by_label_and_unknown_checkpoints(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "x.txt"
    f.write_text("x1\n")
    await call(client, READ, file_path=str(f))
    await call(client, CHECKPOINT, label="start")
    await call(client, WRITE, file_path=str(f), content="x2\n")

    missing = await call(client, REWIND, checkpoint="nope")
    assert missing["ok"] is False and missing["error"] == "no_history"
    assert "start" in missing["message"]
    assert f.read_text() == "x2\n"

    out = await call(client, REWIND, checkpoint="start")
    assert out["ok"] and out["restored"] == [str(f)]
    assert f.read_text() == "x1\n"

    nothing = await call(client, CHECKPOINT, session="idle")
    empty = await call(client, REWIND, session="idle", checkpoint=nothing["checkpoint"])
    assert empty["ok"] and empty["restored"] == [] and "nothing to rewind" in empty["message"]


async def test_rewind_skips_a_file_another_session_changed_since(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "both.txt"
    f.write_text("one\ntwo\n")
    await call(client, READ, file_path=str(f), session="a")
    cp = await call(client, CHECKPOINT, session="a")
    await call(client, EDIT, file_path=str(f), old_string="one", new_string="ONE", session="a")
    await call(client, READ, file_path=str(f), session="b")
    await call(client, EDIT, file_path=str(f), old_string="two", new_string="TWO", session="b")
    await call(client, READ, file_path=str(f), session="a")
    await call(client, EDIT, file_path=str(f), old_string="ONE", new_string="One", session="a")

    out = await call(client, REWIND, session="a", checkpoint=cp["checkpoint"])
    assert out["ok"] and out["restored"] == []
    assert out["skipped"][0]["path"] == str(f)
    assert "'b'" in out["skipped"][0]["reason"]
    assert f.read_text() == "One\nTWO\n"


async def test_a_read_only_session_cannot_rewind(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "r.txt"
    f.write_text("r1\n")
    await call(client, READ, file_path=str(f), session="main")
    cp = await call(client, CHECKPOINT, session="main")
    await call(client, WRITE, file_path=str(f), content="r2\n", session="main")
    ro = await call(client, FORK, session="viewer", parent="main", readOnly=True)
    assert ro["ok"] and ro["read_only"] is True
    cp_ro = await call(client, CHECKPOINT, session="viewer")
    assert cp_ro["ok"]  # marking a point changes nothing
    refused = await call(client, REWIND, session="viewer", checkpoint=cp_ro["checkpoint"])
    assert refused["ok"] is False and refused["error"] == "read_only"
    assert f.read_text() == "r2\n"
    out = await call(client, REWIND, session="main", checkpoint=cp["checkpoint"])
    assert out["ok"] and f.read_text() == "r1\n"


async def test_the_budget_evicts_the_oldest_versions(
    small_budget: LanguageClient, workspace: Path
) -> None:
    client = small_budget
    f = workspace / "big.txt"
    f.write_text(os.urandom(700).hex() + "\n")  # random text: compresses to about half
    await call(client, READ, file_path=str(f))
    cp = await call(client, CHECKPOINT, label="start")
    for _ in range(8):
        r = await call(client, WRITE, file_path=str(f), content=os.urandom(700).hex() + "\n")
        assert r["ok"], r

    hist = await call(client, HISTORY, file_path=str(f))
    kept = [v["restorable"] for v in hist["versions"]]  # newest first
    assert len(kept) == 8
    assert kept[0] is True  # the latest version before the current one is kept
    assert kept[-1] is False  # the oldest was evicted
    assert kept == sorted(kept, reverse=True)  # evicted from the oldest on
    assert "no longer kept" in hist["message"]

    store = next(p for p in (workspace.parent / "state").iterdir() if p.is_dir())
    on_disk = sum(p.stat().st_size for p in (store / "blobs").rglob("*") if p.is_file())
    assert on_disk <= 4000

    # The latest change can still be undone; the checkpoint's version is gone, so a rewind
    # skips the file and says why.
    current = f.read_text()
    out = await call(client, REWIND, checkpoint=cp["checkpoint"])
    assert out["ok"] and out["restored"] == []
    assert "no longer kept" in out["skipped"][0]["reason"]
    assert f.read_text() == current
    undone = await call(client, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert f.read_text() != current


history_off = client_with({"history": False})


async def test_with_history_off_changes_work_and_undo_says_why_not(
    history_off: LanguageClient, workspace: Path
) -> None:
    f = workspace / "h.txt"
    r = await call(history_off, WRITE, file_path=str(f), content="x\n")
    assert r["ok"], r
    for command, params in ((UNDO, {"file_path": str(f)}), (CHECKPOINT, {})):
        refused = await call(history_off, command, **params)
        assert refused["ok"] is False and refused["error"] == "no_history"
        assert "turned off" in refused["message"]
    assert not (workspace.parent / "state").exists()


async def test_a_history_store_that_cannot_be_written_never_blocks_a_change(
    client: LanguageClient, workspace: Path
) -> None:
    blocker = workspace.parent / "not-a-folder"
    blocker.write_text("")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": {"historyDir": str(blocker)}})
    )
    f = workspace / "w.txt"
    f.write_text("old\n")
    await call(client, READ, file_path=str(f))
    r = await call(client, WRITE, file_path=str(f), content="new\n")
    assert r["ok"], r
    assert f.read_text() == "new\n"
    assert "could not be kept for undo" in r["message"]


async def test_rewind_follows_the_deny_globs_of_today(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "secret").mkdir()
    x, y = workspace / "secret" / "x.txt", workspace / "open.txt"
    x.write_text("orig\n")
    y.write_text("y1\n")
    for f in (x, y):
        await call(client, READ, file_path=str(f), session="a")
    cp = await call(client, CHECKPOINT, session="a")
    assert (
        await call(
            client, EDIT, file_path=str(x), old_string="orig", new_string="agent", session="a"
        )
    )["ok"]
    assert (
        await call(
            client,
            WRITE,
            file_path=str(workspace / "secret" / "new.txt"),
            content="n\n",
            session="a",
        )
    )["ok"]
    assert (await call(client, WRITE, file_path=str(y), content="y2\n", session="a"))["ok"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": {"denyGlobs": ["secret/**"]}})
    )
    assert (await call(client, READ, file_path=str(x)))["error"] == "denied"
    out = await call(client, REWIND, session="a", checkpoint=cp["checkpoint"])
    assert out["ok"], out
    assert out["restored"] == [str(y)] and out["deleted"] == []
    skipped = {s["path"]: s["reason"] for s in out["skipped"]}
    assert set(skipped) == {str(x), str(workspace / "secret" / "new.txt")}
    assert all("denied" in why for why in skipped.values()), skipped
    assert x.read_text() == "agent\n" and (workspace / "secret" / "new.txt").exists()
