"""A path-attack corpus: every way out of the workspace is refused with the right code, and
nothing outside it is read or written (a canary file's bytes and atime are checked).
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from steadyhand.protocol.commands import EDIT, PING, READ, WRITE
from tests.torture.harness import Server, record

CANARY = b"canary: outside the workspace\n"


class Canary:
    """A file outside the workspace whose bytes and atime must never change.

    Its atime is set before its mtime, so under ``relatime`` any read would move it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.write_bytes(CANARY)
        st = path.stat()
        os.utime(path, ns=(st.st_mtime_ns - 10**12, st.st_mtime_ns))
        self.atime_ns = path.stat().st_atime_ns
        self.atime_works = _atime_moves_on_read(path.parent)

    def check(self) -> None:
        assert self.path.read_bytes() == CANARY  # (this read comes last)

    def untouched(self) -> bool:
        st = self.path.stat()
        return not self.atime_works or st.st_atime_ns == self.atime_ns


def _atime_moves_on_read(folder: Path) -> bool:
    probe = folder / "atime-probe"
    probe.write_bytes(b"x")
    st = probe.stat()
    os.utime(probe, ns=(st.st_mtime_ns - 10**12, st.st_mtime_ns))
    before = probe.stat().st_atime_ns
    probe.read_bytes()
    moved = probe.stat().st_atime_ns != before
    probe.unlink()
    return moved


def _corpus(ws: Path, out: Path, canary: Path) -> list[tuple[str, str, dict[str, Any], set[str]]]:
    """(label, tool, params, acceptable codes)."""
    (ws / "sub").mkdir()
    (ws / "esc").symlink_to(canary)
    (ws / "escdir").symlink_to(out)
    (ws / "rel-esc").symlink_to(Path("..") / ".." / out.name / canary.name)
    (ws / "loop1").symlink_to(ws / "loop2")
    (ws / "loop2").symlink_to(ws / "loop1")
    (ws / "self").symlink_to("self")
    (ws / "to-dev-zero").symlink_to("/dev/zero")
    (ws / "to-proc").symlink_to("/proc/self/environ")
    os.link(canary, ws / "hard")
    os.mkfifo(ws / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "sock"))
    sock.close()
    c = str(canary)
    rel = os.path.relpath(canary, ws)
    outside, invalid, special = {"outside_workspace"}, {"invalid_path"}, {"not_regular_file"}
    cases: list[tuple[str, str, dict[str, Any], set[str]]] = [
        ("dot-dot", READ, {"file_path": rel}, outside),
        ("dot-dot deep", READ, {"file_path": "sub/../../" + rel}, outside),
        ("absolute outside", READ, {"file_path": c}, outside),
        ("file URI outside", READ, {"file_path": canary.as_uri()}, outside),
        ("tilde", READ, {"file_path": "~/.bashrc"}, outside | {"not_found"}),
        ("symlink escape", READ, {"file_path": "esc"}, outside),
        ("relative symlink escape", READ, {"file_path": "rel-esc"}, outside),
        ("folder symlink escape", READ, {"file_path": f"escdir/{canary.name}"}, outside),
        ("hard link to outside", READ, {"file_path": "hard"}, outside),
        ("symlink loop", READ, {"file_path": "loop1"}, invalid),
        ("self loop", READ, {"file_path": "self"}, invalid),
        ("UNC backslash", READ, {"file_path": "\\\\server\\share\\f.txt"}, invalid),
        ("UNC slash", READ, {"file_path": "//server/share/f.txt"}, invalid),
        ("URI other host", READ, {"file_path": "file://server/share/f.txt"}, invalid),
        ("NUL byte", READ, {"file_path": "a\x00b.txt"}, invalid),
        ("lone surrogate", READ, {"file_path": "bad\ud800.txt"}, invalid),
        ("name too long", READ, {"file_path": "n" * 300}, invalid),
        ("path too long", READ, {"file_path": "d/" * 2100 + "f"}, invalid),
        ("/proc environ", READ, {"file_path": "/proc/self/environ"}, outside),
        ("/proc fd 0", READ, {"file_path": "/proc/self/fd/0"}, special | outside),
        ("/proc mem", READ, {"file_path": "/proc/self/mem"}, outside),
        ("/dev/zero", READ, {"file_path": "/dev/zero"}, special | outside),
        ("/dev/random", READ, {"file_path": "/dev/random"}, special | outside),
        ("/dev/stdin", READ, {"file_path": "/dev/stdin"}, special | outside),
        ("link to /dev/zero", READ, {"file_path": "to-dev-zero"}, special | outside),
        ("link to /proc", READ, {"file_path": "to-proc"}, outside),
        ("FIFO", READ, {"file_path": "fifo"}, special),
        ("socket", READ, {"file_path": "sock"}, special),
        # writes
        ("write dot-dot", WRITE, {"file_path": "../" + canary.name, "content": "x"}, outside),
        ("write absolute", WRITE, {"file_path": c, "content": "x"}, outside),
        ("write new outside", WRITE, {"file_path": str(out / "new.txt"), "content": "x"}, outside),
        ("write symlink escape", WRITE, {"file_path": "esc", "content": "x"}, outside),
        ("write via folder link", WRITE, {"file_path": "escdir/new.txt", "content": "x"}, outside),
        ("write hard link", WRITE, {"file_path": "hard", "content": "x"}, outside),
        ("write FIFO", WRITE, {"file_path": "fifo", "content": "x"}, special),
        ("write socket", WRITE, {"file_path": "sock", "content": "x"}, special),
        ("write /dev/null", WRITE, {"file_path": "/dev/null", "content": "x"}, special | outside),
        ("write loop", WRITE, {"file_path": "loop1", "content": "x"}, invalid),
        ("write long name", WRITE, {"file_path": "n" * 300, "content": "x"}, invalid),
        ("write /proc", WRITE, {"file_path": "/proc/self/comm", "content": "x"}, outside),
        (
            "edit symlink escape",
            EDIT,
            {"file_path": "esc", "old_string": "canary", "new_string": "x"},
            outside,
        ),
        ("edit FIFO", EDIT, {"file_path": "fifo", "old_string": "a", "new_string": "b"}, special),
    ]
    return cases


async def test_path_attack_corpus(tmp_path: Path) -> None:
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    canary = Canary(out / "canary.txt")
    cases = _corpus(ws, out, canary.path)
    before = sorted(p.name for p in out.iterdir())
    server = await Server.start(ws, state_dir=tmp_path / "state")
    wrong: list[str] = []
    try:
        for label, tool, params, codes in cases:
            r = await server.call(tool, **params)
            code = r.get("error") if not r.get("ok") else "ok"
            if code not in codes:
                wrong.append(f"{label}: got {code} ({str(r.get('message'))[:120]}), want {codes}")
            assert CANARY.decode().strip() not in str(r), label
        # a name that is not UTF-8 cannot be named in JSON text without a lone surrogate,
        # which no answer may echo: such a path is refused, and the file left as it is
        fd = os.open(os.fsencode(ws) + b"/odd\xff.txt", os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"odd name\n")
        os.close(fd)
        for r in (
            await server.call(READ, file_path="odd\udcff.txt"),
            await server.call(EDIT, file_path="odd\udcff.txt", old_string="odd", new_string="x"),
            await server.call(WRITE, file_path="new\udcff.txt", content="x\n"),
        ):
            assert r["error"] == "invalid_path", r
            assert "\udcff" not in str(r), r  # escaped, never echoed raw
        assert Path(os.fsdecode(os.fsencode(ws) + b"/odd\xff.txt")).read_bytes() == b"odd name\n"
        assert not any(b"new" in n for n in os.listdir(os.fsencode(ws)))
        assert (await server.call(PING))["ok"]
    finally:
        await server.stop()
    assert sorted(p.name for p in out.iterdir()) == before
    assert canary.untouched(), f"the canary outside the workspace was read; {wrong}"
    canary.check()
    record("path attacks", cases=len(cases) + 1, wrong_codes=len(wrong), outside_touched=0)
    assert wrong == []


async def test_folder_swapped_for_symlink_between_check_and_write(tmp_path: Path) -> None:
    """The server pauses inside the write (after the path check); the test swaps a folder
    on the path for a link to the outside; nothing may land outside."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    canary = Canary(out / "canary.txt")
    sub = ws / "sub"
    sub.mkdir()
    (sub / "f.txt").write_text("inside\n")
    spec = "open_dir:pause1.0:1"  # the first folder opened by the first write
    server = await Server.start(ws, state_dir=tmp_path / "state", env={"STEADYHAND_FAULTS": spec})
    try:
        assert (await server.call(READ, file_path="sub/f.txt"))["ok"]
        pending = asyncio.ensure_future(
            server.call(EDIT, file_path="sub/f.txt", old_string="inside", new_string="pwned")
        )
        await asyncio.sleep(0.4)
        sub.rename(ws / "sub.moved")
        (out / "f.txt").write_text("inside\n")  # a look-alike outside
        sub.symlink_to(out)
        r = await pending
        assert r["ok"] is False and r["error"] in ("invalid_path", "stale"), r
        assert (out / "f.txt").read_text() == "inside\n"
        assert (ws / "sub.moved" / "f.txt").read_text() == "inside\n"
        assert sorted(p.name for p in out.iterdir()) == ["canary.txt", "f.txt"]
        # and the path is checked afresh on the next call
        again = await server.call(READ, file_path="sub/f.txt")
        assert again["error"] == "outside_workspace", again
    finally:
        await server.stop()
    assert canary.untouched()
    canary.check()
    record("path attacks", cases=1, wrong_codes=0, outside_touched=0, kind="TOCTOU write")


async def test_folder_flipping_during_reads(tmp_path: Path) -> None:
    """A folder flips between a real folder and a link to the outside while reads run:
    no read may ever return the outside file's bytes."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    (out / "f.txt").write_bytes(CANARY)
    store = ws / "store"  # the real folder while ``sub`` is a link
    store.mkdir()
    (store / "f.txt").write_text("inside\n")
    sub, tmp = ws / "sub", ws / "sub.new"
    stop = threading.Event()
    flips = 0

    def flip() -> None:
        nonlocal flips
        while not stop.is_set():
            if flips % 2 == 0:  # ``sub`` becomes the real folder
                if sub.is_symlink():
                    sub.unlink()
                store.rename(sub)
            else:  # ``sub`` becomes a link to the outside
                sub.rename(store)
                tmp.symlink_to(out)
                tmp.rename(sub)
            flips += 1
            time.sleep(0.0002)

    server = await Server.start(ws, state_dir=tmp_path / "state")
    thread = threading.Thread(target=flip)
    thread.start()
    leaks = 0
    n = 300
    codes: dict[str, int] = {}
    try:
        for i in range(n):
            r = await server.call(READ, file_path="sub/f.txt", limit=10 + i % 2, session=f"s{i}")
            code = "ok" if r["ok"] else r["error"]
            codes[code] = codes.get(code, 0) + 1
            leaks += CANARY.decode().strip() in str(r)
    finally:
        stop.set()
        thread.join()
        await server.stop()
    record("path attacks", cases=n, wrong_codes=0, outside_touched=leaks, kind="flipping folder")
    assert leaks == 0, codes
    assert set(codes) <= {"ok", "outside_workspace", "invalid_path", "not_found"}, codes


@pytest.mark.skipif(os.geteuid() != 0, reason="checks /proc and /dev as root")
def test_corpus_is_meaningful() -> None:
    assert Path("/dev/zero").exists() and Path("/proc/self/environ").exists()


@pytest.mark.parametrize("step", ["open", "rename"])
async def test_file_swapped_for_symlink_between_check_and_write(step: str, tmp_path: Path) -> None:
    """The server pauses inside a write, after the path was checked: at the temp file's
    open (before its bytes are written) or at the rename that puts them in place (after
    the file's content was checked). Meanwhile the file is swapped for a symbolic link
    to a file outside. The write must be refused and nothing outside read or written."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    canary = Canary(out / "canary.txt")
    (ws / "f.txt").write_text("inside f\n")
    (ws / "g.txt").write_text("inside g\n")
    ops: list[tuple[str, str, dict[str, Any]]] = [
        ("f.txt", EDIT, {"old_string": "inside", "new_string": "pwned"}),
        ("g.txt", WRITE, {"content": "pwned\n"}),
        ("new.txt", WRITE, {"content": "pwned\n"}),  # a creation
    ]
    spec = ",".join(f"{step}:pause0.6:1" for _ in ops)  # one pause in each write
    server = await Server.start(ws, state_dir=tmp_path / "state", env={"STEADYHAND_FAULTS": spec})
    try:
        for name, tool, params in ops:
            if (ws / name).exists():
                assert (await server.call(READ, file_path=name))["ok"]
            pending = asyncio.ensure_future(server.call(tool, file_path=name, **params))
            await asyncio.sleep(0.3)
            assert not pending.done(), await pending
            if (ws / name).exists():
                (ws / name).rename(ws / f"{name}.moved")
            (ws / name).symlink_to(canary.path)
            r = await pending
            assert r["ok"] is False and r["error"] == "stale", (step, name, r)
            assert (ws / name).is_symlink() and os.readlink(ws / name) == str(canary.path)
            if (ws / f"{name}.moved").exists():
                assert (ws / f"{name}.moved").read_text() == f"inside {name[0]}\n"
        listing = sorted(p.name for p in ws.iterdir())
        assert listing == ["f.txt", "f.txt.moved", "g.txt", "g.txt.moved", "new.txt"], listing
    finally:
        await server.stop()
    assert sorted(p.name for p in out.iterdir()) == ["canary.txt"]
    assert canary.untouched(), "the canary outside the workspace was read"
    canary.check()
    record("path attacks", cases=len(ops), wrong_codes=0, outside_touched=0, kind="TOCTOU file")


@pytest.mark.skipif(not hasattr(os, "setxattr"), reason="extended attributes are Linux-only")
async def test_folder_swapped_after_it_was_opened(tmp_path: Path) -> None:
    """The server pauses inside a write after it opened the file's folder (at the temp
    file's open); the folder is then swapped for a link to the outside, where a file of
    the same name has extended attributes of its own. The write goes on in the folder it
    opened, and takes nothing from the outside: not its bytes, not its attributes."""
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    out.mkdir()
    sub = ws / "sub"
    sub.mkdir()
    inside = sub / "f.txt"
    inside.write_text("inside\n")
    outside = out / "f.txt"
    outside.write_bytes(CANARY)
    try:
        os.setxattr(inside, "user.origin", b"inside")
        os.setxattr(outside, "user.origin", b"outside")
        os.setxattr(outside, "user.secret", b"outside only")
    except OSError as exc:
        pytest.skip(f"no user extended attributes here: {exc}")
    canary = Canary(out / "canary.txt")
    spec = "open:pause0.6:1"  # the temp file's open: the folder is open by then
    server = await Server.start(ws, state_dir=tmp_path / "state", env={"STEADYHAND_FAULTS": spec})
    try:
        assert (await server.call(READ, file_path="sub/f.txt"))["ok"]
        pending = asyncio.ensure_future(
            server.call(EDIT, file_path="sub/f.txt", old_string="inside", new_string="edited")
        )
        await asyncio.sleep(0.3)
        assert not pending.done(), await pending
        sub.rename(ws / "sub.moved")
        sub.symlink_to(out)
        r = await pending
    finally:
        await server.stop()
    moved = ws / "sub.moved" / "f.txt"
    assert r["ok"] or r["error"] in ("stale", "invalid_path"), r
    assert moved.read_text() == ("edited\n" if r["ok"] else "inside\n"), r
    assert sorted(os.listxattr(moved)) == ["user.origin"]
    assert os.getxattr(moved, "user.origin") == b"inside"
    assert outside.read_bytes() == CANARY
    assert sorted(p.name for p in out.iterdir()) == ["canary.txt", "f.txt"]
    assert canary.untouched()
    canary.check()
    record("path attacks", cases=1, wrong_codes=0, outside_touched=0, kind="folder swap, xattrs")
