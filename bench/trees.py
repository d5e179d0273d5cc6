"""Generated workspaces for the ``tree`` section: a project as a repository holds it.

A tree is a git repository (``git init``, nothing committed) of nested folders — packages,
their sources, tests and docs, down to six levels — with source files of several
languages, a few binary files, and a ``.gitignore`` that leaves out build output, a
``node_modules`` folder, ``__pycache__`` folders and logs, together about a third as many
files again as the tree lists. File sizes follow a spread like a real project's: most
under 4 KB, a quarter up to 16 KB, a few up to 64 KB and one in two hundred up to 512 KB
(with ``small``, as for the tree of 500,000 files, all under 2 KB). Modification times are
spread over a year. A rare literal (:data:`NEEDLE`) is written into one file in 500 (and
into some ignored files, which a search must not find).

Everything is deterministic (a seeded generator): the same ``files`` gives the same tree.
Each tree is generated once into the benchmark's cache folder and reused.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from dataclasses import dataclass

#: The literal the searches look for: in one listed file in 500, and in ignored files.
NEEDLE = "needle_7f3a91"
#: Modification times are spread over this many seconds before :data:`EPOCH`.
SPAN = 365 * 24 * 3600
EPOCH = 1_760_000_000

WORDS = (
    "api core util models views handlers services client server config auth cache db "
    "events jobs queue storage render parser lexer schema types errors logging metrics "
    "http grpc cli plugins adapters tools common internal shared session user account "
    "billing search index report export import sync worker scheduler layout theme forms"
).split()

#: (extension, share) of the source files.
KINDS = (
    (".py", 30),
    (".ts", 20),
    (".tsx", 6),
    (".js", 8),
    (".go", 8),
    (".rs", 6),
    (".md", 8),
    (".json", 6),
    (".yaml", 4),
    (".css", 3),
    (".png", 1),
)

GITIGNORE = """\
# build output
build/
dist/
node_modules/
__pycache__/
*.pyc
*.log
.cache/
coverage/
"""


@dataclass(frozen=True)
class Tree:
    root: str
    files: int  # files a listing shows (ignored ones not counted)
    folders: int  # folders a listing shows
    ignored: int  # files the .gitignore leaves out
    size: int  # bytes of the files a listing shows
    one_folder: str  # a folder of the tree, relative to the root, with ~20 entries
    needles: int  # listed files holding NEEDLE


def _corpus(rng: random.Random, n_bytes: int) -> str:
    """Source-like text to cut files from."""
    lines: list[str] = []
    total = 0
    while total < n_bytes:
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        k = rng.randrange(1000)
        line = rng.choice(
            (
                f"def {a}_{b}(value, {c}=None):\n",
                f"    result = {a}.{b}({c}, limit={k})\n",
                f"    if {c} is not None and {a}_{b} > {k}:\n",
                f"        return {b}_{c}[{k}]\n",
                f"// {a} {b} {c}: keep in sync with {b}/{c}.ts\n",
                f"export function {a}{b.title()}({c}: number): string {{ return `{k}`; }}\n",
                f"    {a}_{b} = {c}.get('{a}', {k})  # {b}\n",
                "\n",
            )
        )
        lines.append(line)
        total += len(line)
    return "".join(lines)


def _size(rng: random.Random, small: bool) -> int:
    if small:
        return rng.randrange(0, 2048)
    r = rng.random()
    if r < 0.70:
        return rng.randrange(300, 4096)
    if r < 0.95:
        return rng.randrange(4096, 16384)
    if r < 0.995:
        return rng.randrange(16384, 65536)
    return rng.randrange(65536, 524288)


def _kind(rng: random.Random) -> str:
    return rng.choices([k for k, _ in KINDS], weights=[w for _, w in KINDS])[0]


def _folders(rng: random.Random, count: int) -> list[str]:
    """``count`` nested folders (relative paths), up to six levels, grown at random."""
    tops = ["src", "tests", "docs", "packages", "tools", "examples"]
    folders = list(tops)
    depth = {f: 1 for f in folders}
    used: set[str] = set(folders)
    while len(folders) < count:
        # favour the folders made recently a little, so some branches run deep
        parent = folders[min(len(folders) - 1, int(len(folders) * (1 - rng.random() ** 1.5)))]
        if depth[parent] >= 6:
            parent = rng.choice(tops)
        name = rng.choice(WORDS)
        child = f"{parent}/{name}"
        n = 2
        while child in used:
            child = f"{parent}/{name}{n}"
            n += 1
        used.add(child)
        folders.append(child)
        depth[child] = depth[parent] + 1
    return folders


def _write(path: str, data: bytes, mtime: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        if data:
            os.write(fd, data)
    finally:
        os.close(fd)
    os.utime(path, ns=(mtime, mtime))


def ensure(cache: str, files: int, *, small: bool = False) -> Tree:
    """The tree of ``files`` listed files (generated once under ``cache``)."""
    name = f"tree-{files}" + ("-small" if small else "")
    root = os.path.join(cache, "trees", name)
    done = os.path.join(cache, "trees", name + ".done")
    if os.path.exists(done):
        with open(done) as f:
            vals = f.read().split()
        return Tree(
            root, int(vals[0]), int(vals[1]), int(vals[2]), int(vals[3]), vals[4], int(vals[5])
        )
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    rng = random.Random(f"steadyhand-tree-{files}-{small}")
    corpus = _corpus(rng, 1 << 20).encode()
    folders = _folders(rng, max(6, files // 12))
    for folder in folders:
        os.makedirs(os.path.join(root, folder), exist_ok=True)
    # each folder a weight; files dealt out by weight, so folders hold from 1 to ~40
    weights = [rng.random() ** 2 + 0.05 for _ in folders]
    homes = rng.choices(folders, weights=weights, k=files)
    counts: dict[str, int] = {}
    size_total = needles = 0
    for i, folder in enumerate(homes):
        kind = _kind(rng)
        counts[folder] = counts.get(folder, 0) + 1
        base = os.path.basename(folder)
        fname = f"{rng.choice(WORDS)}_{base}_{counts[folder]}{kind}"
        size = _size(rng, small)
        if kind == ".png":
            data = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(rng.randrange(256) for _ in range(64))
            data = (data * (size // len(data) + 1))[:size] if size > len(data) else data
        else:
            start = rng.randrange(0, len(corpus) - size - 1)
            start = corpus.find(b"\n", start) + 1
            data = corpus[start : start + size]
            if i % 500 == 7:
                data = data + f"NEEDLE = '{NEEDLE}'\n".encode()
                needles += 1
        size_total += len(data)
        _write(os.path.join(root, folder, fname), data, (EPOCH - rng.randrange(SPAN)) * 10**9)
    # the ignored output: a build folder, node_modules, __pycache__ folders, logs
    ignored = 0
    extra = files // 3
    outputs = [
        "build/lib",
        "build/bundle",
        "dist",
        "node_modules/leftpad/lib",
        "node_modules/@scope/widgets/dist",
        "coverage/html",
    ]
    for k in range(extra):
        if k % 4 == 0:
            folder = os.path.join(rng.choice(folders), "__pycache__")
            fname = f"mod{k}.cpython-311.pyc"
        elif k % 4 == 1:
            folder, fname = rng.choice(folders), f"run{k}.log"
        else:
            folder = os.path.join(rng.choice(outputs), rng.choice(WORDS))
            fname = f"chunk{k}.js"
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        size = _size(rng, small)
        start = rng.randrange(0, len(corpus) - size - 1)
        data = corpus[start : start + size]
        if k % 50 == 3:
            data += f"NEEDLE = '{NEEDLE}'  # ignored copy\n".encode()
        _write(os.path.join(root, folder, fname), data, (EPOCH - rng.randrange(SPAN)) * 10**9)
        ignored += 1
    with open(os.path.join(root, ".gitignore"), "w") as f:
        f.write(GITIGNORE)
    for top in ("README.md", "pyproject.toml", "package.json"):
        with open(os.path.join(root, top), "w") as f:
            f.write(f"{top}\n" * 20)
    subprocess.run(["git", "init", "-q", root], check=True)
    # a folder of about 20 entries, a few levels down, for the one-folder listing
    entries = {f: counts.get(f, 0) for f in folders}
    for f in folders:
        parent = os.path.dirname(f)
        if parent in entries:
            entries[parent] += 1
    one = min(
        (f for f in folders if f.count("/") >= 2),
        key=lambda f: (abs(entries[f] - 20), f),
        default=folders[0],
    )
    listed_files = files + 4  # the three top files and .gitignore
    tree = Tree(root, listed_files, len(folders), ignored, size_total, one, needles)
    with open(done, "w") as f:
        f.write(f"{tree.files} {tree.folders} {tree.ignored} {tree.size} {one} {needles}\n")
    return tree
