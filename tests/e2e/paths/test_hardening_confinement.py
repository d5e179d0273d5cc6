"""Confinement and recovery under attack, end to end over stdio.

Each test is one way a hostile review broke a promise: a hard link swapped in between the
path check and the open, deny and protected globs blind to a newline in a name, paths
outside the workspace that answered differently by what was there, a FIFO opened in place
of a tracked file, a ``file:`` URI naming another host taken as local, an edit that made
its own file unreadable (and its undo impossible), and numbers or nesting too large for
the parsers.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from fpdf import FPDF
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, FILE_CHANGED, PING, READ, UNDO, WRITE
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from steadyhand.protocol.commands import NOTEBOOK_EDIT as NB_EDIT
from steadyhand.protocol.commands import SESSION_CLOSE as CLOSE
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, client_with, server_config

SECRET = "SECRET-CANARY-7f3a"


# -- 1. a hard link swapped in between the path check and the open ---------------------


def _notebook(source: str) -> str:
    cell = {"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "source": source}
    cell["execution_count"] = None
    return json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _pdf(text: str) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    pdf.add_page()
    pdf.cell(text=text)
    return bytes(pdf.output())


@contextmanager
def _swapping(pairs: list[tuple[Path, bytes, Path]]) -> Iterator[Callable[[], int]]:
    """While inside, each ``(name, inside bytes, outside file)`` flips between a plain
    file holding the inside bytes and a hard link to the outside file, as fast as it can.
    Yields a function giving the number of swaps so far."""
    stop = threading.Event()
    swaps = 0

    def run() -> None:
        nonlocal swaps
        while not stop.is_set():
            for name, inside, outside in pairs:
                link = name.with_name(f".{name.name}.link")
                plain = name.with_name(f".{name.name}.plain")
                os.link(outside, link)
                os.rename(link, name)  # now a second name of the outside file
                time.sleep(0.0003)
                plain.write_bytes(inside)
                os.rename(plain, name)  # a plain file again
                swaps += 1
            time.sleep(0.0002)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield lambda: swaps
    finally:
        stop.set()
        thread.join()


large = client_with({"maxReadBytes": 10})


@pytest.mark.slow
async def test_hard_link_swapped_in_after_the_check_never_leaks(
    client: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    await _hard_link_race(client, workspace, tmp_path)


@pytest.mark.slow
async def test_hard_link_swapped_in_never_leaks_through_large_file_reads(
    large: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    await _hard_link_race(large, workspace, tmp_path)


async def _hard_link_race(client: LanguageClient, workspace: Path, tmp_path: Path) -> None:
    """Reads (whole, ranged, outlined), the diffs of stale refusals (edit and write, dry
    run or not) and notebook and PDF reads, while the files flip between plain files and
    hard links to files outside: nothing of the outside files may come back. (With
    ``maxReadBytes`` 10 the text file is "large": ranged reads stream it and whole reads
    answer with its outline.)"""
    out = tmp_path / "out"
    out.mkdir()
    kinds = [
        ("f.txt", b"inside line\n", f"{SECRET}\n".encode()),
        ("n.ipynb", _notebook("inside = 1").encode(), _notebook(SECRET).encode()),
        ("d.pdf", _pdf("inside page"), _pdf(SECRET)),
    ]
    pairs = []
    for name, inside, outside in kinds:
        (workspace / name).write_bytes(inside)
        (out / name).write_bytes(outside)
        pairs.append((workspace / name, inside, out / name))
    leaks: list[str] = []
    codes: dict[str, int] = {}

    def judge(label: str, r: dict[str, Any]) -> None:
        code = "ok" if r.get("ok") else str(r.get("error"))
        codes[f"{label} {code}"] = codes.get(f"{label} {code}", 0) + 1
        if SECRET in json.dumps(r):
            leaks.append(f"{label}: {json.dumps(r)[:300]}")

    with _swapping(pairs) as swaps:
        for i in range(120):
            s = f"s{i}"
            judge("read", await call(client, READ, file_path="f.txt", session=s))
            judge("range", await call(client, READ, file_path="f.txt", offset=1, limit=5))
            judge("nb", await call(client, READ, file_path="n.ipynb", session=s))
            judge("pdf", await call(client, READ, file_path="d.pdf", session=s))
            for dry in (True, False):
                e = await call(
                    client, EDIT, file_path="f.txt", old_string="inside", new_string="changed",
                    session=s, dry_run=dry,
                )  # fmt: skip
                judge("edit", e)
                w = await call(
                    client, WRITE, file_path="f.txt", content="inside line\n", session=s,
                    dry_run=dry,
                )  # fmt: skip
                judge("write", w)
            judge(
                "nbedit",
                await call(client, NB_EDIT, file_path="n.ipynb", cell_id="c1",
                           new_source="inside = 1", session=s),
            )  # fmt: skip
        assert swaps() > 50, swaps()
    assert (out / "f.txt").read_bytes() == f"{SECRET}\n".encode()
    assert leaks == [], f"{len(leaks)} leak(s), first: {leaks[0]}; {codes}"


hard_links_ok = client_with({"allowHardLinks": True})


async def test_allow_hard_links_is_respected_by_every_path(
    hard_links_ok: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    """With ``allowHardLinks`` on, a file with two names is read (whole and ranged),
    edited, written and its change undone like any other: the checks made on the open
    file follow the setting, as the path check does."""
    other = tmp_path / "other-name.txt"
    f = workspace / "linked.txt"
    f.write_text("one\ntwo\n")
    os.link(f, other)
    r = await call(hard_links_ok, READ, file_path="linked.txt")
    assert r["ok"], r
    r = await call(hard_links_ok, READ, file_path="linked.txt", offset=2, limit=1, session="b")
    assert r["ok"] and "two" in r["message"], r
    e = await call(hard_links_ok, EDIT, file_path="linked.txt", old_string="one", new_string="1")
    assert e["ok"], e
    assert f.read_text() == "1\ntwo\n"
    os.unlink(f)
    os.link(other, f)  # two names again (the write replaced the first)
    w = await call(hard_links_ok, WRITE, file_path="linked.txt", content="new\n", session="c")
    assert w["error"] == "not_read", w
    assert (await call(hard_links_ok, READ, file_path="linked.txt", session="c"))["ok"]
    w = await call(hard_links_ok, WRITE, file_path="linked.txt", content="new\n", session="c")
    assert w["ok"], w
    u = await call(hard_links_ok, UNDO, file_path="linked.txt")
    assert u["ok"], u
    assert f.read_text() == "one\ntwo\n"


# -- 2. globs and names holding a newline -------------------------------------------


deny_newline = client_with({"denyGlobs": ["secrets/**", "*.pem"]})


async def test_deny_and_protected_globs_match_names_with_a_newline(
    deny_newline: LanguageClient, workspace: Path
) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "api\nkey.txt").write_text("k=1\n")
    (workspace / "secrets" / "sub\ndir").mkdir()
    (workspace / "secrets" / "sub\ndir" / "k.txt").write_text("k=2\n")
    (workspace / "a\nb.pem").write_text("key\n")
    for name in ("secrets/api\nkey.txt", "secrets/sub\ndir/k.txt", "a\nb.pem"):
        r = await call(deny_newline, READ, file_path=name)
        assert r.get("error") == "denied", (name, r)
        w = await call(deny_newline, WRITE, file_path=name, content="x\n")
        assert w.get("error") == "denied", (name, w)
    git = workspace / "vendor\nlib" / ".git"
    git.mkdir(parents=True)
    (git / "config").write_text("[core]\n")
    assert (await call(deny_newline, READ, file_path="vendor\nlib/.git/config"))["ok"]
    e = await call(
        deny_newline, EDIT, file_path="vendor\nlib/.git/config", old_string="[core]",
        new_string="[x]",
    )  # fmt: skip
    assert e.get("error") == "protected", e
    assert (git / "config").read_text() == "[core]\n"


# -- 3. outside is outside ------------------------------------------------------------


async def test_every_path_outside_gets_one_answer(
    client: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    """Whatever is there (a file, a folder, nothing, a FIFO, a file with two links, a
    symbolic link loop, a file where a folder would be) and however it is named (a
    trailing slash), a path outside the workspace gets the same refusal; only the path as
    given differs. Nothing about what lies outside comes back."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "file.txt").write_text("x\n")
    (out / "dir").mkdir()
    os.mkfifo(out / "fifo")
    os.link(out / "file.txt", out / "twice.txt")
    (out / "loop1").symlink_to(out / "loop2")
    (out / "loop2").symlink_to(out / "loop1")
    (out / "elsewhere").symlink_to("/usr")
    names = [
        "file.txt", "file.txt/", "missing", "missing/", "dir", "dir/", "fifo", "fifo/",
        "twice.txt", "loop1", "loop1/x", "file.txt/child", "missing/child", "elsewhere",
        "elsewhere/bin/",
    ]  # fmt: skip
    answers: dict[str, set[str]] = {}
    for tool, extra in ((READ, {}), (WRITE, {"content": "x"}), (EDIT, {"old_string": "x"})):
        if tool == EDIT:
            extra = {"old_string": "x", "new_string": "y"}
        for name in names:
            given = str(out / name) if not name.endswith("/") else str(out / name) + "/"
            r = await call(client, tool, file_path=given, **extra)
            assert r["ok"] is False, (given, r)
            shape = json.dumps({k: v for k, v in r.items() if k not in ("path",)})
            answers.setdefault(tool, set()).add(shape.replace(json.dumps(given)[1:-1], "<P>"))
            assert r.get("path", given.rstrip("/")) in (given, given.rstrip("/")), (given, r)
            assert "/usr" not in r["message"], r
    for tool, shapes in answers.items():
        assert len(shapes) == 1, (tool, sorted(shapes))
        assert '"error": "outside_workspace"' in next(iter(shapes))
    assert (out / "file.txt").read_text() == "x\n"


deny_secrets = client_with({"denyGlobs": ["secrets/**"]})


async def test_every_denied_path_gets_one_answer(
    deny_secrets: LanguageClient, workspace: Path
) -> None:
    """A denied path is refused as denied whatever is there: its existence, type and
    link count are not judged (nor told) first."""
    sec = workspace / "secrets"
    sec.mkdir()
    (sec / "file.txt").write_text("x\n")
    os.mkfifo(sec / "fifo")
    (sec / "dir").mkdir()
    names = ["file.txt", "file.txt/", "missing", "missing/", "fifo", "dir/", "file.txt/x"]
    shapes = set()
    for name in names:
        given = f"secrets/{name}"
        r = await call(deny_secrets, READ, file_path=given)
        assert r["ok"] is False, r
        shape = json.dumps({k: v for k, v in r.items() if k != "path"})
        shapes.add(shape.replace(json.dumps(given)[1:-1], "<P>"))
    assert len(shapes) == 1, sorted(shapes)
    assert '"error": "denied"' in next(iter(shapes))


# -- 4. nothing opens a non-regular file -----------------------------------------------


@contextmanager
def _blocked_writer(fifo: Path, moved_to: Path) -> Iterator[threading.Thread]:
    """A thread blocked opening ``fifo`` for writing: it goes on only once someone opens
    the FIFO for reading. The FIFO is then moved to ``moved_to`` (over a tracked file).
    Released (by the test itself, through its new name) on the way out."""
    thread = threading.Thread(target=lambda: os.close(os.open(fifo, os.O_WRONLY)), daemon=True)
    thread.start()
    time.sleep(0.1)
    os.rename(fifo, moved_to)
    try:
        yield thread
    finally:
        if thread.is_alive():
            fd = os.open(moved_to, os.O_RDONLY | os.O_NONBLOCK)
            thread.join(5)
            os.close(fd)


watched = client_with({}, editor=True)


async def test_watcher_never_opens_a_fifo_put_in_place_of_a_tracked_file(
    watched: LanguageClient, workspace: Path
) -> None:
    f = workspace / "tracked.txt"
    f.write_text("tracked\n")
    assert (await call(watched, READ, file_path="tracked.txt"))["ok"]
    for _ in range(100):
        if (await call(watched, PING))["watcher"]["state"] == "watching":
            break
        await asyncio.sleep(0.05)
    fifo = workspace / ".swap-fifo"
    os.mkfifo(fifo)
    with _blocked_writer(fifo, f) as writer:  # the tracked file is now a waited-on FIFO
        state = watched.editor  # type: ignore[attr-defined]
        for _ in range(60):
            if any(m == FILE_CHANGED for m, _ in state.notifications):
                break
            await asyncio.sleep(0.05)
        assert any(m == FILE_CHANGED for m, _ in state.notifications), state.notifications
        await asyncio.sleep(0.3)
        r = await call(watched, READ, file_path="tracked.txt", session="again")
        assert r["error"] == "not_regular_file", r
        assert writer.is_alive(), "the FIFO was opened: its blocked writer went on"


paused_commit = pytest_lsp.fixture(config=server_config({"STEADYHAND_FAULTS": "open:pause0.8:1"}))


@paused_commit
async def fifo_commit(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    from tests.conftest import init_params

    opts = {"historyDir": str(workspace.parent / "state")}
    await lsp_client.initialize_session(init_params(workspace, opts))
    yield
    await lsp_client.shutdown_session()


async def test_commit_never_opens_a_fifo_swapped_in_under_it(
    fifo_commit: LanguageClient, workspace: Path
) -> None:
    """The server pauses inside an edit's write (at its temp file), after the content
    check; the file is swapped for a FIFO with a writer waiting on it. The commit must
    not open the FIFO to hash it: the edit is refused and the writer stays blocked."""
    f = workspace / "f.txt"
    f.write_text("before\n")
    assert (await call(fifo_commit, READ, file_path="f.txt"))["ok"]
    pending = asyncio.ensure_future(
        call(fifo_commit, EDIT, file_path="f.txt", old_string="before", new_string="after")
    )
    await asyncio.sleep(0.4)
    assert not pending.done()
    fifo = workspace / ".swap-fifo"
    os.mkfifo(fifo)
    with _blocked_writer(fifo, f) as writer:
        r = await pending
        assert r["ok"] is False and r["error"] in ("stale", "not_regular_file"), r
        assert writer.is_alive(), "the FIFO was opened: its blocked writer went on"
    assert sorted(p.name for p in workspace.iterdir()) == ["f.txt"]


# -- 5. file: URIs naming another host ---------------------------------------------------


remote_root = pytest_lsp.fixture(config=server_config())


@remote_root
async def host_root(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    """A client whose only root is ``file://<first folder>/<rest>``: a URI naming a host
    called like the first folder of the workspace's local path."""
    parts = workspace.parts  # ("/", "tmp", ...)
    uri = f"file://{parts[1]}/" + "/".join(parts[2:])
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(), root_uri=uri, workspace_folders=None
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_a_root_uri_naming_another_host_is_no_local_folder(
    host_root: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("local\n")
    r = await call(host_root, READ, file_path="a.txt")
    assert r.get("error") == "invalid_path", r  # no workspace folder to resolve it against
    r = await call(host_root, READ, file_path=str(workspace / "a.txt"))
    assert r["error"] == "outside_workspace", r


async def test_a_document_on_another_host_never_stands_for_the_local_file(
    watched: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("local\n")
    remote = f"file://otherhost{f}"
    watched.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=remote, language_id="plaintext", version=1, text="REMOTE\n"
            )
        )
    )
    watched.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=remote, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="REMOTE 2\n")],
        )
    )
    watched.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=remote))
    )
    r = await call(watched, READ, file_path="a.txt")
    assert r["ok"] and r["source"] == "disk" and "local" in r["message"], r
    e = await call(watched, EDIT, file_path="a.txt", old_string="local", new_string="edited")
    assert e["ok"] and e.get("via", "disk") == "disk", e
    assert f.read_text() == "edited\n"
    watched.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=remote))
    )
    r = await call(watched, READ, file_path=remote)
    assert r["error"] == "invalid_path", r
    r = await call(watched, READ, file_path=f"file://localhost{f}")
    assert r["ok"], r


# -- 12. an edit that would make its file binary -----------------------------------------


hist = client_with({})


async def test_an_edit_adding_a_nul_is_refused_and_undo_still_works(
    hist: LanguageClient, workspace: Path
) -> None:
    f = workspace / "f.txt"
    f.write_text("alpha\nbeta\n")
    assert (await call(hist, READ, file_path="f.txt"))["ok"]
    ok = await call(hist, EDIT, file_path="f.txt", old_string="alpha", new_string="ALPHA")
    assert ok["ok"], ok
    for tool, extra in (
        (EDIT, {"old_string": "beta", "new_string": "be\x00ta"}),
        (MULTI, {"edits": [{"old_string": "beta", "new_string": "b\x00"}]}),
        (WRITE, {"content": "ALPHA\nbe\x00ta\n"}),
    ):
        r = await call(hist, tool, file_path="f.txt", **extra)
        assert r["ok"] is False and r["error"] == "binary", (tool, r)
        assert "NUL" in r["message"], r
    assert f.read_bytes() == b"ALPHA\nbeta\n"
    n = await call(hist, WRITE, file_path="new.txt", content="a\x00b")
    assert n["error"] == "binary", n
    assert not (workspace / "new.txt").exists()
    # the file is still text: read, edit and undo all work
    assert (await call(hist, READ, file_path="f.txt", session="other"))["ok"]
    u = await call(hist, UNDO, file_path="f.txt")
    assert u["ok"], u
    assert f.read_text() == "alpha\nbeta\n"


# -- 14. numbers and nesting too large for the parsers ------------------------------------


async def test_huge_numbers_and_deep_nesting_get_the_right_code(
    client: LanguageClient, workspace: Path
) -> None:
    digits = "9" * 5000
    nb = workspace / "n.ipynb"
    nb.write_text(_notebook("x = 1"))
    assert (await call(client, READ, file_path="n.ipynb"))["ok"]
    for cell_id in (f"cell-{digits}", digits):
        with pytest.raises(JsonRpcInvalidParams) as exc:
            await call(client, NB_EDIT, file_path="n.ipynb", cell_id=cell_id, new_source="y")
        assert "cell_id" in str(exc.value)
    (workspace / "d.pdf").write_bytes(_pdf("a page"))
    for pages in (digits, f"1-{digits}", f"{digits}-", f"1,{digits}"):
        with pytest.raises(JsonRpcInvalidParams) as exc:
            await call(client, READ, file_path="d.pdf", pages=pages)
        assert "pages" in str(exc.value)
    deep = "[" * 5000 + "]" * 5000
    tail = ', "nbformat_minor": 5}'
    bodies = {
        "deep.ipynb": '{"cells": [], "metadata": ' + deep + ', "nbformat": 4' + tail,
        "huge.ipynb": '{"cells": [], "metadata": {}, "nbformat": ' + digits + tail,
        "cell.ipynb": json.dumps(json.loads(_notebook("x")))[:-1].replace(
            '"outputs": []', '"outputs": [{"output_type": "stream", "name": "stdout", '
            '"text": "t", "n": ' + digits + '}]'
        ) + "}",
    }  # fmt: skip
    for name, body in bodies.items():
        (workspace / name).write_text(body)
        r = await call(client, READ, file_path=name)
        assert r["ok"] or r["error"] in ("unreadable", "binary"), (name, r)
        assert "unexpectedly" not in r["message"], (name, r)
        e = await call(client, NB_EDIT, file_path=name, cell_id="cell-1", new_source="y")
        assert e["ok"] is False and e["error"] in ("unreadable", "not_read", "no_match"), e
        assert "unexpectedly" not in e["message"], (name, e)
    (workspace / "deep.pdf").write_bytes(_deep_pdf(5000))
    r = await call(client, READ, file_path="deep.pdf")
    assert r["ok"] is False and r["error"] == "unreadable", r


def _deep_pdf(depth: int) -> bytes:
    """A small PDF whose page holds an array nested ``depth`` levels deep."""
    deep = b"[" * depth + b"]" * depth
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Deep " + deep + b" >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


async def test_a_parameter_number_too_long_for_an_int_is_invalid_params(
    client: LanguageClient, workspace: Path
) -> None:
    """A JSON number of 5,000 digits as a parameter: the request is answered, with its
    own id, as Invalid params (it used to be a Parse error with a null id, which left
    the request unanswered)."""
    (workspace / "a.txt").write_text("a\n")
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        with pytest.raises(JsonRpcInvalidParams) as exc:
            await asyncio.wait_for(
                call(client, READ, file_path="a.txt", offset=int("9" * 5000)), timeout=10
            )
    finally:
        sys.set_int_max_str_digits(old)
    assert "offset" in str(exc.value)
    assert (await call(client, READ, file_path="a.txt"))["ok"]


# -- read-only sessions ---------------------------------------------------------------------


async def test_a_closed_read_only_session_name_stays_read_only(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "f.txt").write_text("x\n")
    assert (await call(client, FORK, session="ro", read_only=True))["ok"]
    assert (await call(client, CLOSE, session="ro"))["ok"]
    assert (await call(client, READ, file_path="f.txt", session="ro"))["ok"]
    w = await call(client, WRITE, file_path="f.txt", content="y\n", session="ro")
    assert w["error"] == "read_only", w
    f = await call(client, FORK, session="ro2", parent="ro")
    assert f["ok"] and f["read_only"] is True, f
    again = await call(client, FORK, session="ro")
    assert again["ok"] is False or again["read_only"] is True, again
    assert (workspace / "f.txt").read_text() == "x\n"
