"""The file watcher on its own: recursive, new folders included, own temp files ignored."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from steadyhand.watch.external import ExternalChanges, _tracked_under
from steadyhand.watch.watcher import Watcher, is_temp_name, links_tell


async def _until(seen: list[tuple[str, str]], want: tuple[str, str], timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if want in seen:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{want} not reported; saw {seen}")


async def _ready(w: Watcher, probe: Path, seen: list[tuple[str, str]], *, tries: int = 250) -> None:
    """Rewrite ``probe`` until the watcher reports it: its set-up (and a new folder's
    watch) is added in the background."""
    for i in range(tries):
        probe.write_text(str(i))
        await asyncio.sleep(0.02)
        if any(p == str(probe) for p, _ in seen):
            return
    raise AssertionError(f"{probe} was never reported; saw {seen}")


async def test_status_counts_the_folders_once_set_up(tmp_path: Path) -> None:
    w = Watcher(asyncio.get_running_loop(), lambda p, k: None)
    for i in range(30):
        (tmp_path / f"d{i}" / "sub").mkdir(parents=True)
    try:
        w.ensure([str(tmp_path)])
        status = w.status()
        for _ in range(250):
            if status["state"] != "starting":
                break
            await asyncio.sleep(0.02)
            status = w.status()
        assert status == {"state": "watching", "folders": 61}
        w.enabled = False
        assert w.status()["state"] == "off"
    finally:
        w.stop()


@pytest.mark.parametrize(
    ("nlink", "subfolders", "verdict"),
    [
        (5, 3, True),  # ext4, XFS, tmpfs: 2 + subfolders
        (2, 0, None),  # a leaf: cannot tell a file system that always says 2
        (1, 0, False),  # btrfs, overlayfs merged folders: always 1
        (1, 4, False),
        (2, 3, False),  # always 2: not to be trusted
        (6, 3, False),  # a folder made meanwhile: trust nothing
    ],
)
def test_links_tell(nlink: int, subfolders: int, verdict: bool | None) -> None:
    assert links_tell(nlink, subfolders) is verdict


async def test_a_folder_made_inside_a_leaf_later_is_watched(tmp_path: Path) -> None:
    """Leaves are not listed at set-up; what is made in them afterwards is still seen."""
    seen: list[tuple[str, str]] = []
    w = Watcher(asyncio.get_running_loop(), lambda p, k: seen.append((p, k)))
    for i in range(5):
        (tmp_path / f"leaf{i}").mkdir()
    try:
        w.ensure([str(tmp_path)])
        await _ready(w, tmp_path / "probe.txt", seen)
        for _ in range(250):
            if w.status()["state"] == "watching":
                break
            await asyncio.sleep(0.02)
        assert w.status() == {"state": "watching", "folders": 6}
        (tmp_path / "leaf3" / "sub").mkdir()
        late = tmp_path / "leaf3" / "sub" / "c.txt"
        await _ready(w, late, seen, tries=100)  # the new folder's watch is added in the background
        assert w.status()["folders"] == 7
    finally:
        w.stop()


async def test_a_folder_renamed_is_reported_and_watched_under_its_new_name(
    tmp_path: Path,
) -> None:
    seen: list[tuple[str, str]] = []
    w = Watcher(asyncio.get_running_loop(), lambda p, k: seen.append((p, k)))
    (tmp_path / "d").mkdir()
    try:
        w.ensure([str(tmp_path)])
        await _ready(w, tmp_path / "probe.txt", seen)
        (tmp_path / "d").rename(tmp_path / "moved")
        await _until(seen, (str(tmp_path / "d"), "folder"))
        await _until(seen, (str(tmp_path / "moved"), "folder"))
        seen.clear()
        inside = tmp_path / "moved" / "x.txt"
        await _ready(w, inside, seen, tries=100)  # the new name's watch is added in the background
        assert not any(p.startswith(str(tmp_path / "d") + "/") for p, _ in seen)
    finally:
        w.stop()


async def test_missed_events_have_every_watched_root_checked_again(tmp_path: Path) -> None:
    """When the kernel's event queue overflows, which changes were missed is unknown: the
    roots are reported as folders, so everything tracked under them is checked."""
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    seen: list[tuple[str, str]] = []
    w = Watcher(asyncio.get_running_loop(), lambda p, k: seen.append((p, k)))
    try:
        w.ensure([str(tmp_path)])
        await _ready(w, tmp_path / "probe.txt", seen)
        seen.clear()
        # More events than the queue holds, while nobody reads: one write each, to two
        # files in turn (the kernel merges an event only with the same one just before).
        # Appending, not rewriting: a rewrite truncates, which makes ext4 flush the file
        # on close, milliseconds apiece.
        fds = [os.open(tmp_path / f"gen{i}.o", os.O_WRONLY | os.O_CREAT, 0o600) for i in (0, 1)]
        try:
            for i in range(limit + 100):
                os.write(fds[i % 2], b"x")
        finally:
            for fd in fds:
                os.close(fd)
        await _until(seen, (str(tmp_path), "folder"))
    finally:
        w.stop()


async def test_changes_anywhere_under_the_root_are_reported(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []
    w = Watcher(asyncio.get_running_loop(), lambda p, k: seen.append((p, k)))
    (tmp_path / "old" / "deep").mkdir(parents=True)
    try:
        w.ensure([str(tmp_path)])
        await _ready(w, tmp_path / "probe.txt", seen)
        assert w.watched_roots == {str(tmp_path)}

        deep = tmp_path / "old" / "deep" / "a.txt"
        deep.write_text("x")
        await _until(seen, (str(deep), "modified"))

        # a folder made after the watching started is watched too
        (tmp_path / "new" / "sub").mkdir(parents=True)
        fresh = tmp_path / "new" / "sub" / "b.txt"
        await _ready(w, fresh, seen, tries=100)  # the new folder's watch is added in the background

        deep.unlink()
        await _until(seen, (str(deep), "deleted"))
        moved = tmp_path / "moved.txt"
        os.rename(fresh, moved)
        await _until(seen, (str(fresh), "moved"))
        await _until(seen, (str(moved), "created"))

        # Steadyhand's own temp files never show up
        tmp = tmp_path / ".f.txt.steadyhand-1-0123abcd.tmp"
        tmp.write_text("t")
        tmp.unlink()
        await asyncio.sleep(0.2)
        assert not any(is_temp_name(p) for p, _ in seen)

        # a file written without a name and then named: only its name shows up
        dfd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fd = os.open(".", os.O_TMPFILE | os.O_WRONLY, 0o600, dir_fd=dfd)
            os.write(fd, b"anonymous\n")
            named = tmp_path / "named.txt"
            os.link(f"/proc/self/fd/{fd}", "named.txt", dst_dir_fd=dfd, follow_symlinks=True)
            os.close(fd)
        finally:
            os.close(dfd)
        await _until(seen, (str(named), "created"))
        await asyncio.sleep(0.2)
        assert not any(os.path.basename(p).startswith("#") for p, _ in seen), seen
        # ... while a file that really has such a name is reported as any other
        hashed = tmp_path / "#12345"
        hashed.write_text("1")
        await _until(seen, (str(hashed), "modified"))  # created, then written: the last
        seen.clear()
        with open(hashed, "a") as f:  # a change that is only a write
            f.write("2")
        await _until(seen, (str(hashed), "modified"))

        # switched off: nothing more is reported
        w.enabled = False
        seen.clear()
        (tmp_path / "quiet.txt").write_text("q")
        await asyncio.sleep(0.2)
        assert seen == []
    finally:
        w.stop()


@pytest.mark.parametrize(
    ("name", "temp"),
    [
        (".f.txt.steadyhand-12-0123abcd.tmp", True),
        ("f.txt", False),
        (".f.txt.tmp", False),
        ("f.steadyhand-1-0123abcd.tmp", False),
        (".env.steadyhand-backup.tmp", False),  # a user's file, named much the same
        (".a\nb.steadyhand-7-89abcdef.tmp", True),
    ],
)
def test_temp_names(name: str, temp: bool) -> None:
    assert is_temp_name(f"/w/{name}") is temp


def test_tracked_files_under_changed_folders_are_found_in_order() -> None:
    tracked = ["/w/a/x.py", "/w/b/y.py", "/w/a/deep/z.py", "/w/ab/q.py", "/v/r.py"]
    found = [p for p in _tracked_under(tracked, {"/w/a", "/v"}) if p is not None]
    assert found == ["/w/a/x.py", "/w/a/deep/z.py", "/v/r.py"]
    # a long stretch of files elsewhere still gives the caller a chance to look at the time
    elsewhere = [f"/other/{i}.py" for i in range(1000)]
    assert list(_tracked_under(elsewhere, {"/w"})) == [None] * 3


async def test_a_folder_recheck_lets_the_event_loop_answer_in_between() -> None:
    """Checking many tracked files again takes turns of the event loop, a slice each."""
    checked: list[str] = []

    class Fake:
        def changed(self, path: str, kind: str) -> None:
            time.sleep(0.001)  # about what reading and hashing a file takes
            checked.append(path)

        _recheck = ExternalChanges._recheck  # the real method, on this stand-in

    paths = [f"/w/{i}.py" for i in range(40)]
    Fake()._recheck(iter(paths))  # type: ignore[arg-type]
    assert 0 < len(checked) < len(paths)  # the rest waits for later turns
    for _ in range(100):
        if len(checked) == len(paths):
            break
        await asyncio.sleep(0)
    assert checked == paths
