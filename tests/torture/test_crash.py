"""Crash during write: the target holds exactly the old or the new bytes, whatever instant
the writer dies at; its temp files are removed at the next server start; mode and symbolic
links survive.

Two kinds of trials. Fork trials run the server's own tools in a forked writer and
SIGKILL it at a random instant (cheap, so there are thousands of them in the full run).
Server trials SIGKILL a real ``steadyhand serve`` while it works through a stream of edit
and write requests, then start the next server on the same folder, which must clean up.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from steadyhand.fs.atomic import TEMP_PATTERN
from steadyhand.protocol.commands import EDIT, READ, WRITE
from tests.torture import crash_child
from tests.torture.harness import Server, record, size

MODE = 0o640
#: A user's files beside the target, with names like the temp files': never removed.
LOOKALIKES = {
    "target.txt.steadyhand-999999-0123abcd.tmp": b"no leading dot\n",
    ".target.txt.steadyhand-999999-0123abcd.tmp.bak": b"a backup\n",
    ".target.txt.swp": b"an editor's swap file\n",
    "notes.txt": b"notes\n",
}


def _setup(root: Path, kind: str) -> tuple[Path, Path, Path]:
    """A workspace with ``data/target.txt`` (mode 0640) reached through ``link.txt``,
    beside a user's files whose names look like temp files."""
    ws = root / "ws"
    (ws / "data").mkdir(parents=True)
    for name, data in LOOKALIKES.items():
        (ws / "data" / name).write_bytes(data)
    target = ws / "data" / "target.txt"
    target.write_text(crash_child.content(kind, 0))
    target.chmod(MODE)
    link = ws / "link.txt"
    link.symlink_to(Path("data") / "target.txt")
    return ws, target, link


def _temps(folder: Path) -> list[str]:
    return [p.name for p in folder.iterdir() if TEMP_PATTERN.match(p.name)]


def _check_lookalikes(folder: Path) -> None:
    for name, data in LOOKALIKES.items():
        assert (folder / name).read_bytes() == data, name


def _check_intact(target: Path, link: Path) -> None:
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "target.txt")
    st = target.lstat()
    assert stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == MODE, oct(st.st_mode)


def _version_of(text: str) -> int:
    first = text.split("\n", 1)[0]
    assert first.startswith("marker: "), first[:80]
    return int(first.removeprefix("marker: "))


async def test_fork_writer_killed_at_random_points(tmp_path: Path) -> None:
    trials = size(200, 5000)
    rng = random.Random(int(os.environ.get("STEADYHAND_TORTURE_SEED", "7")))
    state = tmp_path / "state"
    env = dict(os.environ, STEADYHAND_STATE_DIR=str(state))
    figures = {"trials": 0, "old": 0, "new": 0, "mid_write_kills": 0, "temps_cleaned": 0}
    big_trials = trials * 3 // 10  # the 2 MB file; the rest on the 2 KB one
    for kind, count in (("small", trials - big_trials), ("big", big_trials)):
        ws, target, link = _setup(tmp_path / kind, kind)
        zygote = subprocess.Popen(
            [sys.executable, crash_child.__file__, str(ws)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert zygote.stdin is not None and zygote.stdout is not None
        version = 0
        seen: set[str] = set()
        # The first trial (a long one) measures the start-up before the first version
        # (the lead) and how long a version takes to write; kills then aim past the lead.
        spans: list[float] = []
        lead = 0.0  # a writer's start-up (fork, first read) before its first version
        try:
            for n in range(count):
                span = max(spans[-20:], default=0.002 if kind == "small" else 0.05)
                delay = lead + rng.uniform(0, 2.5 * span) if n else 0.25
                spec = {"target": str(link), "kind": kind, "delay": delay, "start": version}
                zygote.stdin.write(json.dumps(spec) + "\n")
                zygote.stdin.flush()
                out = json.loads(zygote.stdout.readline())
                assert out["error"] is None, out
                if n == 0:
                    lead = out["lead"] or 0.0
                    spans.append((0.25 - lead) / max(1, out["done"] - version))
                text = target.read_text()
                got = _version_of(text)
                # exactly the last finished version, or exactly the one being written
                assert got in (out["done"], out["begun"]), (got, out)
                assert text == crash_child.content(kind, got)
                _check_intact(target, link)
                figures["trials"] += 1
                figures["new" if got > version else "old"] += 1
                left = set(_temps(target.parent))
                if left - seen:  # this kill left a temp file: it hit the write path
                    figures["mid_write_kills"] += 1
                seen |= left
                version = got
        finally:
            zygote.stdin.close()
            zygote.wait(timeout=30)
        # The next server start removes every temp file the killed writers left.
        figures["temps_cleaned"] += len(_temps(target.parent))
        server = await Server.start(ws, state_dir=state)
        try:
            assert _temps(target.parent) == []
            assert sorted(p.name for p in target.parent.iterdir()) == sorted(
                ["target.txt", *LOOKALIKES]
            )
            _check_lookalikes(target.parent)
            r = await server.call(READ, file_path="link.txt", limit=3)
            assert r["ok"], r
        finally:
            await server.stop()
    record("crash (forked writer)", **figures)
    assert figures["trials"] == trials
    assert figures["mid_write_kills"] > 0  # the kills did land inside writes


async def test_server_killed_mid_write(tmp_path: Path) -> None:
    trials = size(4, 60)
    rng = random.Random(11)
    state = tmp_path / "state"
    opts = {"maxReadBytes": 64 << 20, "maxReadTokens": 1 << 30, "defaultReadLines": 1 << 20}
    figures = {"trials": 0, "acked_then_kept": 0, "unacked_landed": 0, "temps_cleaned": 0}
    kinds = ["small"] * trials if trials < 10 else ["small", "big"] * (trials // 2)
    ws, target, link = _setup(tmp_path, "small")
    version = 0
    for kind in kinds:
        target.write_text(crash_child.content(kind, version))
        server = await Server.start(ws, state_dir=state, options=opts)
        # The server's start-up removed what the previous (killed) one left.
        assert _temps(target.parent) == []
        r = await server.call(READ, file_path="link.txt")
        assert r["ok"], r
        # Pipeline a burst of versions, then kill the server at a random instant.
        burst = [version + k for k in range(1, 9)]
        pending = []
        for i in burst:
            if crash_child.is_write(i):
                params = {"file_path": "link.txt", "content": crash_child.content(kind, i)}
                pending.append(server.request("workspace/executeCommand", _cmd(WRITE, params)))
            else:
                params = {
                    "file_path": "link.txt",
                    "old_string": f"marker: {i - 1}\n",
                    "new_string": f"marker: {i}\n",
                }
                pending.append(server.request("workspace/executeCommand", _cmd(EDIT, params)))
        tasks = [asyncio.ensure_future(p) for p in pending]
        await asyncio.sleep(rng.uniform(0.0, 0.25))
        server.kill()
        acked = 0
        for i, t in zip(burst, tasks, strict=True):
            try:
                resp = await t
            except Exception:
                continue
            assert resp["result"]["ok"], resp
            acked = i
        await server.stop()
        text = target.read_text()
        got = _version_of(text)
        assert text == crash_child.content(kind, got)
        assert version <= got <= burst[-1] and got >= acked, (version, got, acked)
        _check_intact(target, link)
        figures["trials"] += 1
        figures["acked_then_kept"] += acked > version
        figures["unacked_landed"] += got > acked
        figures["temps_cleaned"] += len(_temps(target.parent))
        version = got
    server = await Server.start(ws, state_dir=state, options=opts)
    assert _temps(target.parent) == []
    assert sorted(p.name for p in target.parent.iterdir()) == sorted(["target.txt", *LOOKALIKES])
    _check_lookalikes(target.parent)
    await server.stop()
    record("crash (real server)", **figures)


def _cmd(command: str, params: dict[str, object]) -> dict[str, object]:
    return {"command": command, "arguments": [params]}


def test_cleanup_spares_live_writers_and_user_files(tmp_path: Path) -> None:
    """Only Steadyhand's own temp names of dead processes are removed."""
    from steadyhand.fs.atomic import TempJournal

    folder = tmp_path / "f"
    folder.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    names = {
        f".a.txt.steadyhand-{dead.pid}-0123abcd.tmp": True,  # dead writer: removed
        f".b.txt.steadyhand-{os.getpid()}-0123abcd.tmp": False,  # live writer: kept
        f"a.txt.steadyhand-{dead.pid}-0123abcd.tmp": False,  # no leading dot: a user's file
        f".c.txt.steadyhand-{dead.pid}-0123abcd.tmp.bak": False,
        ".d.txt.steadyhand-x-0123abcd.tmp": False,
        "notes.txt": False,
    }
    for name in names:
        (folder / name).write_text("user data")
    (folder / f".e.steadyhand-{dead.pid}-0123abcd.tmp").mkdir()  # a folder: kept
    journal_dir = tmp_path / "state" / "temps"
    journal_dir.mkdir(parents=True)
    (journal_dir / f"{dead.pid}.folders").write_text(json.dumps(str(folder)) + '\n"/unfinis')
    removed = TempJournal(str(journal_dir)).sweep()
    assert [os.path.basename(p) for p in removed] == [n for n, gone in names.items() if gone]
    for name, gone in names.items():
        assert (folder / name).exists() != gone
    assert not (journal_dir / f"{dead.pid}.folders").exists()


def test_a_clean_exit_removes_its_own_journal_only(tmp_path: Path) -> None:
    """The journal is kept for a crash; a process that ends cleanly takes its own away
    and leaves the other processes' journals alone."""
    from steadyhand.fs.atomic import TempJournal

    journal_dir = tmp_path / "temps"
    journal = TempJournal(str(journal_dir))
    journal.note(str(tmp_path / "a"))
    other = journal_dir / "999999.folders"
    other.write_text(json.dumps(str(tmp_path / "b")) + "\n")
    assert Path(journal.file).exists()
    journal.finish()
    assert not Path(journal.file).exists()
    assert other.exists()
    journal.note(str(tmp_path / "a"))  # a write after that is journaled again
    assert json.loads(Path(journal.file).read_text()) == str(tmp_path / "a")

    # a temp file of this process still there (its removal failed): removed at the exit
    folder = tmp_path / "a"
    folder.mkdir()
    mine = folder / f".f.txt.steadyhand-{os.getpid()}-0123abcd.tmp"
    theirs = folder / ".g.txt.steadyhand-1-0123abcd.tmp"
    for p in (mine, theirs):
        p.write_text("old copy")
    journal.finish()
    assert not mine.exists() and theirs.exists()
    assert not Path(journal.file).exists()


def test_a_temp_file_that_cannot_be_removed_keeps_the_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from steadyhand.fs.atomic import TempJournal

    folder = tmp_path / "a"
    folder.mkdir()
    stuck = folder / f".g.txt.steadyhand-{os.getpid()}-0123abcd.tmp"
    stuck.write_text("old copy")
    journal = TempJournal(str(tmp_path / "temps"))
    journal.note(str(folder))
    real_unlink = os.unlink

    def failing_unlink(path: str, *args: object, **kwargs: object) -> None:
        if str(path) == str(stuck):
            raise PermissionError(13, "Permission denied", str(path))
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", failing_unlink)
    journal.finish()
    monkeypatch.undo()
    assert stuck.exists()
    assert Path(journal.file).exists()  # for the next start to clean up
