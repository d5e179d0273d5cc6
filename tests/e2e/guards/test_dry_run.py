"""A dry run answers what the real call would: the secret scan, a multiEdit's refusals and
the fields of an edit that creates its file, end to end over stdio."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from tests.conftest import call, client_with
from tests.secret_samples import make

# Built at run time so the source itself holds no credential-shaped string.
GITHUB_TOKEN = make("GitHub token")

client = client_with()
blocking = client_with({"secrets": "block"})


async def test_dry_runs_are_refused_in_block_mode_like_the_real_call(
    blocking: LanguageClient, workspace: Path
) -> None:
    f = workspace / "app.py"
    f.write_text("a = 1\n")
    await call(blocking, READ, file_path=str(f))
    new = f"a = '{GITHUB_TOKEN}'"
    calls = [
        (EDIT, {"file_path": str(f), "old_string": "a = 1", "new_string": new}),
        (MULTI, {"file_path": str(f), "edits": [{"old_string": "a = 1", "new_string": new}]}),
        (WRITE, {"file_path": str(f), "content": new + "\n"}),
        (WRITE, {"file_path": str(workspace / "new.py"), "content": new + "\n"}),
    ]
    for command, args in calls:
        r = await call(blocking, command, **args, dry_run=True)
        assert not r["ok"] and r["error"] == "secret_detected", (command, r)
        assert r["secrets"][0]["kind"].startswith("GitHub"), r
        assert GITHUB_TOKEN not in r["message"]
    assert f.read_text() == "a = 1\n"
    assert not (workspace / "new.py").exists()
    # the real call is refused the same way
    real = await call(blocking, EDIT, file_path=str(f), old_string="a = 1", new_string=new)
    assert real["error"] == "secret_detected"


async def test_dry_runs_carry_the_warning_in_warn_mode(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "app.py"
    f.write_text("a = 1\n")
    await call(client, READ, file_path=str(f))
    new = f"a = '{GITHUB_TOKEN}'"
    for command, args in [
        (EDIT, {"file_path": str(f), "old_string": "a = 1", "new_string": new}),
        (MULTI, {"file_path": str(f), "edits": [{"old_string": "a = 1", "new_string": new}]}),
        (WRITE, {"file_path": str(f), "content": new + "\n"}),
        (WRITE, {"file_path": str(workspace / "n.py"), "content": new + "\n"}),
    ]:
        r = await call(client, command, **args, dry_run=True)
        assert r["ok"] and r["dry_run"], (command, r)
        assert [s["line"] for s in r["secrets"]] == [1], (command, r)
        assert "looks like a credential" in r["message"], (command, r)
    assert f.read_text() == "a = 1\n"
    # a clean dry run carries neither
    r = await call(
        client, EDIT, file_path=str(f), old_string="a = 1", new_string="a = 2", dry_run=True
    )
    assert r["ok"] and "secrets" not in r and "credential" not in r["message"]


async def test_a_multi_edit_outside_the_lines_shown_names_the_edit(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "long.py"
    f.write_text("".join(f"x{i} = {i}\n" for i in range(1, 41)))
    await call(client, READ, file_path=str(f), limit=10)
    r = await call(
        client,
        MULTI,
        file_path=str(f),
        edits=[
            {"old_string": "x2 = 2", "new_string": "x2 = 20"},
            {"old_string": "x30 = 30", "new_string": "x30 = 300"},
        ],
    )
    assert r["error"] == "partial_view", r
    assert r["edit_index"] == 1, r
    assert r["message"].startswith("Edit 2 of 2 (edits[1]) failed, so none of the edits"), r
    assert "offset=" in r["message"] and "line(s) 30-30" in r["message"], r
    assert "would leave it" not in r["message"]  # the lines are the file's own
    # when an earlier edit moved the lines (planned edit by edit), the first unseen one
    # is still named, with the file's own line numbers
    r = await call(
        client,
        MULTI,
        file_path=str(f),
        edits=[
            {"old_string": "x2 = 2", "new_string": "x2 = 2\nextra = 1"},
            {"old_string": "extra = 1", "new_string": "extra = 2"},
            {"old_string": "x30 = 30", "new_string": "x30 = 300"},
        ],
    )
    assert r["error"] == "partial_view" and r["edit_index"] == 2, r
    assert "line(s) 30-30" in r["message"], r
    assert f.read_text().startswith("x1 = 1\nx2 = 2\n")


async def test_dry_run_multi_edit_reads_well(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "m.py"
    f.write_text("a = 1\nb = 2\n")
    await call(client, READ, file_path=str(f))
    r = await call(
        client,
        MULTI,
        file_path=str(f),
        dry_run=True,
        edits=[{"old_string": "a = 1", "new_string": "a = 3"}],
    )
    assert r["ok"], r
    assert r["message"].startswith("Dry run: the edit would apply 1 edit (1 replacement)"), r
    real = await call(
        client, MULTI, file_path=str(f), edits=[{"old_string": "a = 1", "new_string": "a = 3"}]
    )
    assert "applied 1 edit (1 replacement)" in real["message"], real


async def test_an_edit_that_creates_its_file_has_an_edits_fields(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "made.py"
    r = await call(client, EDIT, file_path=str(f), old_string="", new_string="x = 1\n")
    assert r["ok"] and r["type"] == "create", r
    assert r["replacements"] == 1 and r["matched"] == "exact", r
    assert "+x = 1" in r["diff"], r

    g = workspace / "made2.py"
    r = await call(
        client,
        MULTI,
        file_path=str(g),
        edits=[
            {"old_string": "", "new_string": "x = 1\ny = 2\n"},
            {"old_string": "y = 2", "new_string": "y = 3"},
        ],
    )
    assert r["ok"] and r["type"] == "create", r
    assert r["matched"] == ["exact", "exact"] and r["replacements"] == 2, r
    assert r["edits"] == [
        {"replacements": 1, "matched": "exact"},
        {"replacements": 1, "matched": "exact"},
    ]
    assert g.read_text() == "x = 1\ny = 3\n"
    assert "+y = 3" in r["diff"], r

    # a later edit that fails is named by its place in the whole call
    r = await call(
        client,
        MULTI,
        file_path=str(workspace / "made3.py"),
        edits=[
            {"old_string": "", "new_string": "x = 1\n"},
            {"old_string": "x = 1", "new_string": "x = 2"},
            {"old_string": "nowhere", "new_string": "z"},
        ],
    )
    assert r["error"] == "no_match" and r["edit_index"] == 2, r
    assert r["message"].startswith("Edit 3 of 3 (edits[2])"), r
    assert not (workspace / "made3.py").exists()
