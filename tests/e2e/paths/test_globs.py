"""Glob patterns of ``denyGlobs`` and ``protectedGlobs``: the forms users write, and
patterns that cannot be used (which must never break a tool call)."""

from __future__ import annotations

from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from tests.conftest import call, client_with

deny = client_with({"denyGlobs": ["secrets/", "**/*.{pem,key}", "/private/**", "[z-a]", "[]x]"]})


protect = client_with({"protectedGlobs": ["[z-a]", "*.lock"]})


async def test_deny_forms_end_to_end(deny: LanguageClient, workspace: Path) -> None:
    for rel in ("secrets/token.txt", "certs/server.pem", "private/notes.txt", "ok.txt"):
        p = workspace / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("TOP SECRET\n")
    for rel in ("secrets/token.txt", "certs/server.pem", "private/notes.txt"):
        r = await call(deny, READ, file_path=rel)
        assert r["ok"] is False and r["error"] == "denied", (rel, r)
    # The bad pattern was dropped: the other tools keep working.
    r = await call(deny, READ, file_path="ok.txt")
    assert r["ok"], r


async def test_a_bad_protected_glob_does_not_break_edits(
    protect: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    (workspace / "b.lock").write_text("two\n")
    await call(protect, READ, file_path="a.txt")
    e = await call(protect, EDIT, file_path="a.txt", old_string="one", new_string="uno")
    assert e["ok"], e
    await call(protect, READ, file_path="b.lock")
    p = await call(protect, EDIT, file_path="b.lock", old_string="two", new_string="dos")
    assert p["ok"] is False and p["error"] == "protected"


async def test_workspace_files_are_protected_by_default(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "sub" / "team.code-workspace"
    f.parent.mkdir()
    f.write_text('{"settings": {}}\n')
    r = await call(client, READ, file_path="sub/team.code-workspace")
    assert r["ok"], r
    w = await call(
        client,
        EDIT,
        file_path="sub/team.code-workspace",
        old_string="{}",
        new_string='{"x": 1}',
    )
    assert w["ok"] is False and w["error"] == "protected", w
