"""The pure parts of ``list`` and ``search``: where a pattern lets a walk start, how a
long line is shown around its match, and line counts that agree with read's."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.apply.disk import DiskWorld
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.fs.syscalls import Syscalls
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.params import ListParams
from steadyhand.state.content_store import ContentStore
from steadyhand.state.file_state import SessionRegistry
from steadyhand.text.lines import split_lines, to_view
from steadyhand.tools.listing import _answer, _by_modified, _by_name, _Lister, literal_folder
from steadyhand.tools.search import clip
from steadyhand.tools.tree_scope import Place, count_lines, text_lines


@pytest.mark.parametrize(
    ("pattern", "folder"),
    [
        ("src/lib/**/*.py", "src/lib"),
        ("src/*.py", "src"),
        ("./src/a.py", "src"),
        ("/src/x/*.md", "src/x"),
        ("*.py", None),
        ("**/*.py", None),
        ("src*/a.py", None),
        ("{a,b}/c", None),
        ("a/../b/*.py", "a"),
        ("src/", None),
    ],
)
def test_the_folder_a_pattern_names(pattern: str, folder: str | None) -> None:
    assert literal_folder(pattern) == folder


@given(st.text(alphabet="ab\r\n", max_size=30))
def test_line_counts_agree_with_read(text: str) -> None:
    lines = len(split_lines(to_view(text)))
    assert count_lines(text.encode()) == lines
    assert text_lines(text) == lines
    assert count_lines(text.encode("utf-16")) == lines


def test_binary_has_no_line_count() -> None:
    assert count_lines(b"a\x00b\n") is None


def test_a_long_line_is_shown_around_its_match() -> None:
    line = "x" * 1000 + "NEEDLE" + "y" * 1000
    shown = clip(line, re.compile("NEEDLE"), most=100)
    assert "NEEDLE" in shown
    assert shown.startswith("[") and "characters cut]" in shown
    assert shown.endswith("more characters cut]")
    assert clip("short\r", None) == "short"
    head = clip("a" * 500, None, most=100)
    assert head.startswith("a" * 100) and head.endswith("[400 more characters cut]")


def _context(ws: Path) -> ToolContext:
    s = Settings()
    sys = Syscalls()
    return ToolContext(
        settings=s,
        roots=Roots.of([str(ws)], (), ()),
        sessions=SessionRegistry(s.max_tracked_files),
        store=ContentStore(s.content_store_bytes, s.content_store_max_file_bytes),
        syscalls=sys,
        world=DiskWorld(sys, fsync=False),
    )


@pytest.mark.parametrize("sort", ["modified", "name"])
def test_a_walk_out_of_time_says_so(tmp_path: Path, sort: str) -> None:
    for i in range(700):
        (tmp_path / f"f{i:03d}.txt").write_text("")
    ctx = _context(tmp_path)
    p = ListParams(sort=sort, limit=1000)
    places = [Place(str(tmp_path), str(tmp_path))]
    lister = _Lister(ctx, p, deadline=time.monotonic() - 1)  # already out of time
    got = (_by_modified if sort == "modified" else _by_name)(lister, places, 1000)
    assert got.stopped == "time" and not got.whole
    answer = _answer(ctx, p, places, got, 1000, False, asked=False)
    assert answer["cut"] == "time" and "total" not in answer
    assert "The walk stopped after 5 s" in answer["message"]
    assert len(answer["entries"]) < 700
