"""The server's structural invariants that import-linter cannot state (it sees imports,
not calls), checked on the source's syntax trees: one writer, one way in for changes,
one process check. The others are import-linter contracts in ``pyproject.toml``; both
are listed, with why each holds, in ``docs/architecture.md`` under "Invariants"."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import steadyhand

SERVER = Path(steadyhand.__file__).parent


def _callers(is_call: Callable[[ast.Call], bool], under: str = "") -> set[str]:
    """The modules (paths relative to the package) with a call ``is_call`` accepts."""
    found: set[str] = set()
    for path in sorted((SERVER / under).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if any(isinstance(n, ast.Call) and is_call(n) for n in ast.walk(tree)):
            found.add(path.relative_to(SERVER).as_posix())
    return found


def _named(*names: str) -> Callable[[ast.Call], bool]:
    """A call of a function by one of ``names`` (as a name or an attribute)."""

    def is_call(call: ast.Call) -> bool:
        f = call.func
        return (isinstance(f, ast.Name) and f.id in names) or (
            isinstance(f, ast.Attribute) and f.attr in names
        )

    return is_call


def _on_world(*methods: str) -> Callable[[ast.Call], bool]:
    """A call ``<something>.world.<method>(...)``: a change handed to the whole stack."""

    def is_call(call: ast.Call) -> bool:
        f = call.func
        return (
            isinstance(f, ast.Attribute)
            and f.attr in methods
            and isinstance(f.value, ast.Attribute)
            and f.value.attr == "world"
        )

    return is_call


def _os_kill(call: ast.Call) -> bool:
    f = call.func
    return (
        isinstance(f, ast.Attribute)
        and f.attr == "kill"
        and isinstance(f.value, ast.Name)
        and f.value.id == "os"
    )


def test_the_checks_see_calls() -> None:
    # the helpers find what they look for: the kernel hands changes to the world, the
    # disk layer writes, the system package asks about processes
    assert "tools/mutation.py" in _callers(_on_world("apply"))
    assert "apply/disk.py" in _callers(_named("atomic_write"))
    assert "system/process.py" in _callers(_os_kill)


def test_only_the_disk_layer_writes_and_deletes_files() -> None:
    # fs/atomic.py defines the writer; apply/disk.py (DiskWorld) is its one caller, for
    # writes, deletions, moves and the removal of a tree alike
    writers = _named("atomic_write", "checked_delete", "move_checked", "remove_checked")
    assert _callers(writers) - {"fs/atomic.py"} == {"apply/disk.py"}
    # a write started early (its bytes synced while the change is checked) too
    assert _callers(_named("stage_write")) - {"fs/atomic.py"} == {"apply/disk.py"}


def test_changes_reach_the_world_only_through_the_mutation_kernel() -> None:
    assert _callers(_on_world("apply", "delete", "move", "remove", "restore")) == {
        "tools/mutation.py"
    }
    assert _callers(_on_world("stage", "unstage")) == {"tools/mutation.py"}
    assert _callers(_on_world("make_folders")) == {"tools/mutation.py"}
    # a change to the tree too: a move, a deletion of files and folders, its undo
    assert _callers(_on_world("move", "remove", "restore")) == {"tools/mutation.py"}
    # the early refusal of what may not be changed is the kernel's too (open_target);
    # GuardedWorld checks every change again
    assert _callers(_named("check_writable"), "tools") == {"tools/mutation.py"}


def test_only_the_system_package_asks_whether_a_process_runs() -> None:
    # os.kill(pid, 0) is the POSIX check, and on Windows it would end the process
    assert {m for m in _callers(_os_kill) if not m.startswith("system/")} == set()
