"""The work a change does on its way to the disk: nothing computed that is then thrown
away (a diff left out of the result, a second diff, a second decode of bytes Steadyhand
wrote itself), with the same results as before."""

from __future__ import annotations

import asyncio
import errno
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from steadyhand.apply.history import configure
from steadyhand.apply.stack import build_world
from steadyhand.config import Settings
from steadyhand.context import ToolContext
from steadyhand.fs.syscalls import Fault, FaultPlan
from steadyhand.paths.resolve import Roots
from steadyhand.protocol.errors import ToolError
from steadyhand.protocol.params import EditParams, ReadParams, WriteParams
from steadyhand.protocol.results import failure
from steadyhand.text import diff as diff_module
from steadyhand.text import encoding as encoding_module
from steadyhand.tools import edit as edit_tool
from steadyhand.tools import read as read_tool
from steadyhand.tools import write as write_tool
from tests.secret_samples import make

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


# -- durable changes: the syncs run while the change is checked and answered ----------


def _durable_ctx(ws: Path, plan: FaultPlan, **settings: Any) -> ToolContext:
    s = Settings(history_dir=str(ws.parent / "state"), fsync=True, **settings)
    ctx = build_world(s, syscalls=plan).ctx
    ctx.roots = Roots.of([str(ws)], (), ())
    configure(ctx, [str(ws)])
    return ctx


def _left_over(ws: Path) -> list[str]:
    return sorted(p.name for p in ws.iterdir() if ".steadyhand-" in p.name)


@pytest.mark.parametrize("call", ["fsync", "fsync_dir"])
@pytest.mark.parametrize("tool", ["edit", "write", "create"])
async def test_a_durable_change_is_answered_only_once_both_syncs_are_made(
    ws: Path, call: str, tool: str
) -> None:
    """Each sync runs on a thread of its own while the change is checked and its answer
    built; the answer still waits for the slower of them: here a sync held for 0.3 s."""
    f = ws / "d.py"
    f.write_text(_source(40))
    plan = FaultPlan([Fault(call, 0, at=1, pause_s=0.3)])
    ctx = _durable_ctx(ws, plan, syntax_check="off")
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    t0 = time.monotonic()
    if tool == "edit":
        out = await edit_tool.edit(ctx, EditParams(str(f), "compute(7,", "compute(70,"))
    elif tool == "write":
        out = await write_tool.write(ctx, WriteParams(str(f), _source(40, 3)))
    else:
        out = await write_tool.write(ctx, WriteParams(str(ws / "new.py"), _source(40)))
    took = time.monotonic() - t0
    assert out["ok"], out
    assert took >= 0.3, f"answered {took:.3f} s in, before the {call} ended"
    assert plan.faults[0].seen == 1  # the pause was taken, by this very change
    await _call(asyncio.sleep(0))  # the old copy is removed once the answer is out
    assert _left_over(ws) == []


@pytest.mark.parametrize("tool", ["edit", "write", "create"])
async def test_a_failed_sync_fails_the_change_and_leaves_everything_as_it_was(
    ws: Path, tool: str
) -> None:
    f = ws / "d.py"
    f.write_text(_source(40))
    plan = FaultPlan([Fault("fsync", errno.EIO, at=1)])
    ctx = _durable_ctx(ws, plan, syntax_check="off")
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    if tool == "edit":
        out = await _call(edit_tool.edit(ctx, EditParams(str(f), "compute(7,", "compute(70,")))
    elif tool == "write":
        out = await _call(write_tool.write(ctx, WriteParams(str(f), _source(40, 3))))
    else:
        out = await _call(write_tool.write(ctx, WriteParams(str(ws / "new.py"), _source(40))))
    assert not out["ok"] and out["error"] == "io_error", out
    assert "Input/output error" in out["message"]
    assert f.read_text() == _source(40)
    assert not (ws / "new.py").exists()
    assert _left_over(ws) == []
    # the next change goes through, with the record as it was
    out = await _call(edit_tool.edit(ctx, EditParams(str(f), "compute(8,", "compute(80,")))
    assert out["ok"], out


async def test_a_change_refused_after_its_bytes_were_written_leaves_nothing(ws: Path) -> None:
    """The new bytes are written (and synced) before the guards have spoken: a change
    they refuse leaves neither them nor the folders made for them."""
    plan = FaultPlan()
    ctx = _durable_ctx(ws, plan, syntax_check="off", secrets="block")
    key = make("AWS access key ID")
    target = ws / "deep" / "er" / "new.py"
    out = await _call(write_tool.write(ctx, WriteParams(str(target), f'KEY = "{key}"\n')))
    assert not out["ok"] and out["error"] == "secret_detected", out
    assert not (ws / "deep").exists()
    f = ws / "d.py"
    f.write_text(_source(40))
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    out = await _call(edit_tool.edit(ctx, EditParams(str(f), "compute(7, scale=0)", f'"{key}"')))
    assert not out["ok"] and out["error"] == "secret_detected", out
    assert f.read_text() == _source(40)
    assert _left_over(ws) == []


async def test_a_write_of_what_the_file_holds_writes_nothing(ws: Path) -> None:
    f = ws / "d.py"
    f.write_text(_source(40))
    plan = FaultPlan([Fault("open", errno.EIO, at=1)])  # any write would fail
    ctx = _durable_ctx(ws, plan, syntax_check="off")
    assert (await _call(read_tool.read(ctx, ReadParams(str(f)))))["ok"]
    out = await _call(write_tool.write(ctx, WriteParams(str(f), _source(40))))
    assert out["ok"] and out["via"] == "none", out
    assert plan.faults[0].seen == 0
