"""End to end: the read tool over stdio against the real server."""

from __future__ import annotations

import os
import socket
import stat
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ, WRITE
from tests.conftest import call


async def test_numbered_output_cat_n_style(client: LanguageClient, workspace: Path) -> None:
    (workspace / "a.py").write_text("one\ntwo\nthree\n")
    r = await call(client, READ, file_path=str(workspace / "a.py"))
    assert r["ok"] is True
    assert r["type"] == "text"
    assert r["message"].startswith("     1\tone\n     2\ttwo\n     3\tthree")
    assert (r["start_line"], r["num_lines"], r["total_lines"]) == (1, 3, 3)
    assert r["path"] == str((workspace / "a.py").resolve())


async def test_path_forms(client: LanguageClient, workspace: Path) -> None:
    f = workspace / "sub" / "b.txt"
    f.parent.mkdir()
    f.write_text("x\n")
    for form in ("sub/b.txt", f.as_uri(), str(f), str(workspace / "sub" / ".." / "sub" / "b.txt")):
        r = await call(client, READ, file_path=form, session=form)
        assert r["ok"], (form, r)
        assert r["path"] == str(f.resolve())


async def test_home_relative_path(client: LanguageClient, workspace: Path) -> None:
    r = await call(client, READ, file_path="~/surely-not-a-file-here-1234")
    assert r["ok"] is False
    assert r["error"] in ("outside_workspace", "not_found")


async def test_offset_limit_window_and_note(client: LanguageClient, workspace: Path) -> None:
    (workspace / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    r = await call(client, READ, file_path="n.txt", offset=10, limit=5)
    assert r["ok"] and r["start_line"] == 10 and r["num_lines"] == 5
    assert r["message"].splitlines()[0] == "    10\tline 10"
    assert "offset=15" in r["message"]


async def test_default_window_is_2000_lines(client: LanguageClient, workspace: Path) -> None:
    (workspace / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 2501)))
    r = await call(client, READ, file_path="big.txt")
    assert r["ok"] and r["num_lines"] == 2000 and r["total_lines"] == 2500
    assert "offset=2001" in r["message"]


async def test_long_lines_are_cut_with_marker(client: LanguageClient, workspace: Path) -> None:
    (workspace / "long.txt").write_text("x" * 2500 + "\nshort\n")
    r = await call(client, READ, file_path="long.txt")
    first = r["message"].splitlines()[0]
    assert "line cut: 500 more characters" in first
    assert r["truncated_lines"] is True


async def test_empty_file_says_so(client: LanguageClient, workspace: Path) -> None:
    (workspace / "empty.txt").write_text("")
    r = await call(client, READ, file_path="empty.txt")
    assert r["ok"] and r["total_lines"] == 0 and "empty" in r["message"]


async def test_offset_past_end_says_line_count(client: LanguageClient, workspace: Path) -> None:
    (workspace / "s.txt").write_text("a\nb\nc\n")
    r = await call(client, READ, file_path="s.txt", offset=50)
    assert r["ok"] and r["num_lines"] == 0 and r["total_lines"] == 3
    assert "only 3 line" in r["message"]


async def test_repeated_read_returns_unchanged_stub(
    client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "r.txt"
    f.write_text("hello\n")
    first = await call(client, READ, file_path="r.txt")
    second = await call(client, READ, file_path="r.txt")
    assert first["type"] == "text"
    assert second["ok"] and second["type"] == "file_unchanged" and "hello" not in second["message"]
    # a different range is a new read
    third = await call(client, READ, file_path="r.txt", offset=1, limit=1)
    assert third["type"] == "text"
    # another session has not seen it
    other = await call(client, READ, file_path="r.txt", session="other")
    assert other["type"] == "text"
    # after an external change: content again, never the stub
    f.write_text("hello world\n")
    fourth = await call(client, READ, file_path="r.txt")
    assert fourth["type"] == "text" and "hello world" in fourth["message"]


async def test_read_after_agent_change_returns_content(
    client: LanguageClient, workspace: Path
) -> None:
    (workspace / "c.txt").write_text("alpha\n")
    await call(client, READ, file_path="c.txt")
    e = await call(client, EDIT, file_path="c.txt", old_string="alpha", new_string="beta")
    assert e["ok"]
    r = await call(client, READ, file_path="c.txt")
    assert r["type"] == "text" and "beta" in r["message"]


async def test_too_large_whole_read(client: LanguageClient, workspace: Path) -> None:
    (workspace / "bigbytes.txt").write_text(("z" * 99 + "\n") * 3000)  # 300 KB
    r = await call(client, READ, file_path="bigbytes.txt")
    assert r["ok"] is False and r["error"] == "too_large"
    assert "offset" in r["message"] and "limit" in r["message"]
    ranged = await call(client, READ, file_path="bigbytes.txt", offset=2990, limit=5)
    assert ranged["ok"] and ranged["num_lines"] == 5 and ranged["total_lines"] == 3000
    assert "To read more, call read with offset=2995." in ranged["message"], ranged["message"]
    last = await call(client, READ, file_path="bigbytes.txt", offset=2999, limit=5)
    assert last["num_lines"] == 2 and "To read more" not in last["message"], last["message"]


async def test_token_cap(client: LanguageClient, workspace: Path) -> None:
    # under the byte cap, over a small token cap
    (workspace / "t.txt").write_text(("word " * 20 + "\n") * 100)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"steadyhand": {"maxReadTokens": 500}})
    )
    r = await call(client, READ, file_path="t.txt")
    assert r["ok"] is False and r["error"] == "too_large" and "token" in r["message"]
    part = await call(client, READ, file_path="t.txt", offset=1, limit=10)
    assert part["ok"]


async def test_binary_directory_missing(client: LanguageClient, workspace: Path) -> None:
    (workspace / "img.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (workspace / "folder").mkdir()
    b = await call(client, READ, file_path="img.bin")
    assert b["error"] == "binary"
    d = await call(client, READ, file_path="folder")
    assert d["error"] == "is_directory"
    (workspace / "present.txt").write_text("x")
    m = await call(client, READ, file_path="presnt.txt")
    assert m["error"] == "not_found" and "present.txt" in m["message"]


@pytest.mark.parametrize(
    "device", ["/dev/zero", "/dev/random", "/dev/null", "/dev/stdin", "/proc/self/fd/0"]
)
async def test_devices_refused_without_blocking(client: LanguageClient, device: str) -> None:
    """Devices outside the workspace are outside it: refused as such, like any path
    there, without saying (or finding out by opening) what they are."""
    if not os.path.exists(device):
        pytest.skip(f"{device} does not exist here")
    r = await call(client, READ, file_path=device)
    assert r["ok"] is False and r["error"] == "outside_workspace", r


async def test_tty_refused(client: LanguageClient) -> None:
    if not os.path.exists("/dev/tty"):
        pytest.skip("no /dev/tty")
    r = await call(client, READ, file_path="/dev/tty")
    assert r["error"] == "outside_workspace"


@pytest.mark.skipif(
    sys.platform == "win32" or os.geteuid() != 0, reason="making a device node needs root"
)
async def test_a_device_inside_the_workspace_is_refused(
    client: LanguageClient, workspace: Path
) -> None:
    os.mknod(workspace / "zero", 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    r = await call(client, READ, file_path="zero")
    assert r["error"] == "not_regular_file", r


@pytest.mark.skipif(sys.platform == "win32", reason="no FIFOs or Unix sockets in its folders")
async def test_fifo_and_socket_refused(
    client: LanguageClient, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.mkfifo(workspace / "pipe")
    r = await call(client, READ, file_path="pipe")
    assert r["error"] == "not_regular_file"
    # bound by a relative name: a temp folder's path may be longer than a socket's
    # address holds (104 bytes on macOS)
    monkeypatch.chdir(workspace)
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind("s.sock")
        r2 = await call(client, READ, file_path="s.sock")
        assert r2["error"] == "not_regular_file"
        w = await call(client, WRITE, file_path="pipe", content="x")
        assert w["error"] == "not_regular_file"
    finally:
        s.close()


async def test_crlf_file_is_shown_with_lf(client: LanguageClient, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    r = await call(client, READ, file_path="w.txt")
    assert "\r" not in r["message"] and r["line_ending"] == "crlf"
    assert r["message"].startswith("     1\tone\n     2\ttwo")


async def test_utf16_and_bom_files(client: LanguageClient, workspace: Path) -> None:
    (workspace / "u16.txt").write_bytes(b"\xff\xfe" + "grüße\nzwei\n".encode("utf-16-le"))
    (workspace / "be.txt").write_bytes(b"\xfe\xff" + "big end\n".encode("utf-16-be"))
    (workspace / "bom.txt").write_bytes(b"\xef\xbb\xbfwith bom\n")
    r = await call(client, READ, file_path="u16.txt")
    assert r["ok"] and "grüße" in r["message"] and r["encoding"] == "utf-16-le"
    assert "big end" in (await call(client, READ, file_path="be.txt"))["message"]
    b = await call(client, READ, file_path="bom.txt")
    assert b["encoding"] == "utf-8-sig" and "\ufeff" not in b["message"]


def _peak_rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


@pytest.mark.slow
@pytest.mark.timeout(300)
@pytest.mark.skipif(sys.platform != "linux", reason="reads the server's peak memory in /proc")
async def test_huge_log_ranged_read_bounded_memory(client: LanguageClient, workspace: Path) -> None:
    log = workspace / "app.log"
    line = b"2026-11-30T02:33:33Z INFO request handled in 12ms path=/api/v1/items id=%08d\n"
    block = b"".join(line.replace(b"%08d", b"%08d" % i) for i in range(10000))
    target = 300 * 1024 * 1024
    with open(log, "wb") as fh:
        written = 0
        while written < target:
            fh.write(block)
            written += len(block)
    total_lines = (written // len(block)) * 10000
    pid = _server_pid(client)
    before = _peak_rss_kb(pid)
    r = await call(client, READ, file_path="app.log", offset=total_lines - 4, limit=10)
    after = _peak_rss_kb(pid)
    assert r["ok"], r
    assert r["total_lines"] == total_lines and r["num_lines"] == 5
    assert "id=00009999" in r["message"].splitlines()[-3] or "id=00009999" in r["message"]
    # Peak memory stays far below the file's size (300 MB).
    assert after - before < 64 * 1024, (before, after)


def _server_pid(client: LanguageClient) -> int:
    server = getattr(client, "_server", None) or getattr(client, "server", None)
    pid = getattr(server, "pid", None)
    assert isinstance(pid, int), "cannot find the server process"
    return pid
