"""``steadyhand.read`` with ``file_paths``: each file read as a read of it alone would
read it, with its own result; bounded in count and in the text of one answer, and what
is left out is not recorded as read."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, READ
from tests.conftest import call, call_raw, client_with
from tests.editor import open_doc, type_text

reader = client_with({"denyGlobs": ["*.key"]})
small = client_with({"maxReadBytes": 4096, "maxReadTokens": 2000})
editor_client = client_with(editor=True)


async def test_each_file_is_read_and_answers_for_itself(
    reader: LanguageClient, workspace: Path
) -> None:
    (workspace / "a.py").write_text("a = 1\n")
    (workspace / "b.py").write_text("b = 2\nc = 3\n")
    (workspace / "id.key").write_text("k\n")
    result = await call(reader, READ, file_paths=["a.py", "missing.py", "id.key", "b.py"])
    assert result["ok"] is True
    files = result["files"]
    assert [f["ok"] for f in files] == [True, False, False, True]
    assert [f.get("error") for f in files] == [None, "not_found", "denied", None]
    assert files[0]["path"] == str(workspace / "a.py") and "message" not in files[0]
    assert files[3]["total_lines"] == 2
    assert files[1]["message"].startswith(str(workspace / "missing.py"))
    message = result["message"]
    assert f"==> {workspace / 'a.py'} <==\n     1\ta = 1" in message
    assert f"==> {workspace / 'b.py'} <==\n     1\tb = 2\n     2\tc = 3" in message
    assert message.endswith("(Read 2 of 4 files; 2 not read (each says why and what to do).)")
    # Each counts as read: both can be edited now.
    for name, old in (("a.py", "a = 1"), ("b.py", "c = 3")):
        edit = await call(reader, EDIT, file_path=name, old_string=old, new_string="z = 0")
        assert edit["ok"], edit
    # offset and limit hold for every file.
    ranged = await call(reader, READ, file_paths=["a.py", "b.py"], offset=2, limit=1)
    assert [f["start_line"] for f in ranged["files"]] == [2, 2]
    none = await call(reader, READ, file_paths=["nope1", "nope2"])
    assert none["ok"] is False and none["error"] == "not_found"


async def test_arguments_are_checked(reader: LanguageClient) -> None:
    with pytest.raises(Exception, match="file_paths"):
        await call_raw(reader, READ, [{"file_paths": [f"f{i}" for i in range(21)]}])
    with pytest.raises(Exception, match="file_paths"):
        await call_raw(reader, READ, [{"file_paths": []}])
    with pytest.raises(Exception, match="not both"):
        await call_raw(reader, READ, [{"file_paths": ["a"], "file_path": "b"}])
    with pytest.raises(Exception, match="file_path"):
        await call_raw(reader, READ, [{}])


async def test_what_does_not_fit_is_left_out_and_not_recorded(
    small: LanguageClient, workspace: Path
) -> None:
    (workspace / "big.txt").write_text("".join(f"line {i}\n" for i in range(150)))
    (workspace / "one.txt").write_text("x" * 3000 + "\n")
    (workspace / "two.txt").write_text("y\n")
    result = await call(small, READ, file_paths=["big.txt", "one.txt", "two.txt"])
    files = result["files"]
    assert files[0]["ok"] is True  # the first is read as a read of it alone would be
    assert files[1]["ok"] is False and files[1]["reason"] == "answer_full"
    assert "Read it in another call" in files[1]["message"]
    assert files[2]["ok"] is True
    assert len(result["message"]) <= 4096 + 600
    refused = await call(small, EDIT, file_path="one.txt", old_string="x", new_string="z")
    assert refused["error"] == "not_read"
    assert (await call(small, EDIT, file_path="two.txt", old_string="y", new_string="z"))["ok"]


async def test_open_buffers_are_read_as_the_editor_holds_them(
    editor_client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("disk\n")
    (workspace / "b.txt").write_text("b\n")
    state = editor_client.editor  # type: ignore[attr-defined]
    uri = open_doc(editor_client, state, f)
    type_text(editor_client, state, uri, "typed\n")
    result = await call(editor_client, READ, file_paths=[str(f), "b.txt"])
    assert result["files"][0]["source"] == "buffer" and result["files"][0]["unsaved"] is True
    assert "     1\ttyped" in result["message"]
