"""The ignore rules that hold above a folder: git's global excludes, the repository's
``info/exclude`` and the ignore files of the folders between the repository's top and
the folder, as git applies them to the paths below it.

These are the only files Steadyhand reads outside the workspace, and only to decide what
a listing or a search leaves out; their text is never shown.

Every listing and search asks for them, so what :func:`rules_for` finds is kept, with
what each file it read or looked for was then (:data:`steadyhand.tree.walk.Marks`): it
is given again while one ``lstat`` of each says nothing changed. An answer that rests on
a file changed in the last :data:`SETTLE_NS` is not kept (a change within the same tick
of the file system's clock would leave its times as they were).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from steadyhand.tree.ignore import IgnoreStack, parse
from steadyhand.tree.walk import Marks, folder_rules, mark, read_ignore_file

#: Folders looked at, at most, on the way up to a repository's top.
MAX_UP = 64
#: A file changed more recently than this (ns) is not trusted to show a later change
#: by its times alone.
SETTLE_NS = 2_000_000_000
#: Answers of :func:`rules_for` kept.
KEPT = 256


def _looked(path: str, marks: Marks | None) -> bool:
    """Whether something is at ``path`` (a link is not followed), noted in ``marks``."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        if marks is not None:
            marks.append((path, None))
        return False
    if marks is not None:
        marks.append((path, mark(st)))
    return True


def repository_top(folder: str, marks: Marks | None = None) -> str | None:
    """The top of the git repository ``folder`` lies in (where ``.git`` is), or None."""
    here = os.path.abspath(folder)
    for _ in range(MAX_UP):
        if _looked(os.path.join(here, ".git"), marks):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
    return None


def _git_dir(top: str, marks: Marks | None = None) -> str | None:
    """The repository's own folder: ``.git``, or where a ``.git`` file points (a worktree
    or a submodule)."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot) and not os.path.islink(dot):
        return dot
    text = read_ignore_file(dot, marks)
    if text is None:
        return None
    m = re.match(r"gitdir:\s*(.+)", text.strip())
    if not m:
        return None
    target = m.group(1).strip()
    return target if os.path.isabs(target) else os.path.normpath(os.path.join(top, target))


_EXCLUDES = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[\s*([^\]\s\"]+)")


def excludes_file(environ: dict[str, str] | None = None, marks: Marks | None = None) -> str | None:
    """Where git's global excludes are: ``core.excludesFile`` from the user's git config,
    else ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found: str | None = None
    for config in (os.path.join(config_home, "git", "config"), os.path.join(home, ".gitconfig")):
        text = read_ignore_file(config, marks)
        if text is None:
            continue
        section = ""
        for line in text.splitlines():
            head = _SECTION.match(line)
            if head:
                section = head.group(1).lower()
                continue
            m = _EXCLUDES.match(line)
            if section == "core" and m:
                found = m.group(1).strip('"')  # the later file and line win, as in git
    if found:
        if found.startswith("~/"):
            found = os.path.join(home, found[2:])
        return found
    return os.path.join(config_home, "git", "ignore")


@dataclass(frozen=True, slots=True)
class Above:
    """The rules that hold above a folder, its path below their top (``""`` or
    ``"sub/dir/"``), whether it lies in a repository, and whether any ignore file in a
    folder between the top and it took part (ripgrep reads those only in a repository)."""

    rules: IgnoreStack
    prefix: str
    in_repository: bool
    from_parents: bool


def rules_above(
    folder: str,
    workspace: str,
    environ: dict[str, str] | None = None,
    marks: Marks | None = None,
) -> Above:
    """The ignore rules that hold above ``folder``, a folder of the root ``workspace``.
    In a git repository: git's global excludes, ``info/exclude`` and the ignore files of
    the folders from the repository's top down to ``folder``'s parent. Outside one: the
    ignore files of the folders from ``workspace`` down to ``folder``'s parent.
    ``marks``: the files read or looked for are noted there."""
    stack = IgnoreStack()
    repo = repository_top(folder, marks)
    if repo is not None:
        glob_file = excludes_file(environ, marks)
        if glob_file:
            text = read_ignore_file(glob_file, marks)
            stack = stack.with_files([parse(text, "") if text else None])
        git_dir = _git_dir(repo, marks)
        if git_dir:
            text = read_ignore_file(os.path.join(git_dir, "info", "exclude"), marks)
            stack = stack.with_files([parse(text, "") if text else None])
    top = repo if repo is not None else os.path.abspath(workspace)
    rel = os.path.relpath(os.path.abspath(folder), top).replace(os.sep, "/")
    if rel == ".":
        return Above(stack, "", repo is not None, False)
    parts = rel.split("/")
    before = len(stack.files)
    here, base = top, ""
    for i, part in enumerate(parts):
        stack = stack.with_files(folder_rules(here, base, marks=marks))
        base = "/".join(parts[: i + 1])
        here = os.path.join(here, part)
    return Above(stack, rel + "/", repo is not None, len(stack.files) > before)


#: (folder, workspace, the environment's say) -> (the answer, the files it rests on)
_kept: OrderedDict[tuple[str, str, str, str], tuple[Above, Marks]] = OrderedDict()
_kept_lock = threading.Lock()


def _unchanged(marks: Marks) -> bool:
    for path, was in marks:
        try:
            now = mark(os.lstat(path))
        except (OSError, ValueError):
            now = None
        if now != was:
            return False
    return True


def _settled(marks: Marks) -> bool:
    """Whether every file noted was last changed long enough ago for its times to show
    a later change (a folder's own times say nothing of a file in it: not asked)."""
    recent = time.time_ns() - SETTLE_NS
    return all(m is None or max(m[4], m[5]) < recent for _, m in marks)


def rules_for(folder: str, workspace: str, environ: dict[str, str] | None = None) -> Above:
    """The rules a listing or a search of ``folder`` goes by: :func:`rules_above`, unless
    those leave out ``folder`` itself (or a folder above it, below their top). A folder
    named on purpose is looked into even so (``node_modules``, a build folder), as ripgrep
    searches a path it is given: then only the ignore files from ``folder`` down hold.
    Kept while the files it rests on are unchanged (see the module's docstring)."""
    env = os.environ if environ is None else environ
    key = (folder, workspace, env.get("HOME", ""), env.get("XDG_CONFIG_HOME", ""))
    with _kept_lock:
        kept = _kept.get(key)
    if kept is not None and _unchanged(kept[1]):
        return kept[0]
    marks: Marks = []
    above = _rules_for(folder, workspace, environ, marks)
    with _kept_lock:
        if _settled(marks):
            _kept[key] = (above, marks)
            _kept.move_to_end(key)
            while len(_kept) > KEPT:
                _kept.popitem(last=False)
        else:
            _kept.pop(key, None)
    return above


def _rules_for(folder: str, workspace: str, environ: dict[str, str] | None, marks: Marks) -> Above:
    above = rules_above(folder, workspace, environ, marks)
    parts = above.prefix.rstrip("/").split("/") if above.prefix else []
    for i in range(len(parts)):
        if above.rules.ignored("/".join(parts[: i + 1]), is_dir=True):
            return Above(IgnoreStack(), "", False, False)
    return above
