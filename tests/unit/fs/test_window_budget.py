"""A window of a large file stops at its byte budget, whatever ``limit`` asks for: its
lines are the first lines of the window without a budget, they stop right after the line
that uses the budget up, and the file's hash and line count are the same."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from steadyhand.fs import reader

_line = st.text(st.sampled_from("ab é€"), max_size=40)


def _fresh(path: str, offset: int, limit: int, max_bytes: int | None) -> reader.Window:
    with reader._INDEX_LOCK:
        reader._INDEXES.pop(path, None)
    return reader.stream_window(path, offset, limit, max_bytes)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(_line, min_size=1, max_size=300),
    encoding=st.sampled_from(["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be"]),
    offset=st.integers(1, 320),
    limit=st.integers(1, 10**9),
    budget=st.integers(1, 600),
    indexed=st.booleans(),
)
def test_a_budget_cuts_the_window_after_the_line_that_uses_it_up(
    tmp_path: Path,
    monkeypatch: object,
    lines: list[str],
    encoding: str,
    offset: int,
    limit: int,
    budget: int,
    indexed: bool,
) -> None:
    monkeypatch.setattr(reader, "CHUNK", 64)  # type: ignore[attr-defined]
    f = tmp_path / "big.log"
    data = ("\n".join(lines) + "\n").encode(encoding)
    bom = {"utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}.get(encoding, b"")
    f.write_bytes(bom + data)
    path = str(f)
    full = _fresh(path, offset, limit, None)
    if indexed:
        _fresh(path, 1, 1, None)  # leaves an index behind (UTF-8 only)
        win = reader.stream_window(path, offset, limit, budget)
    else:
        win = _fresh(path, offset, limit, budget)
    assert (win.total_lines, win.hash) == (full.total_lines, full.hash)
    assert win.lines == full.lines[: len(win.lines)]
    per = 2 if encoding.startswith("utf-16") else 1  # what a kept line costs, per unit
    cost = [len(x.encode("utf-8")) if per == 1 else 2 * len(x) for x in win.lines]
    if win.capped:
        assert sum(cost) >= budget and sum(cost[:-1]) < budget
    else:
        assert win.lines == full.lines


def test_a_huge_limit_keeps_only_the_budget(tmp_path: Path) -> None:
    f = tmp_path / "big.log"
    f.write_bytes(b"x" * 99 + b"\n" * 1 + (b"y" * 99 + b"\n") * 50_000)
    win = _fresh(str(f), 1, 10**9, 64 * 1024)
    assert (
        win.capped and len(win.lines) == 662
    )  # 99 bytes a line kept: 65,536 / 99, rounded up and win.total_lines == 50_001
