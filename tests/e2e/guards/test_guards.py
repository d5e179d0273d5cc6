"""Guard rails end to end: credentials in added lines, protected paths, read-only forks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, UNDO, WRITE
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, call_raw, client_with
from tests.secret_samples import make

# Made at run time (random bodies of each format's real shape), so the source itself
# holds no credential-shaped string.
AWS_KEY = make("AWS access key ID")
GITHUB_TOKEN = make("GitHub token")
STRIPE_KEY = make("Stripe secret key")


client = client_with()
blocking = client_with({"secrets": "block"})


def configure(client: LanguageClient, **settings: Any) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": settings})
    )


async def test_a_secret_in_added_lines_is_reported_and_written(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "config.py"
    r = await call(client, WRITE, file_path=str(f), content=f"REGION = 'eu'\nKEY = '{AWS_KEY}'\n")
    assert r["ok"], r
    assert f.read_text().endswith(f"'{AWS_KEY}'\n")  # warn mode: the write happens
    assert r["secrets"] == [{"kind": "AWS access key ID", "line": 2, "excerpt": "AKIA…"}]
    assert "AWS access key ID on line 2" in r["message"]
    assert AWS_KEY not in r["message"]  # never echoed back


async def test_a_secret_already_in_untouched_lines_is_not_reported(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "settings.py"
    f.write_text(f"TOKEN = '{GITHUB_TOKEN}'\nDEBUG = False\n")
    await call(client, READ, file_path=str(f))
    r = await call(client, EDIT, file_path=str(f), old_string="False", new_string="True")
    assert r["ok"], r
    assert "secrets" not in r and "credential" not in r["message"]

    # Adding a new one next to it is reported, with the line it lands on.
    r2 = await call(
        client,
        EDIT,
        file_path=str(f),
        old_string="DEBUG = True",
        new_string=f"DEBUG = True\nSTRIPE = '{STRIPE_KEY}'",
    )
    assert r2["ok"], r2
    assert [(s["kind"], s["line"]) for s in r2["secrets"]] == [("Stripe secret key", 3)]


async def test_block_mode_refuses_and_leaves_the_file(
    blocking: LanguageClient, workspace: Path
) -> None:
    f = workspace / "deploy.sh"
    f.write_text("echo deploy\n")
    await call(blocking, READ, file_path=str(f))
    r = await call(
        blocking,
        EDIT,
        file_path=str(f),
        old_string="echo deploy",
        new_string=f"export GH={GITHUB_TOKEN}\necho deploy",
    )
    assert r["ok"] is False and r["error"] == "secret_detected"
    assert r["secrets"][0]["kind"] == "GitHub token" and r["secrets"][0]["line"] == 1
    assert GITHUB_TOKEN not in r["message"]
    assert f.read_text() == "echo deploy\n"

    created = await call(
        blocking,
        WRITE,
        file_path=str(workspace / "k.pem"),
        content=f"{make('private key')}\n-----END RSA PRIVATE KEY-----\n",
    )
    assert created["ok"] is False and created["error"] == "secret_detected"
    assert not (workspace / "k.pem").exists()


async def test_undo_may_restore_a_secret_even_in_block_mode(
    blocking: LanguageClient, workspace: Path
) -> None:
    f = workspace / ".env"
    f.write_text(f"AWS_ACCESS_KEY_ID={AWS_KEY}\n")
    await call(blocking, READ, file_path=str(f))
    r = await call(blocking, WRITE, file_path=str(f), content="AWS_ACCESS_KEY_ID=\n")
    assert r["ok"], r
    undone = await call(blocking, UNDO, file_path=str(f))
    assert undone["ok"], undone
    assert f.read_text() == f"AWS_ACCESS_KEY_ID={AWS_KEY}\n"


async def test_secrets_off_and_back_on(client: LanguageClient, workspace: Path) -> None:
    configure(client, secrets="off")
    r = await call(client, WRITE, file_path=str(workspace / "a.txt"), content=AWS_KEY + "\n")
    assert r["ok"] and "secrets" not in r
    configure(client, secrets="warn")
    r = await call(client, WRITE, file_path=str(workspace / "b.txt"), content=AWS_KEY + "\n")
    assert r["ok"] and r["secrets"][0]["line"] == 1


async def test_reading_an_env_file_says_it_holds_secrets(
    client: LanguageClient, workspace: Path
) -> None:
    env = workspace / ".env.local"
    env.write_text("DATABASE_URL=postgres://localhost/db\n")
    r = await call(client, READ, file_path=str(env))
    assert r["ok"] and "looks like it holds secrets" in r["message"]

    plain = workspace / "README.md"
    plain.write_text(f"# Demo\nuse {AWS_KEY} in the example\n")
    r2 = await call(client, READ, file_path=str(plain))
    assert "line(s) 2 look like credentials: AWS access key ID" in r2["message"]

    example = workspace / ".env.example"
    example.write_text("DATABASE_URL=\n")
    r3 = await call(client, READ, file_path=str(example))
    assert "secrets" not in r3["message"]


async def test_protected_paths_are_readable_but_not_writable(
    client: LanguageClient, workspace: Path
) -> None:
    git = workspace / ".git"
    git.mkdir()
    (git / "config").write_text("[core]\n\tbare = false\n")
    r = await call(client, READ, file_path=str(git / "config"))
    assert r["ok"], r
    refused = await call(
        client, EDIT, file_path=str(git / "config"), old_string="false", new_string="true"
    )
    assert refused["ok"] is False and refused["error"] == "protected"
    assert ".git/**" in refused["message"] and "allowProtectedWrites" in refused["message"]
    assert (git / "config").read_text() == "[core]\n\tbare = false\n"

    vs = workspace / ".vscode" / "settings.json"
    created = await call(client, WRITE, file_path=str(vs), content="{}\n")
    assert created["ok"] is False and created["error"] == "protected"
    assert not vs.exists()

    ignore = await call(client, WRITE, file_path=str(workspace / ".gitignore"), content="*.o\n")
    assert ignore["ok"], ignore  # a name that only starts like a protected folder is fine

    configure(client, allowProtectedWrites=True)
    allowed = await call(client, WRITE, file_path=str(vs), content="{}\n")
    assert allowed["ok"], allowed

    configure(client, allowProtectedWrites=False, protectedGlobs=["generated/**"])
    gen = await call(client, WRITE, file_path=str(workspace / "generated" / "x.py"), content="")
    assert gen["ok"] is False and gen["error"] == "protected"
    again = await call(client, WRITE, file_path=str(workspace / ".idea" / "a.xml"), content="")
    assert again["ok"], again  # the list replaces the defaults


async def test_denied_paths_are_not_even_readable(client: LanguageClient, workspace: Path) -> None:
    configure(client, denyGlobs=["secrets/**"])
    f = workspace / "secrets" / "prod.txt"
    f.parent.mkdir()
    f.write_text("x\n")
    r = await call(client, READ, file_path=str(f))
    assert r["ok"] is False and r["error"] == "denied"


async def test_read_only_fork_reads_but_every_change_is_refused(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "main.py"
    f.write_text("x = 1\n")
    await call(client, READ, file_path=str(f))
    await call(client, WRITE, file_path=str(f), content="x = 2\n")
    fork = await call(client, FORK, session="scout", parent="default", readOnly=True)
    assert fork["ok"] and fork["read_only"] is True and "read-only" in fork["message"]

    assert (await call(client, READ, file_path=str(f), session="scout"))["ok"]
    for command, params in (
        (EDIT, {"old_string": "x = 2", "new_string": "x = 3"}),
        (WRITE, {"content": "x = 4\n"}),
        (UNDO, {}),
    ):
        r = await call(client, command, file_path=str(f), session="scout", **params)
        assert r["ok"] is False and r["error"] == "read_only", (command, r)
        assert "scout" in r["message"]
    new = await call(client, WRITE, file_path=str(workspace / "n.txt"), content="", session="scout")
    assert new["ok"] is False and new["error"] == "read_only"
    assert f.read_text() == "x = 2\n" and not (workspace / "n.txt").exists()

    # A fork of a read-only session is read-only too; the snake_case spelling works as well.
    sub = await call(client, FORK, session="sub", parent="scout")
    assert sub["read_only"] is True
    snake = await call(client, FORK, session="s2", parent="default", read_only=True)
    assert snake["read_only"] is True
    writable = await call(client, FORK, session="w", parent="default")
    assert writable["read_only"] is False
    ok = await call(client, WRITE, file_path=str(f), content="x = 5\n", session="w")
    assert ok["ok"], ok

    with pytest.raises(JsonRpcInvalidParams):
        await call_raw(client, FORK, [{"session": "s3", "readOnly": True, "read_only": True}])
