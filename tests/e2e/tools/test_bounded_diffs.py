"""Diffs in results: whole when short, left out when long (with the changed line ranges),
whole again with ``include_diff`` — for every change a tool makes, end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import CHECKPOINT, EDIT, READ, REWIND, UNDO, WRITE
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from steadyhand.protocol.commands import NOTEBOOK_EDIT as NOTEBOOK
from tests.conftest import call, client_with

client = client_with()


def numbered(n: int, *, changed: set[int] = frozenset(), tag: str = "new") -> str:  # type: ignore[assignment]
    return "".join(f"line {i} {tag if i in changed else 'old'}\n" for i in range(1, n + 1))


def assert_omitted(r: dict[str, Any], changed: list[list[int]], more: int | None = None) -> None:
    assert r["ok"], r
    assert "diff" not in r and r["diff_omitted"] is True, r
    assert r["changed"] == changed
    assert r.get("changed_more") == more
    assert "include_diff: true" in r["message"]


async def test_a_short_diff_stays_whole(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "a.py"
    f.write_text(numbered(10))
    await call(client, READ, file_path=str(f))
    r = await call(client, EDIT, file_path=str(f), old_string="line 4 old", new_string="line 4 x")
    assert r["ok"] and "diff_omitted" not in r and "changed" not in r
    assert "-line 4 old\n+line 4 x\n" in r["diff"]
    assert "include_diff" not in r["message"]


async def test_a_long_write_leaves_the_diff_out_and_says_where_it_changed(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "w.py"
    f.write_text(numbered(1000))
    await call(client, READ, file_path=str(f))
    every_tenth = {i for i in range(1, 1001) if i % 10 == 1}  # 100 changed lines
    content = numbered(1000, changed=every_tenth)
    r = await call(client, WRITE, file_path=str(f), content=content)
    first_50 = [[i, i] for i in sorted(every_tenth)[:50]]
    assert_omitted(r, first_50, more=50)
    assert (r["added"], r["removed"]) == (100, 100)
    assert f.read_text() == content
    # the same write asked with include_diff: the whole diff, and no omission fields
    f.write_text(numbered(1000))
    await call(client, READ, file_path=str(f))
    whole = await call(client, WRITE, file_path=str(f), content=content, include_diff=True)
    assert whole["ok"] and "diff_omitted" not in whole and "changed" not in whole
    assert whole["diff"].count("\n+line ") == 100 and whole["diff"].count("\n-line ") == 100


async def test_edits_multi_edits_and_dry_runs_follow_the_rule(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "e.py"
    f.write_text(numbered(200))
    await call(client, READ, file_path=str(f))
    # replace_all over 200 lines: one run of changed lines
    dry = await call(
        client,
        EDIT,
        file_path=str(f),
        old_string=" old",
        new_string=" x",
        replace_all=True,
        dry_run=True,
    )
    assert_omitted(dry, [[1, 200]])
    assert dry["dry_run"] is True and "--- a/" not in dry["message"]
    assert "line 1 x" in dry["message"]  # the changed lines themselves are shown
    r = await call(
        client, EDIT, file_path=str(f), old_string=" old", new_string=" x", replace_all=True
    )
    assert_omitted(r, [[1, 200]])
    assert (r["added"], r["removed"]) == (200, 200)
    edits = [
        {"old_string": f"line {i} x\n", "new_string": f"line {i} y\nextra {i}\n"}
        for i in range(1, 200, 5)
    ]
    m = await call(client, MULTI, file_path=str(f), edits=edits)
    # each edit makes two new lines out of one; what follows moves down by one per edit
    assert_omitted(m, [[i + k, i + k + 1] for k, i in enumerate(range(1, 200, 5))])
    assert m["added"] == 80 and m["removed"] == 40
    m2 = await call(
        client,
        MULTI,
        file_path=str(f),
        edits=[{"old_string": "extra 1\n", "new_string": ""}],
        include_diff=True,
    )
    assert m2["ok"] and m2["diff"].count("\n-extra 1\n") == 1


async def test_one_very_long_line_counts_by_characters(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "data.json"
    f.write_text('{"values": [' + ", ".join(["1"] * 5000) + "]}\n")
    await call(client, READ, file_path=str(f))
    r = await call(client, EDIT, file_path=str(f), old_string="[1, 1", new_string="[2, 2")
    assert_omitted(r, [[1, 1]])  # two diff lines, but some 30,000 characters
    f2 = workspace / "big.txt"
    f2.write_text("short\n")
    await call(client, READ, file_path=str(f2))
    w = await call(client, WRITE, file_path=str(f2), content="x" * 20_000 + "\n")
    assert_omitted(w, [[1, 1]])


async def test_creating_a_long_file_by_edit_leaves_the_diff_out(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "new.py"
    r = await call(client, EDIT, file_path=str(f), old_string="", new_string=numbered(100))
    assert r["type"] == "create"
    assert_omitted(r, [[1, 100]])
    small = await call(
        client, EDIT, file_path=str(workspace / "s.py"), old_string="", new_string="x\n"
    )
    assert small["ok"] and small["diff"].endswith("+x\n")


async def test_undo_and_rewind_follow_the_rule(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "u.py"
    f.write_text(numbered(300))
    await call(client, READ, file_path=str(f))
    cp = await call(client, CHECKPOINT, label="start")
    assert (
        await call(
            client, WRITE, file_path=str(f), content=numbered(300, changed=set(range(1, 301)))
        )
    )["ok"]
    u = await call(client, UNDO, file_path=str(f))
    assert_omitted(u, [[1, 300]])
    assert f.read_text() == numbered(300)
    redo = await call(client, UNDO, file_path=str(f), include_diff=True)
    assert redo["ok"] and redo["diff"].count("\n+line ") == 300
    g = workspace / "g.py"
    g.write_text("one\n")
    await call(client, READ, file_path=str(g))
    assert (await call(client, EDIT, file_path=str(g), old_string="one", new_string="two"))["ok"]
    rw = await call(client, REWIND, checkpoint=cp["checkpoint"])
    assert rw["ok"] and rw["diff_omitted"] is True, rw
    assert rw["changed"] == {str(f): [[1, 300]], str(g): [[1, 1]]}
    assert f.read_text() == numbered(300) and g.read_text() == "one\n"
    # a short rewind carries its diff, one file after the other
    cp2 = await call(client, CHECKPOINT, label="second")
    await call(client, READ, file_path=str(g))
    assert (await call(client, EDIT, file_path=str(g), old_string="one", new_string="three"))["ok"]
    short = await call(client, REWIND, checkpoint=cp2["checkpoint"])
    assert short["ok"] and "diff_omitted" not in short
    assert "-three\n+one\n" in short["diff"]


async def test_a_long_notebook_cell_leaves_the_diff_out(
    client: LanguageClient, workspace: Path
) -> None:
    nb = {
        "cells": [
            {
                "cell_type": "code",
                "id": "c1",
                "metadata": {},
                "source": ["x = 1\n"],
                "outputs": [],
                "execution_count": None,
            },
        ],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    f = workspace / "n.ipynb"
    f.write_text(json.dumps(nb, indent=1) + "\n")
    await call(client, READ, file_path=str(f))
    r = await call(client, NOTEBOOK, file_path=str(f), cell_id="c1", new_source=numbered(80))
    assert_omitted(r, [[1, 80]])
