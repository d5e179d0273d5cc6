"""The work a change does on its way to the disk: nothing computed that is then thrown
away (a diff left out of the result, a second diff, a second decode of bytes Steadyhand
wrote itself), with the same results as before."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from steadyhand.apply.history import configure
from steadyhand.apply.stack import build_world
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import EditParams, ReadParams, WriteParams
from steadyhand.protocol.results import failure
from steadyhand.text import diff as diff_module
from steadyhand.text import encoding as encoding_module
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import write as write_tool

Result = dict[str, Any]


def _ctx(ws: Path, **settings: Any) -> ToolContext:
    """A server's tools on ``ws``, built as the server builds them (without an editor)."""
    s = Settings(history_dir=str(ws.parent / "state"), **settings)
    ctx = build_world(s).ctx
    ctx.roots = Roots.of([str(ws)], (), ())
    configure(ctx, [str(ws)])
    return ctx


async def _call(coro: Any) -> Result:
    try:
        out: Result = await coro
    except ToolError as err:
        return failure(err)
    for _ in range(3):  # what runs after the answer
        await asyncio.sleep(0)
    return out


def _source(n: int, variant: int = 0) -> str:
    return "".join(
        f"    value_{i:06d} = compute({i}, scale={variant if i % 10 == 0 else 0})\n"
        for i in range(1, n + 1)
    )


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


class Tally:
    """How many times a function of a module ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
        self.calls = 0
        real = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


@pytest.fixture
def diff_texts(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tally]:
    """Counts the unified diffs written out (each one writes its header once)."""
    yield Tally(monkeypatch, diff_module, "_header")


async def test_a_write_whose_diff_is_left_out_never_writes_it(ws: Path, diff_texts: Tally) -> None:
    f = ws / "w.py"
    f.write_text(_source(1000))
    ctx = _ctx(ws, fsync=False, syntax_check="off")
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    diff_texts.calls = 0
    out = await _call(write_tool.write(ctx, WriteParams(str(f), _source(1000, 1))))
    assert out["ok"] and out["diff_omitted"] is True
    assert out["added"] == out["removed"] == 100
    assert out["changed"][:2] == [[10, 10], [20, 20]] and out["changed_more"] == 50
    assert diff_texts.calls == 0  # neither for the result nor for the history entry
    assert f.read_text() == _source(1000, 1)


async def test_a_short_write_diff_is_written_once(ws: Path, diff_texts: Tally) -> None:
    f = ws / "w.py"
    f.write_text(_source(30))
    ctx = _ctx(ws, fsync=False, syntax_check="off")
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    diff_texts.calls = 0
    out = await _call(write_tool.write(ctx, WriteParams(str(f), _source(30, 1))))
    assert out["ok"] and out["diff"].count("\n@@ ") == 3
    assert diff_texts.calls == 1  # the history entry takes its counts from the same plan


async def test_a_new_file_written_diffs_nothing(ws: Path, diff_texts: Tally) -> None:
    ctx = _ctx(ws, fsync=False, syntax_check="off")
    out = await _call(write_tool.write(ctx, WriteParams(str(ws / "new.py"), _source(100))))
    assert out["ok"] and out["type"] == "create" and out["lines"] == 100
    assert "diff" not in out and "diff_omitted" not in out
    assert diff_texts.calls == 0


async def test_an_edit_that_creates_a_file_still_shows_its_diff(ws: Path) -> None:
    ctx = _ctx(ws, fsync=False, syntax_check="off")
    out = await _call(edit_tool.edit(ctx, EditParams(str(ws / "new.py"), "", "a\nb\n")))
    assert out["ok"] and out["diff"].endswith("@@ -0,0 +1,2 @@\n+a\n+b\n")


async def test_edits_never_decode_the_bytes_they_wrote(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every edit reads its file back and hashes it, but the text it wrote there itself
    is taken as it is: no edit decodes the bytes an earlier one wrote, nor its own."""
    from steadyhand.documents import snapshot

    decoded: list[int] = []
    for name in ("decode", "decode_or_refuse"):
        real = getattr(snapshot, name, encoding_module.decode)

        def counted(data: bytes, *rest: Any, _real: Any = real) -> Any:
            decoded.append(len(data))
            return _real(data, *rest)

        monkeypatch.setattr(snapshot, name, counted, raising=False)
    f = ws / "e.py"
    f.write_text(_source(50))
    ctx = _ctx(ws, fsync=False, syntax_check="off")
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    decoded.clear()
    for old, new in (("scale=0)", "scale=9)"), ("scale=9)", "scale=0)")):
        line = f"value_000033 = compute(33, {old}"
        out = await _call(edit_tool.edit(ctx, EditParams(str(f), line, line.replace(old, new))))
        assert out["ok"], out
    assert decoded == []
    assert f.read_text() == _source(50)
