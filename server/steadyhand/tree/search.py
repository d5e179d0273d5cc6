"""Searching the files under a folder: by ripgrep where it is installed and can read the
pattern, by Python otherwise, with the same answers either way.

Both engines see the same files: those a walk of the folder gives (ignore files, deny
rules, ``.git`` left out, no link followed), regular files up to :data:`MAX_FILE_BYTES`
and without a NUL byte (binary), with one link unless the scope allows hard links.
Both read lines the same way (:mod:`steadyhand.tree.grep`) and the answer is sorted by
path, so which engine ran never shows.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from steadyhand.fs.checked_open import open_checked, open_checked_at, open_folder
from steadyhand.paths.globs import compile_glob
from steadyhand.protocol.errors import ToolError
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
    #: Globs of which a file must match one, besides ``globs`` (a language's names).
    type_globs: tuple[str, ...] = ()
    max_depth: int | None = None
    #: Whether the folder lies in a git repository (ripgrep then reads the ignore files
    #: as git does); outside one, whether ignore files above the folder took part.
    in_repository: bool = False
    from_parents: bool = False
    #: Whether files with several hard links are searched (another name of such a file
    #: may lie outside the workspace).
    hard_links: bool = True

    def ripgrep_reads_alike(self) -> bool:
        """Whether ripgrep leaves out the same files as the walk: always in a repository;
        outside one, unless ignore files above the folder hold (ripgrep would not read
        them there)."""
        return self.rules is None or self.in_repository or not self.from_parents


def _glob_filter(
    globs: Iterable[str], type_globs: Iterable[str] = ()
) -> Callable[[str], bool] | None:
    """``rel`` → kept, from globs where ``!glob`` leaves out (ripgrep's ``--glob``, read
    as path filters: :func:`compile_glob` with ``exact``), and type globs of which one
    must match as well."""
    inc = [compile_glob(g, exact=True) for g in globs if not g.startswith("!")]
    exc = [compile_glob(g[1:], exact=True) for g in globs if g.startswith("!")]
    kinds = [compile_glob(g, exact=True) for g in type_globs]
    if not inc and not exc and not kinds:
        return None

    def keep(rel: str) -> bool:
        if any(p.fullmatch(rel) for p in exc):
            return False
        if kinds and not any(p.fullmatch(rel) for p in kinds):
            return False
        return not inc or any(p.fullmatch(rel) for p in inc)

    return keep


def scope_filter(scope: Scope) -> Callable[[str], bool] | None:
    """Whether a path (relative to the scope's folder) passes its globs (None: all do)."""
    return _glob_filter(scope.globs, scope.type_globs)


class Folders:
    """Descriptors of the folders a search reads files in, each opened once through no
    symbolic link (a few kept at a time), so that each file is opened in its folder."""

    MOST = 32

    def __init__(self) -> None:
        self._fds: dict[str, int] = {}

    def fd(self, folder: str) -> int | None:
        fd = self._fds.pop(folder, None)
        if fd is None:
            try:
                fd = open_folder(folder, folder)
            except (OSError, ToolError):
                return None
            if len(self._fds) >= self.MOST:
                oldest = next(iter(self._fds))
                os.close(self._fds.pop(oldest))
        self._fds[folder] = fd  # the most recently used last
        return fd

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()


def read_file(path: str, *, hard_links: bool, folders: Folders | None = None) -> bytes | None:
    """The bytes of the regular file at the real path ``path``, opened through no
    symbolic link and checked once open (:func:`open_checked`, or in its folder opened
    already: :func:`open_checked_at`), or None when it may not be read (a link, a FIFO
    put in its place, several hard links unless allowed, over :data:`MAX_FILE_BYTES`)."""
    try:
        if folders is None:
            fd, st = open_checked(path, links_ok=hard_links)
        else:
            folder, name = os.path.split(path)
            dfd = folders.fd(folder)
            opened = None if dfd is None else open_checked_at(dfd, name, links_ok=hard_links)
            if opened is None:
                return None
            fd, st = opened, os.fstat(opened)
    except (OSError, ToolError):
        return None
    try:
        if st.st_size > MAX_FILE_BYTES:
            return None
        # Read what the size says (and what grew since, up to the bound), never asking
        # for the bound at once: a buffer that large would be made for every file.
        chunks: list[bytes] = []
        total = 0
        want = st.st_size + 1
        while total <= MAX_FILE_BYTES:
            chunk = os.read(fd, max(want - total, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks) if total <= MAX_FILE_BYTES else None


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
    keep = scope_filter(scope)
    w = walk(
        scope.folder,
        rules=scope.rules,
        prefix=scope.prefix,
        skip=scope.skip,
        max_depth=scope.max_depth,
        deadline=deadline,
        stats=False,  # the size is told by the file opened
    )
    files: list[FileHits] = []
    searched = 0
    collected = 0
    cut: str | None = None
    folders = Folders()
    try:
        for entry in w:
            if entry.kind != "file":
                continue
            if keep is not None and not keep(entry.rel):
                continue
            if deadline is not None and time.monotonic() > deadline:
                cut = "time"
                break
            data = read_file(entry.path, hard_links=scope.hard_links, folders=folders)
            if data is None:
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
    finally:
        folders.close()
    files.sort(key=lambda f: f.rel)
    return Found(files, "python", cut or w.cut, searched)


def ripgrep_path(configured: str | None = None) -> str | None:
    """The ``rg`` to run: the configured one, the one the ``ripgrep`` package put beside
    this interpreter, or one on ``PATH``."""
    if configured:
        return configured if os.path.isfile(configured) else None
    exe = "rg.exe" if sys.platform == "win32" else "rg"
    for folder in _script_folders():
        beside = os.path.join(folder, exe)
        if os.path.isfile(beside):
            return beside
    return shutil.which("rg")


def _script_folders() -> list[str]:
    """Where an installed package's programs land: beside the interpreter (a virtual
    environment's ``bin`` or ``Scripts``), then the install scheme's scripts folder. An
    interpreter whose build data cannot be read still finds the first."""
    folders = [os.path.dirname(sys.executable)]
    with contextlib.suppress(ImportError, KeyError, OSError):
        folders.append(sysconfig.get_path("scripts"))
    return folders


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
        args += ["--no-ignore-parent", "--no-ignore-global", "--no-ignore-exclude"]
    args.append("--ignore-case" if query.case_insensitive else "--case-sensitive")
    if query.literal:
        args.append("--fixed-strings")
    if query.multiline:
        args.append("--multiline")
    if query.before:
        args += ["--before-context", str(query.before)]
    if query.after:
        args += ["--after-context", str(query.after)]
    if query.max_count is not None:
        args += ["--max-count", str(query.max_count)]
    if scope.max_depth is not None:
        args += ["--max-depth", str(scope.max_depth)]
    args += ["--regexp", query.pattern, "--", "."]
    return args


class RipgrepFailed(OSError):
    """ripgrep ended without searching (a pattern its engine does not take, say)."""


def _multiply_linked(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return True
    return not stat.S_ISREG(st.st_mode) or st.st_nlink > 1


def rg_search(rg: str, scope: Scope, query: Query, *, deadline: float | None) -> Found:
    compile_query(query)  # the same refusal of a bad pattern as the Python engine
    keep = scope_filter(scope)
    proc = subprocess.Popen(
        _rg_args(rg, scope, query),
        cwd=scope.folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    # ripgrep may run long without a line of output (no match in a large tree): it is
    # stopped at the deadline, whatever it is doing.
    timer: threading.Timer | None = None
    timed_out = threading.Event()
    if deadline is not None:

        def stop() -> None:
            timed_out.set()
            with contextlib.suppress(OSError):
                proc.kill()

        timer = threading.Timer(max(0.0, deadline - time.monotonic()), stop)
        timer.daemon = True
        timer.start()
    files: dict[str, FileHits] = {}
    dropped: set[str] = set()
    collected = 0
    cut: str | None = None
    searched = 0
    summary = False
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
                summary = True
                continue
            if kind not in ("begin", "match", "context", "end"):
                continue
            rel = _text(data["path"]).removeprefix("./").replace(os.sep, "/")
            if kind == "begin":
                path = os.path.join(scope.folder, rel)
                if (
                    (keep is not None and not keep(rel))
                    or (scope.skip is not None and scope.skip(path, False))
                    or (not scope.hard_links and _multiply_linked(path))
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
        if timer is not None:
            timer.cancel()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
    if timed_out.is_set():
        cut = cut or "time"
    elif cut is None and not summary and proc.returncode not in (0, 1):
        raise RipgrepFailed(f"ripgrep ended with status {proc.returncode} without searching")
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
            # Not started, or it ended without searching: the Python engine answers.
            pass
    return python_search(scope, query, deadline=deadline)
