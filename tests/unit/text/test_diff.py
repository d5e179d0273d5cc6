"""Property tests for the unified diffs in results: applying one gives the new text."""

from __future__ import annotations

import difflib
import itertools
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from steadyhand.state.file_state import merge_ranges, ranges_through
from steadyhand.text.diff import (
    changed_ranges,
    changed_runs,
    line_splices,
    ranges_of_runs,
    splices_diff,
    stat,
    unified,
    whole_change,
    whole_diff,
)
from steadyhand.text.lines import split_lines
from steadyhand.text.splices import Splice, apply_splices


def _hunks(diff: str) -> Iterator[tuple[int, list[tuple[str, str, bool]]]]:
    """The hunks of a unified diff: each one's first old line (0-based) and its lines as
    (tag, text, whether the line has a line end: "\\ No newline at end of file" after it
    says it has none)."""
    lines = diff.split("\n")[2:-1] if diff else []
    i = 0
    while i < len(lines):
        header = lines[i]
        assert header.startswith("@@ -"), header
        start, _, length = header.split(" ")[1][1:].partition(",")
        first = int(start) - 1 if (int(length) if length else 1) else int(start)
        body: list[tuple[str, str, bool]] = []
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            tag, text = lines[i][0], lines[i][1:]
            assert tag in " +-", lines[i]
            i += 1
            ends = not (i < len(lines) and lines[i] == "\\ No newline at end of file")
            if not ends:
                i += 1
            body.append((tag, text, ends))
        yield first, body


def _patched(old: list[str], diff: str, *, line_ends: bool) -> list[str]:
    """``old`` patched with ``diff`` (asserting every context and removed line); with
    ``line_ends`` the lines carry their line ends, as the diff says them."""
    out: list[str] = []
    pos = 0
    for first, body in _hunks(diff):
        assert first >= pos
        out.extend(old[pos:first])
        pos = first
        for tag, text, ends in body:
            line = text + ("\n" if ends else "") if line_ends else text
            if tag == "+":
                out.append(line)
            else:
                assert old[pos] == line, (old[pos], line)
                if tag == " ":
                    out.append(line)
                pos += 1
    return out + old[pos:]


def apply_unified(old: list[str], diff: str) -> list[str]:
    """``old`` (lines without their ends) patched with a unified diff."""
    return _patched(old, diff, line_ends=False)


@st.composite
def edited(draw: st.DrawFn, most: int) -> tuple[list[str], list[str]]:
    alphabet = draw(st.sampled_from([3, 40, 10**6]))
    n = draw(st.integers(0, most))
    old = (
        [str(draw(st.integers(0, alphabet))) for _ in range(n)]
        if n < 60
        else [f"line {k % alphabet}" for k in range(n)]
    )
    new = list(old)
    for _ in range(draw(st.integers(0, 30))):
        k = draw(st.integers(0, max(0, len(new) - 1)))
        op = draw(st.sampled_from(["replace", "replace", "insert", "delete"]))
        if op == "insert" or not new:
            new.insert(k, draw(st.sampled_from(["x", "y", "line 1"])))
        elif op == "delete":
            del new[k]
        else:
            new[k] = draw(st.sampled_from(["x", "y", "line 2", f"new {k}"]))
    return old, new


@settings(max_examples=150, deadline=None)
@given(edited(60))
def test_small_diffs_apply_and_match_difflib(pair: tuple[list[str], list[str]]) -> None:
    old, new = pair
    diff = unified(old, new, name="f")
    assert apply_unified(old, diff) == new
    ref = "\n".join(difflib.unified_diff(old, new, "a/f", "b/f", lineterm="", n=3))
    assert diff == (ref + "\n" if ref else "")


@settings(max_examples=60, deadline=None)
@given(edited(1200))
def test_large_diffs_apply(pair: tuple[list[str], list[str]]) -> None:
    old, new = pair
    assert apply_unified(old, unified(old, new, name="f")) == new


@settings(max_examples=120, deadline=None)
@given(edited(1200), st.sampled_from(["\n", "\r\n", "\r"]), st.booleans())
def test_line_splices_make_the_new_text_and_leave_kept_lines_alone(
    pair: tuple[list[str], list[str]], eol: str, final: bool
) -> None:
    old_lines, new_lines = pair
    old = eol.join(old_lines) + (eol if final and old_lines else "")
    new = eol.join(new_lines) + (eol if old_lines == new_lines and final else "")
    splices = line_splices(old, new)
    assert apply_splices(old, splices) == new
    assert all(a.end <= b.start for a, b in itertools.pairwise(splices))
    assert all(sp.start < sp.end or sp.text for sp in splices)
    assert (splices == []) == (old == new)


def test_a_rewrite_in_place_is_one_hunk_per_changed_line() -> None:
    old = [f"value_{k} = {k}" for k in range(1000)]
    new = [f"value_{k} = {k + 1}" if k % 10 == 0 else line for k, line in enumerate(old)]
    diff = unified(old, new, name="f")
    assert apply_unified(old, diff) == new
    assert diff.count("\n-") == 100 and diff.count("\n+") == 101  # +1: the "+++" header


@st.composite
def spliced(draw: st.DrawFn) -> tuple[str, list[Splice]]:
    n = draw(st.integers(0, 80))
    period = draw(st.sampled_from([3, 7, 1000]))
    old = "".join(f"line {k % period}\n" for k in range(n))
    if draw(st.booleans()) and old:
        old = old[:-1]  # no final newline
    cuts = sorted(draw(st.lists(st.integers(0, len(old)), max_size=8)))
    splices = []
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        text = draw(st.sampled_from(["", "x", "new\n", "\n", "two\nlines\n", "line 1\n"]))
        splices.append(Splice(a, b, text))
    return old, splices


@settings(max_examples=300, deadline=None)
@given(spliced())
def test_a_diff_around_the_splices_applies(case: tuple[str, list[Splice]]) -> None:
    old, splices = case
    new = apply_splices(old, splices)
    diff = splices_diff(old, new, splices, name="f")
    assert apply_unified(split_lines(old), diff) == split_lines(new)
    # the splices' lines handed in (as an edit does) give the same diff
    firsts = [old.count("\n", 0, sp.start) + 1 for sp in splices]
    assert splices_diff(old, new, list(splices), name="f", firsts=firsts) == diff
    old_lines = split_lines(old)
    if len(set(old_lines)) == len(old_lines) and old.endswith("\n") and new.endswith("\n"):
        # unambiguous lines: the same hunks as a diff of the whole files
        assert diff == unified(old_lines, split_lines(new), name="f")


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_lines_replaced_in_place_give_the_general_diff(data: st.DataObject) -> None:
    from steadyhand.text import diff

    n = data.draw(st.integers(200, 600))
    period = data.draw(st.sampled_from([3, 50, 10**6]))
    old = [f"line {k % period}" for k in range(n)]
    new = list(old)
    for k in data.draw(st.lists(st.integers(0, n - 1), max_size=40)):
        new[k] = data.draw(st.sampled_from(["x", "y", "line 1"]))
    first = data.draw(st.integers(1, 40))  # the lines may start further down the file
    new_first = first + data.draw(st.integers(-1, 3)) if first > 1 else None
    fast = diff._unified(old, new, "f", first, new_first)
    shortcut = diff._aligned_changes
    diff._aligned_changes = lambda a, b: None  # type: ignore[assignment]
    try:
        general = diff._unified(old, new, "f", first, new_first)  # blocks, opcodes, groups
    finally:
        diff._aligned_changes = shortcut
    assert fast == general
    if first == 1:
        assert apply_unified(old, fast[0]) == new


@given(
    st.lists(st.sampled_from(["a", "b", "c", "", "d e"]), max_size=12),
    st.integers(0, 11),
    st.sampled_from(["a", "x", "", "b", "y z"]),
)
def test_one_replaced_line_diffs_as_difflib_does(old: list[str], k: int, line: str) -> None:
    new = list(old)
    if new:
        new[k % len(new)] = line
    ref = "\n".join(difflib.unified_diff(old, new, "a/f", "b/f", lineterm="", n=3))
    assert unified(old, new, name="f") == (ref + "\n" if ref else "")


def apply_exactly(old: str, diff: str) -> str:
    """``old`` patched with a unified diff, line ends included."""
    return "".join(_patched(re.findall(r"[^\n]*\n|[^\n]+$", old), diff, line_ends=True))


@settings(max_examples=300, deadline=None)
@given(spliced())
def test_diffs_give_the_new_text_exactly_final_line_end_included(
    case: tuple[str, list[Splice]],
) -> None:
    old, splices = case
    new = apply_splices(old, splices)
    assert apply_exactly(old, splices_diff(old, new, splices, name="f")) == new
    assert apply_exactly(old, whole_diff(old, new, name="f")) == new


def test_a_change_of_only_the_final_line_end_shows() -> None:
    diff = whole_diff("one\ntwo", "one\ntwo\n", name="f")
    assert diff.endswith("-two\n\\ No newline at end of file\n+two\n")
    ds = stat(diff)
    assert (ds.added, ds.removed) == (1, 1)
    assert splices_diff("one\ntwo", "one\ntwo\n", [Splice(7, 7, "\n")], name="f") == diff


def test_headers_name_the_file_as_git_does(tmp_path: Path) -> None:
    """``a/`` and ``b/`` before the path, an absolute path without its leading slash, so
    the diff applies with ``git apply`` / ``patch -p1`` run at the root."""
    f = tmp_path / "dir" / "f.py"
    f.parent.mkdir()
    f.write_text("one\ntwo\nthree\n")
    diff = whole_diff("one\ntwo\nthree\n", "one\nTWO\nthree\n", name=str(f))
    assert diff.splitlines()[:2] == [f"--- a{f}", f"+++ b{f}"]
    assert whole_diff("x\n", "y\n", name="rel/f.py").startswith("--- a/rel/f.py\n+++ b/rel/f.py\n")
    git = shutil.which("git")
    if git is None:
        return
    patch = tmp_path / "change.diff"
    patch.write_text(diff)
    subprocess.run(
        [git, "apply", "--unsafe-paths", "--directory=/", "-p1", str(patch)], cwd="/", check=True
    )
    assert f.read_text() == "one\nTWO\nthree\n"


@st.composite
def _rewrites(draw: st.DrawFn) -> tuple[list[str], list[str], list[int | None]]:
    """Distinct old lines, a new text made of runs kept, dropped or replaced by new lines
    (and lines inserted), and for each new line the old line it is (None: added)."""
    n = draw(st.integers(0, 40))
    old = [f"L{i}" for i in range(n)]
    new: list[str] = []
    origin: list[int | None] = []
    fresh = 0
    i = 0
    while i <= n:
        if draw(st.integers(0, 4)) == 0:  # lines inserted here
            for _ in range(draw(st.integers(1, 3))):
                new.append(f"N{fresh}")
                origin.append(None)
                fresh += 1
        if i == n:
            break
        action = draw(st.sampled_from(["keep", "keep", "keep", "drop", "replace"]))
        if action == "keep":
            new.append(old[i])
            origin.append(i)
        elif action == "replace":
            new.append(f"N{fresh}")
            origin.append(None)
            fresh += 1
        i += 1
    return old, new, origin


def merge_all(spans: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    out: tuple[tuple[int, int], ...] = ()
    for span in spans:
        out = merge_ranges(out, span)
    return out


def _lines_of(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {k for a, b in ranges for k in range(a, b + 1)}


@settings(max_examples=400, deadline=None)
@given(_rewrites(), st.lists(st.tuples(st.integers(1, 45), st.integers(0, 6)), max_size=4))
def test_shown_lines_move_through_a_diff(
    case: tuple[list[str], list[str], list[int | None]], spans: list[tuple[int, int]]
) -> None:
    """After a stale refusal shows the diff, a line counts as shown exactly when it is a
    line the agent had been shown (now wherever it moved) or a line the diff added."""
    old, new, origin = case
    shown = merge_all([(a, a + k) for a, k in spans if a + k <= len(old)])
    diff = whole_diff("".join(x + "\n" for x in old), "".join(x + "\n" for x in new), name="f")
    after = ranges_through(shown, changed_runs(diff))
    seen = _lines_of(shown)
    want = {j + 1 for j, o in enumerate(origin) if o is None or o + 1 in seen}
    assert _lines_of(after) == want


def test_a_name_with_a_space_applies_with_patch_and_git(tmp_path: Path) -> None:
    """A name with a space ends its header lines with a tab, as git writes it."""
    f = tmp_path / "my dir" / "sp ace.py"
    f.parent.mkdir()
    f.write_text("one\ntwo\n")
    diff = whole_diff("one\ntwo\n", "one\nTWO\n", name=str(f))
    assert diff.splitlines()[:2] == [f"--- a{f}\t", f"+++ b{f}\t"]
    assert stat(diff) == stat(whole_diff("one\ntwo\n", "one\nTWO\n", name="plain"))
    (tmp_path / "change.diff").write_text(diff)
    tools = [t for t in ("patch", "git") if shutil.which(t)]
    if not tools:
        pytest.skip("neither patch nor git is installed")
    for tool in tools:
        f.write_text("one\ntwo\n")
        argv = (
            ["patch", "-p1", "-s", "-i", str(tmp_path / "change.diff")]
            if tool == "patch"
            else [
                "git",
                "apply",
                "--unsafe-paths",
                "--directory=/",
                "-p1",
                str(tmp_path / "change.diff"),
            ]
        )
        subprocess.run(argv, cwd="/", check=True)
        assert f.read_text() == "one\nTWO\n", tool


def _new_lines_of(diff: str) -> tuple[set[int], set[int]]:
    """The new text's lines a diff adds ("+" lines), and for each run that only removes
    lines, the new line right after it (1-based), walked hunk by hunk."""
    added: set[int] = set()
    after_removal: set[int] = set()
    shift = 0  # new line = old line + shift, before the current hunk
    for first, body in _hunks(diff):
        line = first + shift + 1  # the next new line
        run_added = run_removed = 0
        for k, (tag, _, _) in enumerate(body):
            if tag == "+":
                added.add(line)
                line += 1
                run_added += 1
            elif tag == "-":
                run_removed += 1
            if tag == " " or k == len(body) - 1:
                if run_removed and not run_added:
                    after_removal.add(line)
                shift += run_added - run_removed
                run_added = run_removed = 0
            if tag == " ":
                line += 1
    return added, after_removal


_LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "x\n"]), max_size=40)


@settings(max_examples=400, deadline=None)
@given(_LINES, _LINES)
def test_changed_ranges_say_which_new_lines_changed(old: list[str], new: list[str]) -> None:
    """The ranges a result carries in place of a long diff: the same from the diff just
    built (its runs are known) and from any diff read line by line, and exactly the
    diff's added lines, plus the line in the place of each run only removed."""
    from steadyhand.text import diff as diff_module

    old_text, new_text = "".join(old), "".join(new)
    made = whole_diff(old_text, new_text, name="f")
    known = changed_ranges(made, len(new))
    diff_module._last_whole = None  # read it line by line
    assert changed_ranges(made, len(new)) == known
    inside = {i for a, b in known for i in range(a, b + 1)}
    added, after_removal = _new_lines_of(made)
    markers = {min(i, len(new)) for i in after_removal if new}
    assert added <= inside
    assert inside - added <= markers
    assert all(a <= b for a, b in known) and known == sorted(known)


_TEXT_LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "x\n", "no end"]), max_size=30)


@settings(max_examples=400, deadline=None)
@given(_TEXT_LINES, _TEXT_LINES)
def test_a_whole_diff_is_known_before_its_text_is_written(old: list[str], new: list[str]) -> None:
    """What a result needs of a whole-file diff (its counts, its changed lines, how long
    it is) comes without its text: the same as read from the text once written, and
    the text the same as a diff written at once."""
    from steadyhand.text import diff as diff_module

    old_text, new_text = "".join(old), "".join(new)
    whole = whole_change(old_text, new_text, name="f")
    assert whole._text is None  # nothing written yet
    stat_first, runs_first = whole.stat, whole.runs
    at_least = whole.lines_at_least
    assert whole._text is None
    text = whole.text
    diff_module._last_whole = None
    assert text == whole_diff(old_text, new_text, name="f")
    assert stat_first == stat(text) == stat(whole_diff(old_text, new_text, name="g"))
    assert changed_ranges(text, len(split_lines(new_text))) == ranges_of_runs(
        runs_first, len(split_lines(new_text))
    )
    notes = text.count("\\ No newline at end of file")
    assert at_least == text.count("\n") - notes
    assert (at_least == 0) == (text == "")


@given(st.lists(st.sampled_from(["a", "b", "", "c d"]), max_size=20), st.booleans())
def test_a_creation_diffs_as_difflib_does(lines: list[str], end: bool) -> None:
    """A new file's diff (every line added) is written without searching, as difflib
    writes it."""
    text = "\n".join(lines) + ("\n" if end and lines else "")
    ref = "\n".join(difflib.unified_diff([], split_lines(text), "a/f", "b/f", lineterm="", n=3))
    made = whole_diff("", text, name="f")
    if not text:
        assert made == ""
        return
    body = made.replace("\n\\ No newline at end of file", "")
    assert body == ref + "\n"
    assert whole_diff(text, "", name="f").count("\n-") == len(split_lines(text))


def test_the_last_whole_diff_is_let_go_of_before_the_next_is_planned(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The diff kept for the change just made holds both texts' line lists: they go
    before the next diff's are made, so that memory is reused, not taken anew (a write
    of 10k lines spent a third of its diff's time on memory it had not touched before)."""
    from steadyhand.text import diff as module

    first = whole_change("a\nb\n", "a\nc\n", name="f")
    assert whole_change(first.old, first.new, name="f") is first  # kept for its change
    kept_when_planned: list[object] = []
    real = module._plan

    def plan(*args: list[str]) -> object:
        kept_when_planned.append(module._last_whole)
        return real(*args)

    monkeypatch.setattr(module, "_plan", plan)
    second = whole_change("x\ny\n", "x\nz\n", name="f")
    assert kept_when_planned == [None]
    assert second.stat.added == 1 and second.runs == [(2, 2)]
