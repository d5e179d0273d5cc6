"""``steadyhand.list`` end to end: what a listing holds (ignore files as git reads them,
deny rules, no link followed, nothing outside the workspace), its orders, forms and
bounds, and the open buffers' line counts."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from steadyhand.protocol.commands import EDIT, LIST
from tests.conftest import call, call_raw, client_with, init_params, server_config
from tests.editor import open_doc, type_text

#: The home folder of the servers started here: git's global excludes are read from it.
HOME = Path(tempfile.mkdtemp(prefix="steadyhand-list-home-"))
ENV = {"HOME": str(HOME), "XDG_CONFIG_HOME": str(HOME / ".config")}
(HOME / ".config" / "git").mkdir(parents=True)
(HOME / ".config" / "git" / "ignore").write_text("*.globalignored\n")


@pytest_lsp.fixture(config=server_config(ENV))
async def lister(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(
        init_params(workspace, {"denyGlobs": ["secrets", "*.pem"], "historyDir": str(HOME / "h")})
    )
    yield
    await lsp_client.shutdown_session()


editor_client = client_with({"denyGlobs": ["secrets"]}, editor=True)


def _paths(result: dict[str, Any]) -> list[str]:
    assert result["ok"], result
    return [e["path"] for e in result["entries"]]


def _tree(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


async def test_lists_in_name_order_leaving_out_ignored_denied_and_git(
    lister: LanguageClient, workspace: Path
) -> None:
    _tree(
        workspace,
        {
            ".gitignore": "build/\n*.log\n",
            "src/app.py": "a\n",
            "src/lib/util.py": "b\n",
            "src/debug.log": "x\n",
            "build/out.js": "x\n",
            "secrets/key.txt": "k\n",
            "cert.pem": "k\n",
            "notes.globalignored": "g\n",
            "README.md": "r\n",
        },
    )
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    result = await call(lister, LIST)
    assert _paths(result) == [
        ".gitignore",
        "README.md",
        "src",
        "src/app.py",
        "src/lib",
        "src/lib/util.py",
    ]
    assert result["roots"] == [str(workspace)]
    assert result["total"] == 6 and "entries_more" not in result and "cut" not in result
    assert [e["type"] for e in result["entries"]][2] == "dir"
    assert result["message"].splitlines()[1:4] == [".gitignore", "README.md", "src/"]
    # Ignored entries come back on request; denied ones and .git never do.
    every = _paths(await call(lister, LIST, include_ignored=True))
    assert {"build", "build/out.js", "src/debug.log", "notes.globalignored"} <= set(every)
    assert not [p for p in every if p.startswith(("secrets", ".git/")) or p.endswith(".pem")]
    assert ".git" not in every


async def test_a_denied_or_outside_path_is_refused_and_a_link_out_is_never_entered(
    lister: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "private.txt").write_text("secret\n")
    _tree(workspace, {"secrets/a.txt": "s\n", "src/a.py": "a\n"})
    (workspace / "src" / "out").symlink_to(outside)
    (workspace / "out_link").symlink_to(outside)
    listed = await call(lister, LIST, include_ignored=True)
    by_path = {e["path"]: e["type"] for e in listed["entries"]}
    assert by_path["src/out"] == "link" and by_path["out_link"] == "link"
    assert not [p for p in by_path if "private" in p]
    denied = await call(lister, LIST, path="secrets")
    assert denied["error"] == "denied"
    for path in (str(outside), "out_link", "src/out", "../outside"):
        refused = await call(lister, LIST, path=path)
        assert refused["error"] == "outside_workspace", (path, refused)
        assert "private" not in refused["message"]
    missing = await call(lister, LIST, path="scr")
    assert missing["error"] == "not_found" and "src" in missing["message"]


async def test_pattern_depth_type_and_a_file(lister: LanguageClient, workspace: Path) -> None:
    _tree(
        workspace,
        {
            "a.py": "1\n",
            "src/b.py": "1\n",
            "src/deep/c.py": "1\n",
            "src/deep/d.txt": "1\n",
            "lib/src/e.py": "1\n",
        },
    )
    assert _paths(await call(lister, LIST, pattern="**/*.py")) == [
        "a.py",
        "lib/src/e.py",
        "src/b.py",
        "src/deep/c.py",
    ]
    assert _paths(await call(lister, LIST, pattern="*.py")) == _paths(
        await call(lister, LIST, pattern="**/*.py")
    )
    # A pattern with a slash is anchored at the folder listed.
    assert _paths(await call(lister, LIST, pattern="src/*.py")) == ["src/b.py"]
    assert _paths(await call(lister, LIST, pattern="src/**")) == [
        "src/b.py",
        "src/deep/c.py",
        "src/deep/d.txt",
    ]
    assert _paths(await call(lister, LIST, pattern="src/**", type="all")) == [
        "src/b.py",
        "src/deep",
        "src/deep/c.py",
        "src/deep/d.txt",
    ]
    assert _paths(await call(lister, LIST, path="src", pattern="*.py")) == [
        "src/b.py",
        "src/deep/c.py",
    ]
    assert _paths(await call(lister, LIST, type="folders")) == ["lib", "lib/src", "src", "src/deep"]
    tree = await call(lister, LIST, path="src", depth=1)
    assert _paths(tree) == ["src/b.py", "src/deep"]
    assert tree["message"].splitlines()[1:] == [f"{workspace}/src/", "  b.py", "  deep/"]
    two = await call(lister, LIST, depth=2)
    assert "src/deep/c.py" not in _paths(two) and "src/deep" in _paths(two)
    assert "    deep/" in two["message"].splitlines()
    one = await call(lister, LIST, path="src/b.py", sizes=True, line_counts=True)
    assert one["entries"] == [
        {
            "path": "src/b.py",
            "type": "file",
            "size": 2,
            "lines": 1,
            "modified": one["entries"][0]["modified"],
        }
    ]
    bad = await call(lister, LIST, pattern="[z-a].py")
    assert bad["error"] == "invalid_pattern" and "glob" in bad["message"]


async def test_newest_first_sizes_and_line_counts(lister: LanguageClient, workspace: Path) -> None:
    _tree(workspace, {"old.txt": "1\n2\n", "mid.txt": "1\r\n2\r\n3", "new.txt": "", "bin": ""})
    (workspace / "bin").write_bytes(b"\x00\x01\x02")
    for i, name in enumerate(["old.txt", "bin", "mid.txt", "new.txt"]):
        os.utime(workspace / name, ns=(10**18 + i * 10**9, 10**18 + i * 10**9))
    result = await call(lister, LIST, sort="modified", sizes=True, line_counts=True)
    assert _paths(result) == ["new.txt", "mid.txt", "bin", "old.txt"]
    by_path = {e["path"]: e for e in result["entries"]}
    assert by_path["mid.txt"]["lines"] == 3 and by_path["old.txt"]["lines"] == 2
    assert by_path["new.txt"]["lines"] == 0 and "lines" not in by_path["bin"]
    assert by_path["bin"]["size"] == 3
    assert by_path["new.txt"]["modified"] == "2001-09-09T01:46:43Z"
    newest = await call(lister, LIST, sort="modified", limit=1)
    assert _paths(newest) == ["new.txt"] and newest["entries_more"] == 3
    assert newest["cut"] == "limit" and newest["total"] == 4


async def test_a_listing_past_its_limit_counts_the_rest(
    lister: LanguageClient, workspace: Path
) -> None:
    _tree(workspace, {f"d{i // 10}/f{i % 10}.txt": "" for i in range(50)})
    result = await call(lister, LIST, limit=10, type="files")
    assert _paths(result) == [f"d0/f{i}.txt" for i in range(10)]
    assert result["entries_more"] == 40 and result["total"] == 50 and result["cut"] == "limit"
    assert "The first 10 of 50 files" in result["message"]
    assert "40 more not shown" in result["message"]
    big = await call(lister, LIST, limit=999_999)
    assert len(big["entries"]) == 55  # held to 5000, which is more than there is


async def test_invalid_arguments_are_refused_by_name(lister: LanguageClient) -> None:
    for args, field in (
        ({"type": "dirs"}, "type"),
        ({"sort": "size"}, "sort"),
        ({"depth": 0}, "depth"),
        ({"limit": 0}, "limit"),
        ({"pattern": ""}, "pattern"),
        ({"recursive": True}, "recursive"),
    ):
        with pytest.raises(Exception) as info:
            await call_raw(lister, LIST, [args])
        assert field in str(info.value), (args, info.value)


async def test_a_large_tree_is_listed_by_name_without_walking_all_of_it(
    lister: LanguageClient, workspace: Path
) -> None:
    for d in range(60):
        folder = workspace / f"pkg{d:02d}"
        folder.mkdir()
        for f in range(100):
            (folder / f"m{f:02d}.py").write_text("")
    first = await call(lister, LIST, limit=5)
    assert _paths(first) == [
        "pkg00",
        "pkg00/m00.py",
        "pkg00/m01.py",
        "pkg00/m02.py",
        "pkg00/m03.py",
    ]
    assert first["entries_more"] >= 1 and first["cut"] == "limit"
    narrowed = await call(lister, LIST, pattern="pkg42/m1*.py")
    assert len(narrowed["entries"]) == 10 and narrowed["total"] == 10


async def test_open_buffers_count_their_lines_as_the_editor_holds_them(
    editor_client: LanguageClient, workspace: Path
) -> None:
    f = workspace / "a.txt"
    f.write_text("one\ntwo\n")
    state = editor_client.editor  # type: ignore[attr-defined]
    uri = open_doc(editor_client, state, f)
    type_text(editor_client, state, uri, "one\ntwo\nthree\nfour\n")
    result = await call(editor_client, LIST, line_counts=True)
    assert result["entries"] == [{"path": "a.txt", "type": "file", "lines": 4}]
    # A listing is no read: an edit still needs one.
    edit = await call(editor_client, EDIT, file_path=str(f), old_string="two", new_string="2")
    assert edit["error"] == "not_read"


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    for p in (a, b):
        p.mkdir()
    (a / "one.txt").write_text("1\n")
    (b / "two.txt").write_text("2\n")
    return a, b


@pytest_lsp.fixture(config=server_config(ENV))
async def two_roots(lsp_client: LanguageClient, roots: tuple[Path, Path]):  # type: ignore[no-untyped-def]
    a, b = roots
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=a.as_uri(),
            workspace_folders=[
                types.WorkspaceFolder(uri=a.as_uri(), name="alpha"),
                types.WorkspaceFolder(uri=b.as_uri(), name="beta"),
            ],
            initialization_options={"historyDir": str(a.parent / "state")},
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_without_a_path_every_root_is_listed(
    two_roots: LanguageClient, roots: tuple[Path, Path]
) -> None:
    a, b = roots
    result = await call(two_roots, LIST)
    assert result["roots"] == [str(a), str(b)]
    assert _paths(result) == ["one.txt", str(b / "two.txt")]
    tree = await call(two_roots, LIST, depth=1)
    assert tree["message"].splitlines()[1:] == [f"{a}/", "  one.txt", f"{b}/", "  two.txt"]


# -- the ignore rules against git's own answer ----------------------------------------

NAMES = ["a.txt", "b.py", "keep.log", "x.log", "top.txt", "n.md", "c.tmp", "d"]
FOLDERS = ["", "sub", "sub/gen", "build", "src", "src/sub"]
RULES = ["*.log", "!keep.log", "build/", "/top.txt", "sub/*.md", "**/gen/", "*.tmp", "a*", "d/"]


@pytest.mark.parametrize("seed", range(12))
async def test_the_listing_leaves_out_what_git_check_ignore_does(
    lister: LanguageClient, workspace: Path, seed: int
) -> None:
    rnd = random.Random(seed)
    files = {(rnd.choice(FOLDERS), rnd.choice(NAMES)) for _ in range(rnd.randint(4, 14))}
    ignores = {
        (rnd.choice(FOLDERS), rnd.choice([".gitignore", ".git/info/exclude"])): rnd.sample(
            RULES, rnd.randint(1, 3)
        )
        for _ in range(rnd.randint(1, 3))
    }
    repo = workspace / "repo"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    for folder, name in files:
        (repo / folder).mkdir(parents=True, exist_ok=True)
        (repo / folder / name).write_text("x\n")
    (repo / "g.globalignored").write_text("x\n")
    for (folder, name), rules in ignores.items():
        target = (
            repo / ".git" / "info" / "exclude" if name.startswith(".git") else repo / folder / name
        )
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a") as fh:
            fh.write("\n".join(rules) + "\n")
    every = _paths(await call(lister, LIST, path="repo", include_ignored=True))
    listed = set(_paths(await call(lister, LIST, path="repo")))
    rels = [p.removeprefix("repo/") for p in every]
    out = subprocess.run(
        ["git", "-C", str(repo), "check-ignore", "--no-index", "--stdin"],
        input="\n".join(rels),
        capture_output=True,
        text=True,
        env={**os.environ, **ENV, "GIT_CONFIG_NOSYSTEM": "1"},
    )
    ignored = set(out.stdout.splitlines())
    for rel in rels:
        hidden = any(rel == p or rel.startswith(p + "/") for p in ignored)
        assert (f"repo/{rel}" in listed) == (not hidden), (rel, sorted(ignored))


async def test_a_pattern_through_a_link_out_finds_nothing(
    lister: LanguageClient, workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "private.txt").write_text("secret\n")
    (workspace / "out").symlink_to(outside)
    for pattern in ("out/sub/*.txt", "out/**", "**/private.txt", str(workspace / "out/sub/*")):
        found = await call(lister, LIST, pattern=pattern, include_ignored=True)
        assert found["entries"] == [], (pattern, found)
