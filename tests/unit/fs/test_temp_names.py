"""Steadyhand's temp names are told apart from a user's names that merely look alike,
a name ending with a newline included: the crash clean-up removes only its own."""

from __future__ import annotations

import os
from pathlib import Path

from steadyhand.fs.atomic import TEMP_PATTERN, clean_stale_temps, temp_basename
from steadyhand.watch.watcher import is_temp_name

DEAD = 999_999_999  # no such process


def test_a_name_ending_with_a_newline_is_never_a_temp_name(tmp_path: Path) -> None:
    ours = f".f.txt.steadyhand-{DEAD}-0000abcd.tmp"
    theirs = ours + "\n"
    assert TEMP_PATTERN.match(ours) and not TEMP_PATTERN.match(theirs)
    assert is_temp_name(f"/w/{ours}") and not is_temp_name(f"/w/{theirs}")
    (tmp_path / ours).write_text("left by a crash\n")
    (tmp_path / theirs).write_text("the user's\n")
    removed = clean_stale_temps(str(tmp_path))
    assert removed == [os.path.join(tmp_path, ours)]
    assert (tmp_path / theirs).read_text() == "the user's\n"


def test_temp_names_made_here_match() -> None:
    for name in ("f.txt", "a\nb", "x" * 300, ".hidden"):
        assert TEMP_PATTERN.match(temp_basename(name)), name
