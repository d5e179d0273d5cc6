"""``steadyhand.delete`` end to end over stdio: a file read and unchanged since (or with
``force``), an empty folder, or with ``recursive`` a folder and everything in it, within
``maxDeleteFiles``; every byte kept in history first, nothing deleted when any part is
refused."""

from __future__ import annotations

import os
from pathlib import Path

from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import DELETE, READ, UNDO
from steadyhand.protocol.commands import SESSION_FORK as FORK
from tests.conftest import call, client_with

deleter = client_with({"denyGlobs": ["**/*.secret"], "maxDeleteFiles": 4})


async def test_a_file_must_have_been_read_and_be_unchanged_unless_forced(
    deleter: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\n")
    unread = await call(deleter, DELETE, file_path="a.txt")
    assert unread["error"] == "not_read" and f.exists(), unread
    assert (await call(deleter, READ, file_path="a.txt"))["ok"]
    f.write_text("one\ntwo\n")
    stale = await call(deleter, DELETE, file_path="a.txt")
    assert stale["error"] == "stale" and f.exists(), stale
    assert "+two" in stale["message"]  # the refusal shows what changed, as a write's does
    # the stale refusal moved the view to what is there now: the next call goes through
    done = await call(deleter, DELETE, file_path="a.txt")
    assert done["ok"] and not f.exists(), done
    assert done["kind"] == "file" and done["files"] == 1 and done["deleted"] == [str(f)]
    assert done["change_id"] in done["message"]
    # a binary file cannot be read: force deletes it (kept in history all the same)
    b = workspace / "blob.bin"
    b.write_bytes(bytes(range(256)))
    refused = await call(deleter, DELETE, file_path="blob.bin")
    assert refused["error"] == "not_read", refused
    forced = await call(deleter, DELETE, file_path="blob.bin", force=True)
    assert forced["ok"] and not b.exists(), forced


async def test_folders_empty_not_empty_recursive(deleter: LanguageClient, workspace: Path) -> None:
    (workspace / "empty").mkdir()
    gone = await call(deleter, DELETE, file_path="empty/")
    assert gone["ok"] and not (workspace / "empty").exists(), gone
    d = workspace / "d"
    (d / "sub").mkdir(parents=True)
    (d / "x.txt").write_text("x\n")
    (d / "sub" / "y.txt").write_text("y\n")
    not_empty = await call(deleter, DELETE, file_path="d")
    assert not_empty["error"] == "not_empty" and not_empty["entries"] == 3, not_empty
    assert "recursive: true" in not_empty["message"]
    unread = await call(deleter, DELETE, file_path="d", recursive=True)
    assert unread["error"] == "not_read" and sorted(unread["unread"]) == ["sub/y.txt", "x.txt"]
    assert "force: true" in unread["message"]
    assert (await call(deleter, READ, file_path="d/x.txt"))["ok"]
    assert (await call(deleter, READ, file_path="d/sub/y.txt"))["ok"]
    (d / "x.txt").write_text("x changed\n")
    stale = await call(deleter, DELETE, file_path="d", recursive=True)
    assert stale["error"] == "stale" and stale["unread"] == ["x.txt"], stale
    assert (await call(deleter, READ, file_path="d/x.txt"))["ok"]
    dry = await call(deleter, DELETE, file_path="d", recursive=True, dry_run=True)
    assert dry["ok"] and dry["dry_run"] and sorted(dry["deleted"]) == ["sub/y.txt", "x.txt"]
    assert d.exists()
    done = await call(deleter, DELETE, file_path="d", recursive=True)
    assert done["ok"] and not d.exists(), done
    assert done["files"] == 2 and done["folders"] == 2


async def test_anything_refused_inside_refuses_the_whole_delete(
    deleter: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    def folder(name: str, *files: str) -> Path:
        root = workspace / name
        for f in files:
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_text(f"{f}\n")
        return root

    too_many = folder("many", *(f"{i}.txt" for i in range(5)))
    denied = folder("den", "a.txt", "k.secret")
    protected = folder("prot", "a.txt", ".git/HEAD")
    linked = folder("lnk", "a.txt")
    (linked / "out").symlink_to(tmp_path)
    cases = {
        "many": ("too_large", "maxDeleteFiles"),
        "den": ("denied", "deny pattern"),
        "prot": ("protected", ".git"),
        "lnk": ("not_regular_file", "symbolic link"),
    }
    for name, (code, said) in cases.items():
        r = await call(deleter, DELETE, file_path=name, recursive=True, force=True)
        assert r["error"] == code and said in r["message"], (name, r)
    assert too_many.exists() and len(list(too_many.iterdir())) == 5
    assert (denied / "a.txt").exists() and (protected / ".git" / "HEAD").exists()
    assert (linked / "a.txt").exists()


async def test_confinement_links_roots_and_sessions(
    deleter: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("o\n")
    (workspace / "f.txt").write_text("f\n")
    (workspace / "link.txt").symlink_to(workspace / "f.txt")
    (workspace / "out.txt").symlink_to(outside)
    (workspace / "x.secret").write_text("s\n")
    cases = {
        str(outside): "outside_workspace",
        "out.txt": "outside_workspace",
        "link.txt": "invalid_path",
        str(workspace): "invalid_path",
        "x.secret": "denied",
        "nothing.txt": "not_found",
    }
    for path, code in cases.items():
        r = await call(deleter, DELETE, file_path=path, force=True, recursive=True)
        assert r["error"] == code, (path, r)
    assert (await call(deleter, FORK, session="viewer", read_only=True))["ok"]
    ro = await call(deleter, DELETE, file_path="f.txt", force=True, session="viewer")
    assert ro["error"] == "read_only", ro
    assert outside.exists() and (workspace / "f.txt").exists() and (workspace / "x.secret").exists()


async def test_undo_brings_a_deleted_folder_back_byte_for_byte_with_its_modes(
    deleter: LanguageClient, workspace: Path
) -> None:
    d = workspace / "tree"
    (d / "bin" / "empty").mkdir(parents=True)
    files = {
        "crlf.txt": b"a\r\nb\r\n",
        "latin.txt": "caf\xe9\n".encode("latin-1"),
        "bom.txt": b"\xef\xbb\xbfbom\n",
        "bin/data.bin": bytes(range(256)) * 3,
    }
    for rel, data in files.items():
        (d / rel).write_bytes(data)
    os.chmod(d / "bin" / "data.bin", 0o750)
    os.chmod(d / "crlf.txt", 0o600)
    done = await call(deleter, DELETE, file_path="tree", recursive=True, force=True)
    assert done["ok"] and not d.exists(), done
    back = await call(deleter, UNDO, id=done["change_id"])
    assert back["ok"] and back["type"] == "restore", back
    for rel, data in files.items():
        assert (d / rel).read_bytes() == data, rel
    assert (d / "bin" / "empty").is_dir()
    assert (d / "bin" / "data.bin").stat().st_mode & 0o777 == 0o750
    assert (d / "crlf.txt").stat().st_mode & 0o777 == 0o600
    # undo again deletes it again (what the undo made is what is there)
    again = await call(deleter, UNDO, id=back["change_ids"][0])
    assert again["ok"] and not d.exists(), again
