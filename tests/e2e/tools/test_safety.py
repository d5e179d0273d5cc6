"""End to end: path safety, parameter validation, sessions, serialization, io errors."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import pytest_lsp
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, PING, READ, SESSION_CLOSE, SESSION_FORK, WRITE
from tests.conftest import call, call_raw, client_with, init_params, server_config


async def test_outside_workspace(client: LanguageClient, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    r = await call(client, READ, file_path=str(outside))
    assert r["error"] == "outside_workspace" and "secret" not in r["message"]
    r2 = await call(client, READ, file_path="../outside.txt")
    assert r2["error"] == "outside_workspace"
    w = await call(client, WRITE, file_path=str(tmp_path / "new.txt"), content="x")
    assert w["error"] == "outside_workspace" and not (tmp_path / "new.txt").exists()


async def test_symlink_escaping_workspace(
    client: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "canary.txt"
    outside.write_text("canary\n")
    (workspace / "esc").symlink_to(outside)
    (workspace / "escdir").symlink_to(tmp_path)
    r = await call(client, READ, file_path="esc")
    assert r["error"] == "outside_workspace" and "symbolic link" in r["message"]
    w = await call(client, WRITE, file_path="escdir/new.txt", content="x")
    assert w["error"] == "outside_workspace"
    assert outside.read_text() == "canary\n" and not (tmp_path / "new.txt").exists()


@pytest.mark.parametrize(
    "bad",
    ["\\\\server\\share\\f.txt", "//server/share/f.txt", "a\x00b.txt", "", "file://otherhost/x"],
)
async def test_invalid_paths(client: LanguageClient, bad: str) -> None:
    r = await call(client, READ, file_path=bad)
    assert r["ok"] is False and r["error"] == "invalid_path", r


async def test_symlink_loop_invalid(client: LanguageClient, workspace: Path) -> None:
    (workspace / "loop1").symlink_to(workspace / "loop2")
    (workspace / "loop2").symlink_to(workspace / "loop1")
    r = await call(client, READ, file_path="loop1")
    assert r["error"] == "invalid_path"


@pytest_lsp.fixture(config=server_config())
async def deny_client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    opts = {"denyGlobs": ["*.pem", "secrets/**"], "allowedPaths": []}
    await lsp_client.initialize_session(init_params(workspace, opts))
    yield
    await lsp_client.shutdown_session()


async def test_deny_globs(deny_client: LanguageClient, workspace: Path) -> None:
    (workspace / "key.pem").write_text("k")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "a.txt").write_text("s")
    (workspace / "ok.txt").write_text("fine")
    assert (await call(deny_client, READ, file_path="key.pem"))["error"] == "denied"
    assert (await call(deny_client, READ, file_path="secrets/a.txt"))["error"] == "denied"
    w = await call(deny_client, WRITE, file_path="secrets/b.txt", content="x")
    assert w["error"] == "denied" and not (workspace / "secrets" / "b.txt").exists()
    assert (await call(deny_client, READ, file_path="ok.txt"))["ok"]
    (workspace / "innocent.txt").symlink_to(workspace / "key.pem")
    linked = await call(deny_client, READ, file_path="innocent.txt")
    assert linked["error"] == "denied", linked
    assert (
        "innocent.txt leads to " in linked["message"]
        and "key.pem, which matches" in (linked["message"])
    )


@pytest_lsp.fixture(config=server_config())
async def allowed_client(lsp_client: LanguageClient, workspace: Path, tmp_path: Path):  # type: ignore[no-untyped-def]
    extra = tmp_path / "extra"
    extra.mkdir()
    await lsp_client.initialize_session(init_params(workspace, {"allowedPaths": [str(extra)]}))
    yield
    await lsp_client.shutdown_session()


async def test_allowed_paths(allowed_client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "extra" / "e.txt").write_text("e\n")
    r = await call(allowed_client, READ, file_path=str(tmp_path / "extra" / "e.txt"))
    assert r["ok"], r


async def _expect_invalid_params(client: LanguageClient, command: str, args: list[object]) -> str:
    with pytest.raises(JsonRpcInvalidParams) as exc:
        await call_raw(client, command, args)
    return str(exc.value)


async def test_invalid_params(client: LanguageClient) -> None:
    msg = await _expect_invalid_params(client, READ, [{}])
    assert "file_path" in msg
    msg = await _expect_invalid_params(client, READ, [{"filePath": "a.txt"}])
    assert "did you mean `file_path`" in msg.lower()
    msg = await _expect_invalid_params(client, READ, [{"file_path": 3}])
    assert "file_path" in msg and "string" in msg
    msg = await _expect_invalid_params(client, READ, [{"file_path": "a", "limit": "5"}])
    assert "limit" in msg
    msg = await _expect_invalid_params(client, EDIT, [{"file_path": "a", "old_string": "x"}])
    assert "new_string" in msg
    msg = await _expect_invalid_params(
        client,
        EDIT,
        [{"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": "yes"}],
    )
    assert "replace_all" in msg
    msg = await _expect_invalid_params(client, WRITE, [{"file_path": "a", "contents": "x"}])
    assert "content" in msg
    msg = await _expect_invalid_params(client, READ, ["a.txt"])
    assert "object" in msg
    msg = await _expect_invalid_params(client, "steadyhand.nope", [{}])
    assert "steadyhand.nope" in msg


async def test_session_fork_isolation_and_close(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "f.txt"
    f.write_text("one\ntwo\n")
    await call(client, READ, file_path="f.txt", session="parent")
    fork = await call(client, SESSION_FORK, session="child", parent="parent")
    assert fork["ok"] and fork["files"] == 1
    # the child inherited the read: it may edit without reading
    e = await call(
        client, EDIT, file_path="f.txt", old_string="one", new_string="uno", session="child"
    )
    assert e["ok"], e
    # the child's change does not reach the parent's view: the parent is now stale
    p = await call(
        client, EDIT, file_path="f.txt", old_string="two", new_string="dos", session="parent"
    )
    assert p["error"] == "stale"
    closed = await call(client, SESSION_CLOSE, session="child")
    assert closed["ok"] and closed["files"] == 1
    again = await call(
        client, EDIT, file_path="f.txt", old_string="uno", new_string="1", session="child"
    )
    assert again["error"] == "not_read"


async def test_a_forks_first_read_of_a_file_returns_its_content(
    client: LanguageClient, workspace: Path
) -> None:
    """A sub-agent inherits what its parent read (so it may edit), but has not seen the
    text itself: its first read returns the content, never "unchanged since you last read"."""
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    (workspace / "nb.ipynb").write_text(
        '{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "source": ["x = 1"],'
        ' "outputs": [], "execution_count": null}], "metadata": {}, "nbformat": 4,'
        ' "nbformat_minor": 5}'
    )
    for name in ("a.txt", "nb.ipynb"):
        await call(client, READ, file_path=name, session="lead")
    await call(client, SESSION_FORK, session="helper", parent="lead")
    first = await call(client, READ, file_path="a.txt", session="helper")
    assert first["ok"] and first["type"] != "file_unchanged" and "beta" in first["message"]
    again = await call(client, READ, file_path="a.txt", session="helper")
    assert again["type"] == "file_unchanged"  # now it has seen it
    nb = await call(client, READ, file_path="nb.ipynb", session="helper")
    assert nb["ok"] and nb["type"] != "file_unchanged" and "x = 1" in nb["message"], nb
    lead = await call(client, READ, file_path="a.txt", session="lead")
    assert lead["type"] == "file_unchanged"


async def test_default_session(client: LanguageClient, workspace: Path) -> None:
    (workspace / "g.txt").write_text("g\n")
    await call(client, READ, file_path="g.txt", session="default")
    r = await call(client, EDIT, file_path="g.txt", old_string="g", new_string="h")
    assert r["ok"]


async def test_concurrent_edits_of_one_file_serialize(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "c.txt"
    f.write_text("".join(f"k{i} = 0\n" for i in range(20)))
    for s in ("a", "b"):
        await call(client, READ, file_path="c.txt", session=s)
    results = await asyncio.gather(
        *(
            call(
                client,
                EDIT,
                file_path="c.txt",
                old_string=f"k{i} = 0",
                new_string=f"k{i} = 1",
                session="a" if i % 2 else "b",
            )
            for i in range(20)
        )
    )
    applied = [r for r in results if r["ok"]]
    refused = [r for r in results if not r["ok"]]
    assert all(r["error"] == "stale" for r in refused)
    text = f.read_text()
    # every applied edit is in the file: no lost update
    assert text.count("= 1") == len(applied)


@pytest_lsp.fixture(config=server_config({"STEADYHAND_FAULTS": "rename:EIO:1,write:ENOSPC:2"}))
async def faulty_client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(init_params(workspace))
    yield
    await lsp_client.shutdown_session()


async def test_io_error_leaves_original_and_no_temp(
    faulty_client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "x.txt"
    f.write_bytes(b"original\r\n")
    await call(faulty_client, READ, file_path="x.txt")
    r1 = await call(faulty_client, EDIT, file_path="x.txt", old_string="original", new_string="new")
    assert r1["error"] == "io_error" and "exactly as it was" in r1["message"]
    assert f.read_bytes() == b"original\r\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["x.txt"]
    r2 = await call(faulty_client, WRITE, file_path="x.txt", content="other\n")
    assert r2["error"] == "io_error" and f.read_bytes() == b"original\r\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["x.txt"]
    # the cache is unchanged and the next call works
    r3 = await call(faulty_client, EDIT, file_path="x.txt", old_string="original", new_string="new")
    assert r3["ok"], r3
    assert f.read_bytes() == b"new\r\n"
    c = await call(faulty_client, WRITE, file_path="deep/er/new.txt", content="n\n")
    assert c["ok"]


@pytest_lsp.fixture(config=server_config())
async def hardlink_client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(init_params(workspace, {"allowHardLinks": True}))
    yield
    await lsp_client.shutdown_session()


async def test_hard_links_refused_unless_allowed(
    client: LanguageClient, hardlink_client: LanguageClient, workspace: Path
) -> None:
    (workspace / "orig.txt").write_text("linked\n")
    (workspace / "twin.txt").hardlink_to(workspace / "orig.txt")
    refused = await call(client, READ, file_path="twin.txt")
    assert refused["error"] == "outside_workspace" and "allowHardLinks" in refused["message"]
    allowed = await call(hardlink_client, READ, file_path="twin.txt")
    assert allowed["ok"] and "linked" in allowed["message"]


proc_client = client_with({"allowedPaths": ["/proc"]})


@pytest.mark.skipif(
    not os.access("/proc/self/pagemap", os.R_OK), reason="/proc/self/pagemap is not readable here"
)
@pytest.mark.linux_kernel("reads /proc/self/pagemap, a file only Linux has")
async def test_file_that_never_ends_is_refused_not_read_for_ever(
    proc_client: LanguageClient,
) -> None:
    # /proc/self/pagemap is a regular file that reports size 0 and has no end: every read
    # stops once it is well past the size the file reported, and the server stays usable
    whole = await call(proc_client, READ, file_path="/proc/self/pagemap")
    assert whole["ok"] is False and whole["error"] == "too_large", whole
    assert "kept growing while it was read" in whole["message"]
    ranged = await call(proc_client, READ, file_path="/proc/self/pagemap", offset=1, limit=1)
    assert ranged["ok"] is False and ranged["error"] == "too_large", ranged
    assert (await call(proc_client, PING))["ok"] is True
