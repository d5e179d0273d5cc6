"""Searching the files under a folder: by ripgrep where it is installed and can read the
pattern, by Python otherwise, with the same answers either way.

Both engines see the same files: those a walk of the folder gives (ignore files, deny
rules, ``.git`` left out, no link followed), regular files up to :data:`MAX_FILE_BYTES`
and without a NUL byte (binary). Both read lines the same way (:mod:`steadyhand.tree.grep`)
and the answer is sorted by path, so which engine ran never shows.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from steadyhand.paths.globs import compile_glob
from steadyhand.text.encoding import sniff_encoding
from steadyhand.tree.grep import Line, Query, compile_query, matching_lines, portable, with_context
from steadyhand.tree.ignore import IgnoreStack
from steadyhand.tree.walk import walk

#: Files larger than this are not searched (both engines).
MAX_FILE_BYTES = 64 << 20

#: Lines of answer collected at most before a search is cut.
MAX_COLLECTED_LINES = 20_000


@dataclass(slots=True)
class FileHits:
    """What one file holds: its path relative to the folder searched, the lines of the
    answer (matches and context), and how many lines match."""

    rel: str
    path: str
    lines: list[Line] = field(default_factory=list)
    count: int = 0


@dataclass(slots=True)
class Found:
    files: list[FileHits]
    engine: str  # "ripgrep" or "python"
    cut: str | None = None  # "time", "entries" or "results"
    searched: int = 0


@dataclass(frozen=True, slots=True)
class Scope:
    """What is searched: the folder, its path below the ignore rules' top, the rules
    (None to include ignored files), a deny predicate and glob filters on the path."""

    folder: str
    rules: IgnoreStack | None
    prefix: str = ""
    skip: Callable[[str, bool], bool] | None = None
    globs: tuple[str, ...] = ()
    max_depth: int | None = None
    #: Whether the folder lies in a git repository (ripgrep then reads the ignore files
    #: as git does); outside one, whether ignore files above the folder took part.
    in_repository: bool = False
    from_parents: bool = False

    def ripgrep_reads_alike(self) -> bool:
        """Whether ripgrep leaves out the same files as the walk: always in a repository;
        outside one, unless ignore files above the folder hold (ripgrep would not read
        them there)."""
        return self.rules is None or self.in_repository or not self.from_parents


def _glob_filter(globs: Iterable[str]) -> Callable[[str], bool] | None:
    """``rel`` → kept, from globs where ``!glob`` leaves out (ripgrep's ``--glob``)."""
    inc = [compile_glob(g) for g in globs if not g.startswith("!")]
    exc = [compile_glob(g[1:]) for g in globs if g.startswith("!")]
    if not inc and not exc:
        return None

    def keep(rel: str) -> bool:
        if any(p.search(rel) for p in exc):
            return False
        return not inc or any(p.search(rel) for p in inc)

    return keep


def decode_for_search(data: bytes) -> str | None:
    """The text ripgrep would search in ``data``, or None for a binary file."""
    enc = None
    with contextlib.suppress(ValueError):
        enc = sniff_encoding(data[:4])
    if enc is not None and enc.codec.startswith("utf-16"):
        return data[len(enc.bom_bytes()) :].decode(enc.codec, errors="replace")
    if b"\0" in data:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data.decode("utf-8", errors="replace")


def search_text(text: str, query: Query) -> tuple[list[Line], int]:
    """The answer lines of one text and how many lines match."""
    pattern = compile_query(query)
    hits = matching_lines(pattern, text, query)
    return with_context(text, hits, query), len(hits)


def python_search(scope: Scope, query: Query, *, deadline: float | None) -> Found:
    pattern = compile_query(query)
    keep = _glob_filter(scope.globs)
    w = walk(
        scope.folder,
        rules=scope.rules,
        prefix=scope.prefix,
        skip=scope.skip,
        max_depth=scope.max_depth,
        deadline=deadline,
    )
    files: list[FileHits] = []
    searched = 0
    collected = 0
    cut: str | None = None
    for entry in w:
        if entry.kind != "file" or entry.size > MAX_FILE_BYTES:
            continue
        if keep is not None and not keep(entry.rel):
            continue
        if deadline is not None and time.monotonic() > deadline:
            cut = "time"
            break
        try:
            with open(entry.path, "rb") as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
        except OSError:
            continue
        searched += 1
        text = decode_for_search(data)
        if text is None:
            continue
        hits = matching_lines(pattern, text, query)
        if hits:
            lines = with_context(text, hits, query)
            files.append(FileHits(entry.rel, entry.path, lines, len(hits)))
            collected += len(lines)
            if collected > MAX_COLLECTED_LINES:
                cut = "results"
                break
    files.sort(key=lambda f: f.rel)
    return Found(files, "python", cut or w.cut, searched)


def ripgrep_path(configured: str | None = None) -> str | None:
    """The ``rg`` to run: the configured one, the one the ``ripgrep`` package put beside
    this interpreter, or one on ``PATH``."""
    if configured:
        return configured if os.path.isfile(configured) else None
    exe = "rg.exe" if sys.platform == "win32" else "rg"
    beside = os.path.join(sysconfig.get_path("scripts"), exe)
    if os.path.isfile(beside):
        return beside
    return shutil.which("rg")


def _text(obj: dict[str, str]) -> str:
    if "text" in obj:
        return obj["text"]
    return base64.b64decode(obj.get("bytes", "")).decode("utf-8", errors="replace")


def _rg_args(rg: str, scope: Scope, query: Query) -> list[str]:
    args = [rg, "--json", "--no-config", "--hidden", "--no-require-git", "--no-messages"]
    args += ["--glob", "!.git", "--max-filesize", str(MAX_FILE_BYTES)]
    if scope.rules is None:
        args.append("--no-ignore")
    elif not scope.in_repository:
        # Outside a repository: the folder's own ignore files, none above it, no global.
        args += ["--no-require-git", "--no-ignore-parent", "--no-ignore-global"]
    args.append("--ignore-case" if query.case_insensitive else "--case-sensitive")
    if query.literal:
        args.append("--fixed-strings")
    if query.multiline:
        args.append("--multiline")
    if query.before:
        args += ["--before-context", str(query.before)]
    if query.after:
        args += ["--after-context", str(query.after)]
    if scope.max_depth is not None:
        args += ["--max-depth", str(scope.max_depth)]
    args += ["--regexp", query.pattern, "--", "."]
    return args


def rg_search(rg: str, scope: Scope, query: Query, *, deadline: float | None) -> Found:
    compile_query(query)  # the same refusal of a bad pattern as the Python engine
    keep = _glob_filter(scope.globs)
    proc = subprocess.Popen(
        _rg_args(rg, scope, query),
        cwd=scope.folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    files: dict[str, FileHits] = {}
    dropped: set[str] = set()
    collected = 0
    cut: str | None = None
    searched = 0
    try:
        for raw in proc.stdout:
            if deadline is not None and time.monotonic() > deadline:
                cut = "time"
                break
            event = json.loads(raw)
            kind = event.get("type")
            data = event.get("data", {})
            if kind == "summary":
                searched = int(data.get("stats", {}).get("searches", 0))
                continue
            if kind not in ("begin", "match", "context", "end"):
                continue
            rel = _text(data["path"]).removeprefix("./").replace(os.sep, "/")
            if kind == "begin":
                path = os.path.join(scope.folder, rel)
                if (keep is not None and not keep(rel)) or (
                    scope.skip is not None and scope.skip(path, False)
                ):
                    dropped.add(rel)
                else:
                    files[rel] = FileHits(rel, path)
                continue
            if rel in dropped:
                continue
            hits = files[rel]
            if kind == "end":
                if data.get("binary_offset") is not None:
                    del files[rel]
                continue
            rows = _text(data["lines"]).split("\n")
            if rows and rows[-1] == "":
                rows.pop()
            first = int(data["line_number"])
            for i, row in enumerate(rows):
                hits.lines.append(Line(first + i, row, kind == "match"))
            if kind == "match":
                hits.count += len(rows)
            collected += len(rows)
            if collected > MAX_COLLECTED_LINES:
                cut = "results"
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    out = sorted((f for f in files.values() if f.count), key=lambda f: f.rel)
    for f in out:
        f.lines = _merged(f.lines)
    return Found(out, "ripgrep", cut, searched)


def _merged(lines: list[Line]) -> list[Line]:
    """Each line once, in order; a line that is a match and also context is a match."""
    by_number: dict[int, Line] = {}
    for line in lines:
        had = by_number.get(line.number)
        if had is None or (line.match and not had.match):
            by_number[line.number] = line
    return [by_number[n] for n in sorted(by_number)]


def search(
    scope: Scope,
    query: Query,
    *,
    deadline: float | None,
    engine: str = "auto",
    ripgrep: str | None = None,
) -> Found:
    """Search ``scope`` for ``query``: ``engine`` is ``auto`` (ripgrep when it is there and
    reads the pattern as Python does), ``ripgrep`` or ``python``."""
    rg = ripgrep_path(ripgrep) if engine != "python" else None
    if rg is not None and (
        engine == "ripgrep" or (portable(query) and scope.ripgrep_reads_alike())
    ):
        try:
            return rg_search(rg, scope, query, deadline=deadline)
        except OSError:
            if engine == "ripgrep":
                raise
    return python_search(scope, query, deadline=deadline)
