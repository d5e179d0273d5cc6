"""The search engines' bounds and fallbacks: ripgrep stopped at the deadline even while
it prints nothing, a pattern ripgrep cannot read answered by Python (never an empty
answer), and the one-pass shortcut of the line search never changing its answer."""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.tree.grep import Query, compile_query, matching_lines
from steadyhand.tree.search import Scope, python_search, rg_search, ripgrep_path, search

RG = ripgrep_path()
needs_rg = pytest.mark.skipif(
    RG is None and not os.environ.get("CI"), reason="ripgrep is not installed"
)


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands for rg")
def test_ripgrep_is_stopped_at_the_deadline_even_when_silent(tmp_path: Path) -> None:
    """An ``rg`` that prints nothing for a long time (no match in a huge tree) is stopped
    at the deadline, not waited for."""
    slow = tmp_path / "rg"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    (tmp_path / "ws").mkdir()
    scope = Scope(str(tmp_path / "ws"), None)
    started = time.monotonic()
    found = rg_search(str(slow), scope, Query("x"), deadline=time.monotonic() + 0.2)
    assert found.cut == "time" and found.files == []
    assert time.monotonic() - started < 5


@needs_rg
@pytest.mark.parametrize("pattern", ["(?>ab)c", "x(?=abc)", "(a)\\1c"])
def test_a_pattern_ripgrep_cannot_read_is_answered_by_python(tmp_path: Path, pattern: str) -> None:
    (tmp_path / "a.txt").write_text("abc\nxabc\naac\n")
    scope = Scope(str(tmp_path), None)
    expected = python_search(scope, Query(pattern), deadline=None)
    assert expected.files, pattern
    for engine in ("auto", "ripgrep"):
        found = search(scope, Query(pattern), deadline=None, engine=engine)
        assert [(f.rel, f.count) for f in found.files] == [(f.rel, f.count) for f in expected.files]
        assert found.engine == "python"


def _per_line(rx: re.Pattern[str], text: str) -> list[int]:
    rows = text.split("\n")
    if text.endswith("\n"):
        rows.pop()
    return [i for i, row in enumerate(rows) if rx.search(row)]


ATOMS = ["a", "b", "\\n", ".", "^", "$", "\\s", "\\b", "(?!a)", "(?<=b)", "\\A", "\\Z", "[^a]"]


@given(
    atoms=st.lists(st.sampled_from(ATOMS), min_size=1, max_size=4),
    text=st.text(alphabet="ab \n\r", max_size=20),
)
def test_the_one_pass_shortcut_never_changes_the_lines_found(atoms: list[str], text: str) -> None:
    query = Query("".join(atoms))
    rx = compile_query(query)
    assert matching_lines(rx, text, query) == _per_line(rx, text)
