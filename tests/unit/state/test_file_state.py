"""What a session remembers of a file (``state/file_state.py``): shown ranges, packed
records, a session as a bounded LRU."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from steadyhand.state.file_state import (
    FileRecord,
    Session,
    covers,
    merge_ranges,
    missing_lines,
    pack_any,
    shift_ranges,
    unpack_any,
)

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
    assert unpack_any(rec.path, pack_any(rec)) == rec


def test_a_session_is_a_bounded_lru_of_records() -> None:
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
