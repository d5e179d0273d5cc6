"""Unit and property tests for the pure parts: line endings, encodings, ranges, globs,
positions, staleness."""

from __future__ import annotations

import codecs
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

from steadyhand.documents.positions import PositionIndex, line_starts, units
from steadyhand.paths.globs import matches
from steadyhand.state.file_state import (
    FileRecord,
    covers,
    merge_ranges,
    missing_lines,
    shift_ranges,
)
from steadyhand.text.chars import normalize_quotes
from steadyhand.text.encoding import BinaryContent, Encoding, decode
from steadyhand.text.lines import (
    NewlineMap,
    count_lines,
    ending_stats,
    split_lines,
    to_view,
    with_endings,
)
from steadyhand.text.splices import Splice, apply_splices

line_text = st.text(st.characters(blacklist_characters="\r\n"), max_size=20)
endings = st.sampled_from(["\n", "\r\n", "\r"])


@st.composite
def raw_texts(draw: st.DrawFn) -> str:
    lines = draw(st.lists(line_text, max_size=12))
    out = []
    for line in lines:
        out.append(line + draw(endings))
    if draw(st.booleans()) and lines:
        out[-1] = out[-1].rstrip("\r\n")
    return "".join(out)


@given(raw_texts())
def test_view_has_no_cr_and_same_line_count(raw: str) -> None:
    view = to_view(raw)
    assert "\r" not in view
    assert count_lines(view) == len(split_lines(view))
    if raw:
        trailing_break = raw.endswith(("\n", "\r"))
        assert count_lines(view) == len(line_starts(raw)) - (1 if trailing_break else 0)


@given(raw_texts(), st.data())
def test_newline_map_splices_keep_untouched_bytes(raw: str, data: st.DataObject) -> None:
    view = to_view(raw)
    a = data.draw(st.integers(0, len(view)))
    b = data.draw(st.integers(a, len(view)))
    nm = NewlineMap(raw)
    ra, rb = nm.to_raw(a), nm.to_raw(b)
    # the mapped region is exactly the view region, line endings aside
    assert to_view(raw[ra:rb]) == view[a:b]
    new = apply_splices(raw, [_splice(ra, rb, "X")])
    assert new[:ra] == raw[:ra] and new[ra + 1 :] == raw[rb:]


def _splice(a: int, b: int, text: str):  # type: ignore[no-untyped-def]
    from steadyhand.text.splices import Splice

    return Splice(a, b, text)


def test_ending_stats_and_dominant() -> None:
    s = ending_stats("a\r\nb\r\nc\nd\re")
    assert (s.lf, s.crlf, s.cr) == (1, 2, 1)
    assert s.style == "mixed" and s.dominant == "\r\n"
    assert ending_stats("abc").style == "none" and ending_stats("abc").dominant == "\n"
    assert with_endings("a\nb\n", "\r\n") == "a\r\nb\r\n"


@given(st.text(max_size=50), st.sampled_from(["utf-8", "utf-16-le", "utf-16-be"]), st.booleans())
def test_encoding_round_trip(text: str, codec: str, bom: bool) -> None:
    text = text.replace("\x00", "")
    try:
        text.encode(codec)
    except UnicodeEncodeError:
        return
    enc = Encoding(codec, bom=bom or codec != "utf-8")
    data = enc.encode(text)
    try:
        decoded, got = decode(data)
    except BinaryContent:
        # only possible for control-heavy text without a BOM
        assert not enc.bom
        return
    assert decoded == text and got.encode(decoded) == data


def test_latin1_fallback_round_trips_every_byte() -> None:
    data = "café\n".encode("latin-1")
    text, enc = decode(data)
    assert enc.codec == "latin-1" and enc.encode(text) == data
    assert decode(codecs.BOM_UTF8 + b"x")[1].bom


@given(st.text(max_size=40))
def test_quote_normalization_preserves_length(s: str) -> None:
    assert len(normalize_quotes(s)) == len(s)
    assert "\u2019" not in normalize_quotes(s) and "\u201c" not in normalize_quotes(s)


ranges = st.lists(
    st.tuples(st.integers(1, 50), st.integers(0, 10)).map(lambda t: (t[0], t[0] + t[1])),
    max_size=6,
)


@given(ranges, st.integers(1, 60), st.integers(0, 10))
def test_merge_covers_missing(rs: list[tuple[int, int]], lo: int, span: int) -> None:
    merged: tuple[tuple[int, int], ...] = ()
    for r in rs:
        merged = merge_ranges(merged, r)
    hi = lo + span
    shown = {n for a, b in rs for n in range(a, b + 1)}
    want_all = all(n in shown for n in range(lo, hi + 1))
    assert covers(merged, lo, hi) == want_all
    gap = missing_lines(merged, lo, hi)
    assert (gap is None) == want_all
    if gap is not None:
        assert gap[0] not in shown and lo <= gap[0] <= gap[1] <= hi


def test_shift_ranges_after_edit() -> None:
    # lines 1-10 and 20-30 shown; lines 5-6 became 5-8 (+2)
    assert shift_ranges(((1, 10), (20, 30)), 5, 6, 2, 8) == ((1, 12), (22, 32))
    # an edit beyond everything shown only adds the edited lines
    assert shift_ranges(((1, 3),), 10, 10, 0, 10) == ((1, 3), (10, 10))
    # line 2 deleted (nothing written): line 4, never shown, moves up and stays unshown
    assert shift_ranges(((1, 3),), 2, 2, -1, 1) == ((1, 2),)


def test_globs() -> None:
    assert matches("*.pem", "/w/a/b/key.pem", "a/b/key.pem")
    assert matches("secrets/**", "/w/secrets/x/y.txt", "secrets/x/y.txt")
    assert matches("**/.git/**", "/w/.git/config", ".git/config")
    assert not matches("*.pem", "/w/a/key.pem.txt", "a/key.pem.txt")
    assert matches("src/*.py", "/w/src/a.py", "src/a.py")
    assert not matches("src/*.py", "/w/src/sub/a.py", "src/sub/a.py")
    assert matches("/etc/**", "/etc/passwd")


@given(raw_texts(), st.sampled_from(["utf-8", "utf-16", "utf-32"]), st.data())
def test_positions_round_trip(raw: str, enc: str, data: st.DataObject) -> None:
    idx = PositionIndex(raw, enc)
    view_offsets = [
        i
        for i in range(len(raw) + 1)
        if not (0 < i < len(raw) and raw[i - 1] == "\r" and raw[i] == "\n")
    ]
    off = data.draw(st.sampled_from(view_offsets))
    line, ch = idx.position(off)
    assert idx.offset(line, ch) == off


def test_units() -> None:
    assert (
        units("a😀", "utf-16") == 3 and units("a😀", "utf-8") == 5 and units("a😀", "utf-32") == 2
    )
    assert units("漢", "utf-16") == 1 and units("e\u0301", "utf-16") == 2


@given(
    st.lists(st.sampled_from("abcde"), max_size=30), st.lists(st.sampled_from("abcde"), max_size=30)
)
def test_changed_middle(old: list[str], new: list[str]) -> None:
    from steadyhand.text.lines import changed_middle

    pre, om, nm = changed_middle(old, new)
    suf = len(old) - pre - len(om)
    assert suf == len(new) - pre - len(nm) >= 0
    assert old[:pre] == new[:pre] and old[len(old) - suf :] == new[len(new) - suf :]
    assert old[:pre] + om + old[len(old) - suf :] == old
    assert new[:pre] + nm + new[len(new) - suf :] == new


_texts = st.text(st.sampled_from("ab\n"), max_size=80)


@given(_texts, _texts)
def test_common_prefix_and_suffix_chars(a: str, b: str) -> None:
    from steadyhand.text.lines import common_prefix_chars, common_suffix_chars

    p = common_prefix_chars(a, b)
    assert a[:p] == b[:p] and (p == min(len(a), len(b)) or a[p] != b[p])
    limit = min(len(a), len(b)) - p
    s = common_suffix_chars(a, b, limit)
    assert s <= limit and a[len(a) - s :] == b[len(b) - s :]
    assert s == limit or a[len(a) - s - 1] != b[len(b) - s - 1]


def test_common_prefix_chars_across_chunks() -> None:
    from steadyhand.text.lines import common_prefix_chars, common_suffix_chars

    base = "x" * 100_000
    for at in (0, 31, 32_767, 32_768, 65_000, 99_999):
        other = base[:at] + "y" + base[at + 1 :]
        assert common_prefix_chars(base, other) == at
        assert common_suffix_chars(base, other, len(base)) == len(base) - at - 1


@given(_texts, _texts)
def test_changed_lines_matches_the_list_form(a: str, b: str) -> None:
    from collections import Counter

    from steadyhand.text.lines import changed_lines, changed_middle

    pre, om, nm = changed_lines(a, b)
    old, new = split_lines(a), split_lines(b)
    assert old[:pre] == new[:pre]
    # what was added and removed (as multisets) is what the whole-list form finds
    _, lom, lnm = changed_middle(old, new)
    assert Counter(nm) - Counter(om) == Counter(lnm) - Counter(lom)
    assert Counter(om) - Counter(nm) == Counter(lom) - Counter(lnm)
    # the middle is where it says it is in the new text
    assert new[pre : pre + len(nm)] == nm and old[pre : pre + len(om)] == om


@given(
    st.lists(st.text(st.characters(blacklist_characters="\r\n"), max_size=8), max_size=50),
    st.sampled_from([1, 2, 4090, 4096, 8191, 999_998, 1_000_001]),
)
def test_numbered_lines_look_like_cat_n(lines: list[str], first: int) -> None:
    from steadyhand.text.render import number_lines

    text, cut = number_lines(lines, first, 2000)
    expected = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=first))
    assert text == expected and not cut


_hex = st.text("0123456789abcdef", min_size=32, max_size=32)
_maybe = st.one_of(st.none(), st.integers(0, 10**9))


@st.composite
def file_records(draw: st.DrawFn) -> FileRecord:
    total = draw(st.integers(0, 10**7))
    h = draw(_hex)
    shown = draw(
        st.one_of(
            st.just(((1, total),)),
            st.lists(st.tuples(st.integers(1, 10**6), st.integers(1, 10**6)), max_size=4).map(
                tuple
            ),
        )
    )
    return FileRecord(
        path=draw(st.text(min_size=1, max_size=20)),
        hash=draw(st.one_of(st.just(h), _hex, st.just("not-a-hash"))),
        view_hash=draw(st.one_of(st.just(h), _hex)),
        source=draw(st.sampled_from(["disk", "buffer"])),
        mtime_ns=draw(st.integers(-(2**62), 2**62)),
        size=draw(st.integers(0, 2**40)),
        encoding=draw(st.sampled_from(["utf-8", "utf-16-le", "latin-1"])),
        line_ending=draw(st.sampled_from(["LF", "CRLF", "mixed", "none"])),
        total_lines=total,
        shown=shown,
        last_read=draw(st.one_of(st.none(), st.tuples(_maybe, _maybe))),
        version=draw(st.one_of(st.none(), st.integers(-(2**31), 2**31))),
        stale=draw(st.booleans()),
        stored=draw(st.one_of(st.just(0), st.integers(1, 2**64 - 1))),
    )


@given(file_records())
def test_packed_records_come_back_unchanged(rec: FileRecord) -> None:
    from steadyhand.state.file_state import pack_any, unpack_any

    assert unpack_any(rec.path, pack_any(rec)) == rec


def test_a_session_is_a_bounded_lru_of_records() -> None:
    from steadyhand.state.file_state import Session

    s = Session("s", 2)

    def rec(path: str) -> FileRecord:
        return FileRecord(path, "0" * 32, "0" * 32, "disk", 1, 2, "utf-8", "LF", 3, ((1, 3),))

    s.put(rec("a"))
    s.put(rec("b"))
    assert s.get("a") == rec("a")  # a is now the most recently used
    s.put(rec("c"))
    assert "b" not in s and "a" in s and "c" in s and len(s) == 2
    child = s.fork("child")
    child.drop("a")
    assert "a" in s and "a" not in child


@given(st.text(st.sampled_from("a\r\n"), max_size=40), st.data())
def test_ending_stats_after_several_splices(old: str, data: st.DataObject) -> None:
    from steadyhand.text.lines import ending_stats_spliced
    from steadyhand.text.splices import Splice

    cuts = sorted(data.draw(st.lists(st.integers(0, len(old)), max_size=8)))
    splices = [
        Splice(a, b, data.draw(st.text(st.sampled_from("a\r\n"), max_size=4)))
        for a, b in zip(cuts[::2], cuts[1::2], strict=False)
    ]
    new = apply_splices(old, splices)
    assert ending_stats_spliced(ending_stats(old), old, new, splices) == ending_stats(new)


@given(
    st.lists(st.text("ab\n", max_size=60), min_size=1, max_size=3),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 60), st.booleans()), max_size=12),
)
def test_line_lookups_in_any_order_count_from_the_start(
    texts: list[str], lookups: list[tuple[int, int, bool]]
) -> None:
    from steadyhand.tools.edit_plan import _line_at

    for which, off, copy in lookups:
        view = texts[which % len(texts)]
        if copy:  # an equal text in another object: found by its key, not its identity
            view = "".join(list(view))
        off = min(off, len(view))
        key = ("disk", view, "utf-8")
        assert _line_at(view, off, key) == view.count("\n", 0, off) + 1


_glob_parts = st.sampled_from(["a", "b", "*", "?", "**", ".git", "[ab]", "[!a]", "x.*"])


@given(
    st.lists(st.lists(_glob_parts, min_size=1, max_size=3).map("/".join), max_size=5),
    st.lists(st.sampled_from(["a", "b", "ab", ".git", "x.y", "c"]), min_size=1, max_size=4),
)
def test_one_pass_over_several_globs_finds_the_first_that_matches(
    globs: list[str], parts: list[str]
) -> None:
    import os

    from steadyhand.paths.globs import first_match, matches, relative_to

    root = "/w"
    path = root + "/" + "/".join(parts)
    rel = relative_to(path, root)
    assert rel == os.path.relpath(path, root)
    expected = next((g for g in globs if matches(g, path, rel)), None)
    assert first_match(globs, path, rel) == expected
    assert first_match(globs, path) == next((g for g in globs if matches(g, path)), None)


@st.composite
def _spliced(draw: st.DrawFn) -> tuple[str, list[Splice]]:
    """A text and ordered, non-overlapping splices on it (any may be empty)."""
    view = draw(st.text(alphabet="ab\n", max_size=60))
    cuts = sorted(draw(st.lists(st.integers(0, len(view)), min_size=2, max_size=8)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    assume(pairs)
    texts = st.text(alphabet="xy\n", max_size=6)
    return view, [Splice(a, b, draw(texts)) for a, b in pairs]


@given(_spliced(), st.integers(0, 60))
def test_splice_lines_and_the_changed_span_count_as_from_the_top(
    case: tuple[str, list[Splice]], known: int
) -> None:
    from steadyhand.tools.edit_plan import _line_at, changed_span, splice_lines

    view, splices = case
    key = ("disk", view + "\0splices", "utf-8")
    _line_at(view, min(known, len(view)), key)  # some line already known in this text
    lines = splice_lines(view, splices, key)
    assert lines == [
        (
            view.count("\n", 0, sp.start) + 1,
            view.count("\n", 0, max(sp.start, sp.end - 1)) + 1,
        )
        for sp in splices
    ]
    # what the whole-span counts from the first splice gave
    new_view = apply_splices(view, splices)
    first, last = splices[0], splices[-1]
    first_line = view.count("\n", 0, first.start) + 1
    new_end = last.end + len(new_view) - len(view)
    assert changed_span(view, new_view, splices, lines) == (
        first_line,
        first_line + view.count("\n", first.start, max(first.start, last.end - 1)),
        first_line + new_view.count("\n", first.start, max(first.start, new_end - 1)),
    )


def test_latest_disk_texts_are_bounded_and_keyed_by_content(tmp_path: Path) -> None:
    import os
    import sys

    from steadyhand.documents import snapshot as snapshots
    from steadyhand.state.hashing import content_hash

    each = sys.getsizeof("x" * 30)
    latest = snapshots._Latest(most=3, budget=3 * each + 10)
    files = []
    for i in range(5):
        f = tmp_path / f"f{i}.txt"
        f.write_text("x" * 30)
        files.append(f)
        snap = snapshots.from_raw(str(f), snapshots.read_all(str(f)))
        assert snap.lines  # worked out from the text: not kept with the copy
        latest.put(snap)
    kept = [f for f in files if latest.get(str(f)) is not None]
    assert kept == files[2:]  # three at most, the oldest went first
    copy = latest.get(str(files[4]))
    assert copy is not None and "lines" not in copy.__dict__
    big = snapshots.from_raw(str(files[0]), snapshots.read_all(str(files[0])))
    object.__setattr__(big, "raw", "y" * (4 * each))
    latest.put(big)
    assert latest.get(str(files[0])) is None  # over the whole budget: not kept
    latest.put(snapshots.from_disk(str(files[1])))
    latest.put(snapshots.from_disk(str(files[0])))
    total = sum(sys.getsizeof(e.raw) for f in files if (e := latest.get(str(f))) is not None)
    assert total <= latest.budget and latest._total == total

    # the module's own memo: the same bytes give the text decoded before, as a copy
    f = files[4]
    f.write_text("first\n")
    snap = snapshots.from_disk(str(f))
    again = snapshots.from_disk(str(f))
    assert again == snap and again is not snap
    assert again.lines  # worked out on the copy handed out ...
    assert "lines" not in snapshots._LATEST._items[str(f)][0].__dict__  # ... not kept
    # other bytes of the same length, with the time put back: decoded afresh
    st = os.stat(f)
    f.write_text("other\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    changed = snapshots.from_disk(str(f))
    assert changed.raw == "other\n" and changed.hash != snap.hash

    # what was written is remembered only when reading it back would give the same
    g = tmp_path / "written.txt"
    for text, kept in (("plain text\n", True), ("a NUL \x00 reads back as binary\n", False)):
        data = text.encode()
        g.write_bytes(data)
        written = snapshots.Snapshot(
            str(g), "disk", text, snapshots.UTF8, content_hash(data), len(data), 0
        )
        snapshots.note_written(written, data)
        entry = snapshots._LATEST.get(str(g))
        assert (entry is not None and entry.raw == text) is kept


def _shown_by_origin(view: str, splices: list[Splice], shown: set[int]) -> set[int]:
    """The lines of the spliced text that hold only characters the agent wrote or
    characters of old lines in ``shown``: a character-by-character model."""
    origin: list[int] = []  # per character of the new text: its old line, or 0 if written
    line, pos = 1, 0
    for sp in [*splices, Splice(len(view), len(view), "")]:
        for ch in view[pos : sp.start]:
            origin.append(line)
            line += ch == "\n"
        for ch in view[sp.start : sp.end]:
            line += ch == "\n"
        origin.extend([0] * len(sp.text))
        pos = sp.end
    new_view = apply_splices(view, splices)
    out: set[int] = set()
    n, start = 1, 0
    while start < len(new_view):
        end = new_view.find("\n", start)
        end = len(new_view) if end < 0 else end + 1
        if all(o == 0 or o in shown for o in origin[start:end]):
            out.add(n)
        n, start = n + 1, end
    return out


@given(_spliced(), st.sets(st.integers(1, 40)))
def test_lines_shown_after_splices_are_those_seen_or_written(
    case: tuple[str, list[Splice]], extra: set[int]
) -> None:
    """After an edit, a line counts as shown only if it holds nothing but what the agent
    saw (every line an edit replaces had to be shown) or wrote; none between the places."""
    from steadyhand.state.file_state import merge_ranges
    from steadyhand.tools.edit_plan import shown_after, splice_lines

    view, splices = case
    lines = splice_lines(view, splices, ("disk", view + "\0shown", "utf-8"))
    seen = set(extra) | {n for first, last in lines for n in range(first, last + 1)}
    ranges: tuple[tuple[int, int], ...] = ()
    for n in sorted(seen):
        ranges = merge_ranges(ranges, (n, n))
    after = shown_after(ranges, view, splices, lines)
    new_view = apply_splices(view, splices)
    total = new_view.count("\n") + (0 if new_view.endswith("\n") or not new_view else 1)
    got = {n for a, b in after for n in range(a, b + 1) if n <= total}
    assert got == _shown_by_origin(view, splices, seen)


@given(
    st.text(alphabet="ab\n", max_size=30),
    st.integers(0, 30),
    st.integers(0, 30),
    st.text(alphabet="ab\n", max_size=30),
)
def test_the_changed_core_of_a_splice_does_the_same_and_keeps_the_rest(
    view: str, i: int, j: int, text: str
) -> None:
    from steadyhand.text.splices import changed_core

    start, end = sorted((min(i, len(view)), min(j, len(view))))
    sp = Splice(start, end, text)
    core = changed_core(view, sp)
    assert apply_splices(view, [core]) == apply_splices(view, [sp])
    assert sp.start <= core.start <= core.end <= sp.end
    old = view[core.start : core.end]
    if old and core.text:  # nothing shared is left at either end
        assert old[0] != core.text[0] and old[-1] != core.text[-1]
