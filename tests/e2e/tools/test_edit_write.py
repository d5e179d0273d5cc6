"""End to end: edit and write, their guards, and what they keep of the file."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, PING, READ, WRITE
from steadyhand.protocol.commands import MULTI_EDIT as MULTI
from tests.conftest import call, client_with

#: POSIX permission bits and symbolic links: Windows keeps a read-only flag for the
#: first, and needs a privilege a test runner lacks for the second.
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and links")


async def test_edit_requires_read(client: LanguageClient, workspace: Path) -> None:
    (workspace / "a.txt").write_text("hello\n")
    r = await call(client, EDIT, file_path="a.txt", old_string="hello", new_string="bye")
    assert r["ok"] is False and r["error"] == "not_read" and "read" in r["message"]
    assert (workspace / "a.txt").read_text() == "hello\n"


async def test_edit_success_fields(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "a.py"
    f.write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    await call(client, READ, file_path="a.py")
    r = await call(client, EDIT, file_path="a.py", old_string="return 2", new_string="return 3")
    assert r["ok"] and r["replacements"] == 1 and r["matched"] == "exact"
    assert "-    return 2" in r["diff"] and "+    return 3" in r["diff"]
    assert "     6\t    return 3" in r["message"]
    assert f.read_text().endswith("return 3\n")
    # the cache was refreshed: a second edit needs no re-read
    r2 = await call(client, EDIT, file_path="a.py", old_string="return 1", new_string="return 0")
    assert r2["ok"], r2


async def test_stale_after_external_change_with_diff_then_retry(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "s.py"
    f.write_text("a = 1\nb = 2\nc = 3\n")
    await call(client, READ, file_path="s.py")
    f.write_text("a = 1\nb = 20\nc = 3\n")
    r = await call(client, EDIT, file_path="s.py", old_string="c = 3", new_string="c = 30")
    assert r["ok"] is False and r["error"] == "stale"
    assert "-b = 2" in r["diff"] and "+b = 20" in r["diff"] and r["refreshed"] is True
    assert f.read_text() == "a = 1\nb = 20\nc = 3\n"
    retry = await call(client, EDIT, file_path="s.py", old_string="c = 3", new_string="c = 30")
    assert retry["ok"], retry
    assert f.read_text() == "a = 1\nb = 20\nc = 30\n"


async def test_a_refreshed_view_moves_with_the_lines_it_showed(
    client: LanguageClient, workspace: Path
) -> None:
    """Lines removed above a partial view: after the stale refusal (which shows the diff),
    the lines the agent saw are where they moved to, and only those (and the diff's) count
    as shown: an edit of text it never saw is refused, one of text it saw goes through."""
    f = workspace / "long.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    await call(client, READ, file_path="long.txt", offset=50, limit=11)  # lines 50-60
    f.write_text("".join(f"line {i}\n" for i in range(21, 101)))  # 1-20 removed
    r = await call(client, EDIT, file_path="long.txt", old_string="line 75\n", new_string="x\n")
    assert r["error"] == "stale" and r["refreshed"] is True, r
    unseen = await call(
        client, EDIT, file_path="long.txt", old_string="line 75\n", new_string="x\n"
    )
    assert unseen["error"] == "partial_view", unseen
    seen = await call(client, EDIT, file_path="long.txt", old_string="line 55\n", new_string="y\n")
    assert seen["ok"], seen
    # lines added above: what the agent saw moved down, and still counts as seen
    g = workspace / "grow.txt"
    g.write_text("".join(f"row {i}\n" for i in range(1, 41)))
    await call(client, READ, file_path="grow.txt", offset=1, limit=10)
    g.write_text("new top\n" + g.read_text())
    r = await call(client, EDIT, file_path="grow.txt", old_string="row 9\n", new_string="z\n")
    assert r["error"] == "stale" and r["refreshed"] is True, r
    again = await call(client, EDIT, file_path="grow.txt", old_string="row 9\n", new_string="z\n")
    assert again["ok"], again
    assert g.read_text().startswith("new top\nrow 1\n") and "z\nrow 10\n" in g.read_text()


async def test_stale_when_mtime_same_but_content_differs(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "m.txt"
    f.write_text("xxxx\n")
    st = f.stat()
    await call(client, READ, file_path="m.txt")
    f.write_text("yyyy\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    r = await call(client, EDIT, file_path="m.txt", old_string="yyyy", new_string="zzzz")
    assert r["error"] == "stale"


async def test_touch_without_change_is_not_stale(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "t.txt"
    f.write_text("same\n")
    await call(client, READ, file_path="t.txt")
    os.utime(f, (1, 1))
    r = await call(client, EDIT, file_path="t.txt", old_string="same", new_string="new")
    assert r["ok"], r


async def test_stale_large_change_asks_for_reread(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "l.txt"
    f.write_text("".join(f"{i}\n" for i in range(200)))
    await call(client, READ, file_path="l.txt")
    f.write_text("".join(f"{i * 7}\n" for i in range(200)))
    r = await call(client, EDIT, file_path="l.txt", old_string="7\n", new_string="8\n")
    assert (
        r["error"] == "stale" and r["refreshed"] is False and "Read the file again" in r["message"]
    )
    r2 = await call(client, EDIT, file_path="l.txt", old_string="\n7\n", new_string="\n8\n")
    assert r2["error"] == "stale"


async def test_stale_change_to_one_very_long_line_asks_for_reread(
    client: LanguageClient, workspace: Path
) -> None:
    # one line changed, but that line is 200,000 characters long: the refusal must not
    # carry it (staleDiffMaxLines counts lines; the characters are bounded too)
    f = workspace / "min.js"
    f.write_text("head\n" + "a" * 200_000 + "\ntail\n")
    await call(client, READ, file_path="min.js")
    f.write_text("head\n" + "b" * 200_000 + "\ntail\n")
    r = await call(client, EDIT, file_path="min.js", old_string="tail", new_string="TAIL")
    assert r["error"] == "stale" and r["refreshed"] is False, r
    assert "Read the file again" in r["message"] and len(r["message"]) < 1000
    assert "diff" not in r


async def test_partial_view(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "p.txt"
    f.write_text("".join(f"line {i}\n" for i in range(1, 101)))
    await call(client, READ, file_path="p.txt", offset=1, limit=10)
    r = await call(client, EDIT, file_path="p.txt", old_string="line 50\n", new_string="L50\n")
    assert r["error"] == "partial_view" and "offset=" in r["message"]
    ok = await call(client, EDIT, file_path="p.txt", old_string="line 5\n", new_string="L5\n")
    assert ok["ok"], ok
    w = await call(client, WRITE, file_path="p.txt", content="all new\n")
    assert w["error"] == "partial_view"
    await call(client, READ, file_path="p.txt", offset=45, limit=10)
    ok2 = await call(client, EDIT, file_path="p.txt", old_string="line 50\n", new_string="L50\n")
    assert ok2["ok"], ok2


async def test_no_match_ambiguous_no_change(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "d.txt"
    f.write_text("x = 1\ny = 2\nx = 1\n")
    await call(client, READ, file_path="d.txt")
    nm = await call(client, EDIT, file_path="d.txt", old_string="z = 9", new_string="z = 0")
    assert nm["error"] == "no_match"
    amb = await call(client, EDIT, file_path="d.txt", old_string="x = 1", new_string="x = 5")
    assert amb["error"] == "ambiguous" and amb["matches"] == 2 and amb["lines"] == [1, 3]
    assert "1, 3" in amb["message"]
    same = await call(client, EDIT, file_path="d.txt", old_string="y = 2", new_string="y = 2")
    assert same["error"] == "no_change"
    assert f.read_text() == "x = 1\ny = 2\nx = 1\n"
    counted = await call(
        client, EDIT, file_path="d.txt", old_string="y", new_string="w", expected_replacements=2
    )
    assert counted["error"] == "count_mismatch", counted
    # every refusal names the file by its resolved real path, not as it was given
    real = str(f.resolve())
    assert [r["path"] for r in (nm, amb, same, counted)] == [real] * 4
    allr = await call(
        client, EDIT, file_path="d.txt", old_string="x = 1", new_string="x = 5", replace_all=True
    )
    assert allr["ok"] and allr["replacements"] == 2
    assert f.read_text() == "x = 5\ny = 2\nx = 5\n"


async def test_empty_old_string_creates_missing_file(
    client: LanguageClient, workspace: Path
) -> None:
    r = await call(client, EDIT, file_path="new/dir/f.txt", old_string="", new_string="hi\n")
    assert r["ok"] and (workspace / "new/dir/f.txt").read_text() == "hi\n"
    assert (r["added"], r["removed"], r["lines"]) == (1, 0, 1), r
    (workspace / "full.txt").write_text("content\n")
    await call(client, READ, file_path="full.txt")
    r2 = await call(client, EDIT, file_path="full.txt", old_string="", new_string="x")
    assert r2["ok"] is False and r2["error"] == "no_match"
    missing = await call(client, EDIT, file_path="nope.txt", old_string="a", new_string="b")
    assert missing["error"] == "not_found"


async def test_quote_normalization_keeps_file_quotes(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "q.md"
    f.write_text("She said “hello” and it’s fine.\nprint('x')\n")
    await call(client, READ, file_path="q.md")
    r = await call(
        client,
        EDIT,
        file_path="q.md",
        old_string='She said "hello" and it\'s fine.',
        new_string='She said "hello there" and it\'s fine.',
    )
    assert r["ok"] and r["matched"] == "quotes" and "quote" in r["message"]
    assert f.read_text().startswith("She said “hello there” and it’s fine.")


async def test_new_straight_quotes_in_code_stay_straight(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "c.py"
    f.write_text("# it’s a comment\nx = 1\n")
    await call(client, READ, file_path="c.py")
    r = await call(
        client,
        EDIT,
        file_path="c.py",
        old_string="# it's a comment\nx = 1",
        new_string="# it's a comment\nx = 'one'",
    )
    assert r["ok"], r
    assert f.read_text() == "# it’s a comment\nx = 'one'\n"


async def test_trailing_whitespace_stripped_except_markdown(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.py").write_text("a = 1\n")
    (workspace / "a.md").write_text("para\n")
    await call(client, READ, file_path="a.py")
    await call(client, READ, file_path="a.md")
    await call(
        client, EDIT, file_path="a.py", old_string="a = 1\n", new_string="a = 2   \nb = 3\t\n"
    )
    assert (workspace / "a.py").read_text() == "a = 2\nb = 3\n"
    await call(
        client, EDIT, file_path="a.md", old_string="para\n", new_string="line one  \nline two\n"
    )
    assert (workspace / "a.md").read_text() == "line one  \nline two\n"


async def test_crlf_preserved_and_mixed_untouched(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "w.txt"
    f.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await call(client, READ, file_path="w.txt")
    r = await call(client, EDIT, file_path="w.txt", old_string="two\nthree", new_string="2\n2b\n3")
    assert r["ok"], r
    assert f.read_bytes() == b"one\r\n2\r\n2b\r\n3\r\n"
    m = workspace / "mixed.txt"
    m.write_bytes(b"a\r\nb\nc\r\nd\n")
    await call(client, READ, file_path="mixed.txt")
    await call(client, EDIT, file_path="mixed.txt", old_string="c", new_string="C")
    assert m.read_bytes() == b"a\r\nb\nC\r\nd\n"
    # lines the model copied into old_string and new_string unchanged keep their endings;
    # only the lines it wrote take the file's dominant one
    m.write_bytes(b"a\r\nb\r\nc\nd\r\ne\r\n")
    await call(client, READ, file_path="mixed.txt")
    r = await call(
        client, EDIT, file_path="mixed.txt", old_string="b\nc\nd\n", new_string="b\nc\nD\nx\n"
    )
    assert r["ok"], r
    assert m.read_bytes() == b"a\r\nb\r\nc\nD\r\nx\r\ne\r\n"


async def test_utf16_and_bom_kept_on_edit(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "u.txt"
    f.write_bytes(b"\xff\xfe" + "grüße\r\nwelt\r\n".encode("utf-16-le"))
    await call(client, READ, file_path="u.txt")
    r = await call(client, EDIT, file_path="u.txt", old_string="welt", new_string="Welt 🌍")
    assert r["ok"], r
    assert f.read_bytes() == b"\xff\xfe" + "grüße\r\nWelt 🌍\r\n".encode("utf-16-le")
    b = workspace / "b.txt"
    b.write_bytes(b"\xef\xbb\xbfx = 1\n")
    await call(client, READ, file_path="b.txt")
    await call(client, EDIT, file_path="b.txt", old_string="x = 1", new_string="x = 2")
    assert b.read_bytes() == b"\xef\xbb\xbfx = 2\n"


async def test_write_create_message(client: LanguageClient, workspace: Path) -> None:
    r = await call(client, WRITE, file_path="pkg/utils/helper.py", content="a\nb\n")
    p = (workspace / "pkg/utils/helper.py").resolve()
    assert r["ok"] and r["type"] == "create"
    assert r["message"] == f"File created successfully at: {p} (wrote 2 lines, 4 bytes)."
    # created files can be edited at once
    e = await call(client, EDIT, file_path=str(p), old_string="b", new_string="c")
    assert e["ok"], e


async def test_write_update_requires_read_and_reports_counts(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "m.py"
    f.write_text("a\nb\nc\n")
    blind = await call(client, WRITE, file_path="m.py", content="z\n")
    assert blind["error"] == "not_read" and f.read_text() == "a\nb\nc\n"
    await call(client, READ, file_path="m.py")
    r = await call(client, WRITE, file_path="m.py", content="a\nB\nc\nd\n")
    assert r["ok"] and r["type"] == "update"
    assert (r["lines_before"], r["lines_after"], r["added"], r["removed"]) == (3, 4, 2, 1)
    assert r["message"] == (
        f"The file {f.resolve()} has been updated successfully. 3 line(s) before, "
        "4 line(s) after (≈ +2 / -1)."
    )
    f.write_text("external\n")
    stale = await call(client, WRITE, file_path="m.py", content="mine\n")
    assert stale["error"] == "stale" and f.read_text() == "external\n"


async def test_write_does_not_restore_crlf_but_says_so(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "deploy.sh"
    f.write_bytes(b"#!/bin/sh\r\necho hi\r\n")
    await call(client, READ, file_path="deploy.sh")
    r = await call(client, WRITE, file_path="deploy.sh", content="#!/bin/sh\necho bye\n")
    assert r["ok"] and "CRLF to LF" in r["message"]
    assert f.read_bytes() == b"#!/bin/sh\necho bye\n"


@posix_only
async def test_write_keeps_encoding_and_mode(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "run.sh"
    f.write_bytes(b"\xef\xbb\xbfecho 1\n")
    f.chmod(0o751)
    await call(client, READ, file_path="run.sh")
    await call(client, WRITE, file_path="run.sh", content="echo 2\n")
    assert f.read_bytes() == b"\xef\xbb\xbfecho 2\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o751


async def test_write_directory_and_too_large(client: LanguageClient, workspace: Path) -> None:
    (workspace / "d").mkdir()
    r = await call(client, WRITE, file_path="d", content="x")
    assert r["error"] == "is_directory"
    from lsprotocol import types

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": {"maxWriteBytes": 10}})
    )
    big = await call(client, WRITE, file_path="big.txt", content="x" * 11)
    assert big["error"] == "too_large" and not (workspace / "big.txt").exists()


@posix_only
async def test_write_through_symlink_keeps_link(client: LanguageClient, workspace: Path) -> None:
    target = workspace / "real.txt"
    target.write_text("v1\n")
    link = workspace / "link.txt"
    link.symlink_to(target)
    await call(client, READ, file_path="link.txt")
    r = await call(client, WRITE, file_path="link.txt", content="v2\n")
    assert r["ok"], r
    assert link.is_symlink() and target.read_text() == "v2\n"


@posix_only
async def test_failed_write_leaves_file_intact(client: LanguageClient, workspace: Path) -> None:
    if os.geteuid() == 0:
        return  # root ignores permission bits; covered with injected faults in test_core_safety
    folder = workspace / "ro"
    folder.mkdir()
    f = folder / "x.txt"
    f.write_text("original\n")
    await call(client, READ, file_path="ro/x.txt")
    folder.chmod(0o555)
    try:
        r = await call(client, WRITE, file_path="ro/x.txt", content="new\n")
        assert r["error"] == "io_error" and "exactly as it was" in r["message"]
        assert f.read_text() == "original\n"
        assert [p.name for p in folder.iterdir()] == ["x.txt"]
    finally:
        folder.chmod(0o755)


@posix_only
async def test_no_copy_is_left_once_the_next_call_is_answered(
    client: LanguageClient, workspace: Path
) -> None:
    """The old copy a checked write displaces is removed just after the answer, before
    the next call is handled; the file keeps its bytes, mode and inode's new content."""
    folder = workspace / "tidy"
    folder.mkdir()
    f = folder / "t.txt"
    f.write_text("one\ntwo\n")
    f.chmod(0o640)
    await call(client, READ, file_path="tidy/t.txt")
    for n in range(5):
        old, new = ("two", f"2-{n}") if n == 0 else (f"2-{n - 1}", f"2-{n}")
        r = await call(client, EDIT, file_path="tidy/t.txt", old_string=old, new_string=new)
        assert r["ok"], r
        assert (await call(client, PING))["ok"]
        assert [p.name for p in folder.iterdir()] == ["t.txt"]
    w = await call(client, WRITE, file_path="tidy/t.txt", content="whole\n")
    assert w["ok"], w
    assert (await call(client, PING))["ok"]
    assert [p.name for p in folder.iterdir()] == ["t.txt"]
    assert f.read_text() == "whole\n" and stat.S_IMODE(f.stat().st_mode) == 0o640


unwatched = client_with({"watch": False})


def _rewrite_in_place_keeping_time(f: Path, data: bytes) -> None:
    """Overwrite ``f`` in place (same inode, same length) and put its modification time
    back: only the bytes tell that it changed."""
    st = f.stat()
    assert len(data) == st.st_size
    with f.open("r+b") as fh:
        fh.write(data)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = f.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        st.st_ino,
        st.st_size,
        st.st_mtime_ns,
    )


@pytest.mark.parametrize("tool", ["edit", "multiEdit", "write"])
async def test_a_change_invisible_to_stat_is_never_lost(
    unwatched: LanguageClient, workspace: Path, tool: str
) -> None:
    """After Steadyhand wrote a file, someone rewrites it in place with the same length
    and puts its time back. Content decides: the next change is refused as ``stale``
    with what changed, never answered from the text Steadyhand wrote (which would say
    ``no_match`` for their text, or that the file already holds a write's content), and
    their bytes are kept."""
    f = workspace / f"sneaky-{tool}.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    rel = f.name
    await call(unwatched, READ, file_path=rel)
    first = await call(unwatched, EDIT, file_path=rel, old_string="beta", new_string="BETA")
    assert first["ok"], first
    theirs = b"alpha\nbetA\ngamma\n"  # as long as "alpha\nBETA\ngamma\n"
    _rewrite_in_place_keeping_time(f, theirs)

    async def change() -> dict[str, object]:
        if tool == "edit":  # their text only
            return await call(unwatched, EDIT, file_path=rel, old_string="betA", new_string="B")
        if tool == "multiEdit":
            edits = [{"old_string": "betA", "new_string": "B"}]
            return await call(unwatched, MULTI, file_path=rel, edits=edits)
        # what Steadyhand wrote last, which the file no longer holds
        return await call(unwatched, WRITE, file_path=rel, content="alpha\nBETA\ngamma\n")

    r = await change()
    assert r["ok"] is False and r["error"] == "stale", r
    assert "-BETA" in str(r["diff"]) and "+betA" in str(r["diff"]), r
    assert f.read_bytes() == theirs
    assert [p.name for p in workspace.iterdir() if p.name.startswith(".")] == []
    # the refusal moved the agent's view to their bytes: the same call now goes through
    again = await change()
    assert again["ok"], again
    expected = b"alpha\nBETA\ngamma\n" if tool == "write" else b"alpha\nB\ngamma\n"
    assert f.read_bytes() == expected


async def test_lines_never_shown_stay_unshown_after_edits(
    client: LanguageClient, workspace: Path
) -> None:
    """An edit marks as shown only the lines it wrote: not a line it pulled up by deleting
    the one above, and not the lines between the places of a multiEdit or replace_all."""
    f = workspace / "p.txt"
    f.write_text("".join(f"line{i}\n" for i in range(1, 201)))
    await call(client, READ, file_path="p.txt", offset=1, limit=3)
    await call(client, READ, file_path="p.txt", offset=150, limit=5)
    gone = await call(client, EDIT, file_path="p.txt", old_string="line2\n", new_string="")
    assert gone["ok"], gone
    # line 4, never shown, is now line 3
    unseen = await call(client, EDIT, file_path="p.txt", old_string="line4\n", new_string="4\n")
    assert unseen["error"] == "partial_view", unseen
    both = await call(
        client,
        MULTI,
        file_path="p.txt",
        edits=[
            {"old_string": "line3\n", "new_string": "L3\n"},
            {"old_string": "line152\n", "new_string": "L152\n"},
        ],
    )
    assert both["ok"], both
    between = await call(client, EDIT, file_path="p.txt", old_string="line100\n", new_string="")
    assert between["error"] == "partial_view", between
    # the places themselves and the lines shown around them still count
    again = await call(client, EDIT, file_path="p.txt", old_string="L152\nline153\n", new_string="")
    assert again["ok"], again
    twins = [f"line{i}\n" if i not in (3, 152) else "twin\n" for i in range(1, 201)]
    f.write_text("".join(twins))
    await call(client, READ, file_path="p.txt", offset=1, limit=5)
    await call(client, READ, file_path="p.txt", offset=150, limit=5)
    every = await call(
        client, EDIT, file_path="p.txt", old_string="twin\n", new_string="T\n", replace_all=True
    )
    assert every["ok"] and every["replacements"] == 2, every
    middle = await call(client, EDIT, file_path="p.txt", old_string="line100\n", new_string="")
    assert middle["error"] == "partial_view", middle


async def test_partial_view_names_every_unseen_place_in_one_refusal(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "many.txt"
    f.write_text("".join(f"item foo {i}\n" for i in range(1, 31)))
    await call(client, READ, file_path="many.txt", offset=1, limit=10)
    r = await call(
        client, EDIT, file_path="many.txt", old_string="foo", new_string="bar", replace_all=True
    )
    assert r["error"] == "partial_view" and r["unseen"] == [[11, 30]], r
    assert "offset=6 and limit=30" in r["message"], r["message"]
    # following the one hint is enough
    await call(client, READ, file_path="many.txt", offset=6, limit=30)
    done = await call(
        client, EDIT, file_path="many.txt", old_string="foo", new_string="bar", replace_all=True
    )
    assert done["ok"] and done["replacements"] == 30, done


async def test_partial_view_far_apart_places_are_all_named(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "far.txt"
    f.write_text(
        "".join(("mark\n" if i in (1, 2500, 5000) else f"line {i}\n") for i in range(1, 5001))
    )
    await call(client, READ, file_path="far.txt", offset=1, limit=10)
    r = await call(
        client, EDIT, file_path="far.txt", old_string="mark", new_string="MARK", replace_all=True
    )
    assert r["error"] == "partial_view" and r["unseen"] == [[2500, 2500], [5000, 5000]], r
    assert "2500, 5000" in r["message"] and "too far apart for one read" in r["message"]


async def test_write_to_a_bom_file_never_doubles_the_mark(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "bom.txt"
    f.write_bytes(b"\xef\xbb\xbfold\n")
    await call(client, READ, file_path="bom.txt")
    r = await call(client, WRITE, file_path="bom.txt", content="\ufeffnew\n")
    assert r["ok"], r
    assert f.read_bytes() == b"\xef\xbb\xbfnew\n"


async def test_old_string_copied_with_the_line_cut_marker_says_so(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "long.py"
    f.write_text("a = 1\n" + "x" * 2500 + "\nb = 2\n")
    shown = (await call(client, READ, file_path="long.py"))["message"]
    copied = shown.splitlines()[1].split("\t", 1)[1]  # line 2 as the read showed it
    assert "[line cut: 500 more characters]" in copied
    r = await call(client, EDIT, file_path="long.py", old_string=copied, new_string="y")
    assert r["error"] == "no_match" and "End old_string before the marker" in r["message"], r
    ok = await call(
        client, EDIT, file_path="long.py", old_string="a = 1\nxxx", new_string="a = 2\nxxx"
    )
    assert ok["ok"], ok


async def test_no_match_message_escapes_a_tab_once(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "t.txt"
    f.write_text("alpha\nbeta\ngamma\n")
    await call(client, READ, file_path="t.txt")
    # (with the read output's padding, "     2\tbeta" is a line-number prefix, taken off)
    r = await call(client, EDIT, file_path="t.txt", old_string="2\tbeta", new_string="B")
    assert r["error"] == "no_match", r
    assert "'2\\tbeta'" in r["message"] and "\\\\t" not in r["message"], r["message"]
