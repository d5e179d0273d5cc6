"""Generated inputs for the benchmark: source-like files, a large log, a tree of small files.

Everything is deterministic. Large inputs (the log, the tree of small files) are generated
once into the cache folder and reused; per-run files live in a fresh run folder.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass


def source_line(i: int) -> str:
    """Line ``i`` (1-based) of a generated source file (about 60 characters)."""
    return f"    value_{i:06d} = compute({i}, 'item {i}', scale=0.5)  # step {i % 97}\n"


def source_text(n_lines: int, *, variant: int = 0) -> str:
    """A generated file of ``n_lines`` lines; ``variant`` 1 changes every tenth line."""
    lines = [source_line(i) for i in range(1, n_lines + 1)]
    if variant:
        for i in range(0, n_lines, 10):
            lines[i] = lines[i].replace("scale=0.5", f"scale={variant}.25")
    return "".join(lines)


@dataclass(frozen=True)
class EditPair:
    """A one-line edit that can be applied back and forth (A -> B, then B -> A)."""

    a: str
    b: str


def edit_pair(n_lines: int) -> tuple[int, EditPair]:
    """The line edited in an ``n_lines`` file, and the two versions of its changed text."""
    k = n_lines // 2
    a = f"value_{k:06d} = compute({k}, 'item {k}', scale=0.5)"
    b = f"value_{k:06d} = compute({k}, 'item {k}', scale=0.75)"
    return k, EditPair(a, b)


def multi_edit_pairs(n_lines: int, count: int = 3) -> list[tuple[int, EditPair]]:
    out = []
    for j in range(count):
        k = (j + 1) * n_lines // (count + 1)
        a = f"value_{k:06d} = compute({k}, 'item {k}', scale=0.5)"
        b = f"value_{k:06d} = compute({k}, 'item {k}', scale=0.75)"
        out.append((k, EditPair(a, b)))
    return out


def python_unit(i: int) -> str:
    """Ten lines of valid Python: one function."""
    return (
        f"def handler_{i:06d}(request, limit={i % 50}):\n"
        f'    """Serve request {i}."""\n'
        f"    items = [request.get('k{i}'), {{'id': {i}, 'ok': True}}]\n"
        f"    if len(items) > limit:\n"
        f"        return items[:limit]\n"
        f"    for item in items:\n"
        f"        log(item, level={i % 5})\n"
        f"    return None\n"
        "\n"
        "\n"
    )


def python_module(n_lines: int) -> str:
    """A valid Python module of ``n_lines`` lines (functions of ten lines each)."""
    return "".join(python_unit(i) for i in range(n_lines // 10))


def syntax_pair(n_lines: int) -> tuple[str, str, str]:
    """A one-line edit in the middle of :func:`python_module` that keeps it valid (A, B)
    and one that breaks it (A, C)."""
    i = n_lines // 20
    a = f"        log(item, level={i % 5})\n    return None\n\n\ndef handler_{i + 1:06d}"
    return a, a.replace("log(item,", "log(item, extra=1,"), a.replace("log(item,", "log((item,")


# -- the large log ---------------------------------------------------------------------

LOG_LINE = "2025-01-01T00:00:{s:02d}.{us:06d}Z INFO worker-{w} request {r:08d} served in {ms} ms\n"


@dataclass(frozen=True)
class LogFile:
    path: str
    size: int
    lines: int


def ensure_log(cache: str, size_mib: int) -> LogFile | None:
    """A generated log of about ``size_mib`` MiB (generated once); None if disk is short."""
    path = os.path.join(cache, f"log-{size_mib}m.log")
    meta = path + ".lines"
    if os.path.exists(path) and os.path.exists(meta):
        with open(meta) as f:
            return LogFile(path, os.path.getsize(path), int(f.read()))
    os.makedirs(cache, exist_ok=True)
    free = shutil.disk_usage(cache).free
    if free < size_mib * (1 << 20) + (2 << 30):  # keep 2 GiB spare
        return None
    block_lines = [
        LOG_LINE.format(s=i % 60, us=(i * 7919) % 1_000_000, w=i % 8, r=i, ms=i % 250)
        for i in range(10_000)
    ]
    block = "".join(block_lines).encode()
    blocks = max(1, (size_mib << 20) // len(block))
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        for _ in range(blocks):
            f.write(block)
    os.replace(tmp, path)
    lines = blocks * len(block_lines)
    with open(meta, "w") as f:
        f.write(str(lines))
    return LogFile(path, os.path.getsize(path), lines)


# -- a tree of small files -------------------------------------------------------------


def ensure_tree(cache: str, n_files: int, per_dir: int = 1000) -> tuple[str, list[str]]:
    """A folder of ``n_files`` small (~75 byte) files, generated once; returns paths."""
    root = os.path.join(cache, f"tree-{n_files}")
    done = os.path.join(root, ".complete")
    paths = [os.path.join(root, f"d{i // per_dir:04d}", f"f{i:07d}.py") for i in range(n_files)]
    if os.path.exists(done):
        return root, paths
    for i, p in enumerate(paths):
        if i % per_dir == 0:
            os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(f'"""Module {i}."""\n\nVALUE = {i}\n\n\ndef get() -> int:\n    return VALUE\n')
    with open(done, "w") as f:
        f.write("ok")
    return root, paths


def ensure_empty_tree(cache: str, n_files: int, per_dir: int = 50) -> tuple[str, str]:
    """A workspace of ``n_files`` empty files, ``per_dir`` to a folder, in two levels
    (generated once). Returns the root and one small text file inside it."""
    root = os.path.join(cache, f"watch-{n_files}")
    done = os.path.join(root, ".complete")
    probe = os.path.join(root, "probe.txt")
    if not os.path.exists(done):
        n_dirs = (n_files + per_dir - 1) // per_dir
        for d in range(n_dirs):
            folder = os.path.join(root, f"p{d // 100:03d}", f"d{d % 100:02d}")
            os.makedirs(folder, exist_ok=True)
            for i in range(min(per_dir, n_files - d * per_dir)):
                open(os.path.join(folder, f"f{i:03d}.txt"), "wb").close()
        with open(probe, "w") as f:
            f.write("probe 0\n")
        with open(done, "w") as f:
            f.write("ok")
    return root, probe
