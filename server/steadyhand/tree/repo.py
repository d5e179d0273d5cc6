"""The ignore rules that hold above a folder: git's global excludes, the repository's
``info/exclude`` and the ignore files of the folders between the repository's top and
the folder, as git applies them to the paths below it.

These are the only files Steadyhand reads outside the workspace, and only to decide what
a listing or a search leaves out; their text is never shown.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from steadyhand.tree.ignore import IgnoreStack, parse
from steadyhand.tree.walk import folder_rules, read_ignore_file

#: Folders looked at, at most, on the way up to a repository's top.
MAX_UP = 64


def repository_top(folder: str) -> str | None:
    """The top of the git repository ``folder`` lies in (where ``.git`` is), or None."""
    here = os.path.abspath(folder)
    for _ in range(MAX_UP):
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        up = os.path.dirname(here)
        if up == here:
            return None
        here = up
    return None


def _git_dir(top: str) -> str | None:
    """The repository's own folder: ``.git``, or where a ``.git`` file points (a worktree
    or a submodule)."""
    dot = os.path.join(top, ".git")
    if os.path.isdir(dot) and not os.path.islink(dot):
        return dot
    text = read_ignore_file(dot)
    if text is None:
        return None
    m = re.match(r"gitdir:\s*(.+)", text.strip())
    if not m:
        return None
    target = m.group(1).strip()
    return target if os.path.isabs(target) else os.path.normpath(os.path.join(top, target))


_EXCLUDES = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.IGNORECASE)
_SECTION = re.compile(r"^\s*\[\s*([^\]\s\"]+)")


def excludes_file(environ: dict[str, str] | None = None) -> str | None:
    """Where git's global excludes are: ``core.excludesFile`` from the user's git config,
    else ``$XDG_CONFIG_HOME/git/ignore`` (``~/.config/git/ignore``)."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    found: str | None = None
    for config in (os.path.join(config_home, "git", "config"), os.path.join(home, ".gitconfig")):
        text = read_ignore_file(config)
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


def rules_above(folder: str, workspace: str, environ: dict[str, str] | None = None) -> Above:
    """The ignore rules that hold above ``folder``, a folder of the root ``workspace``.
    In a git repository: git's global excludes, ``info/exclude`` and the ignore files of
    the folders from the repository's top down to ``folder``'s parent. Outside one: the
    ignore files of the folders from ``workspace`` down to ``folder``'s parent."""
    stack = IgnoreStack()
    repo = repository_top(folder)
    if repo is not None:
        glob_file = excludes_file(environ)
        if glob_file:
            text = read_ignore_file(glob_file)
            stack = stack.with_files([parse(text, "") if text else None])
        git_dir = _git_dir(repo)
        if git_dir:
            text = read_ignore_file(os.path.join(git_dir, "info", "exclude"))
            stack = stack.with_files([parse(text, "") if text else None])
    top = repo if repo is not None else os.path.abspath(workspace)
    rel = os.path.relpath(os.path.abspath(folder), top).replace(os.sep, "/")
    if rel == ".":
        return Above(stack, "", repo is not None, False)
    parts = rel.split("/")
    before = len(stack.files)
    here, base = top, ""
    for i, part in enumerate(parts):
        stack = stack.with_files(folder_rules(here, base))
        base = "/".join(parts[: i + 1])
        here = os.path.join(here, part)
    return Above(stack, rel + "/", repo is not None, len(stack.files) > before)


def rules_for(folder: str, workspace: str, environ: dict[str, str] | None = None) -> Above:
    """The rules a listing or a search of ``folder`` goes by: :func:`rules_above`, unless
    those leave out ``folder`` itself (or a folder above it, below their top). A folder
    named on purpose is looked into even so (``node_modules``, a build folder), as ripgrep
    searches a path it is given: then only the ignore files from ``folder`` down hold."""
    above = rules_above(folder, workspace, environ)
    parts = above.prefix.rstrip("/").split("/") if above.prefix else []
    for i in range(len(parts)):
        if above.rules.ignored("/".join(parts[: i + 1]), is_dir=True):
            return Above(IgnoreStack(), "", False, False)
    return above
