"""Server settings: defaults, and how they are read from the client.

Settings arrive in ``initializationOptions`` and in the ``steadyhand`` section of
``workspace/didChangeConfiguration``. Keys are camelCase in JSON (``maxReadBytes``);
snake_case is accepted too. Unknown keys are ignored with a log line, bad values keep
the previous value, so a typo in a settings file never stops the server.
"""

from __future__ import annotations

import dataclasses
import difflib
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_type_hints

from steadyhand.paths.globs import invalid_glob

log = logging.getLogger(__name__)

SaveAfterEdit = Literal["whenClean", "always", "never"]
SecretsMode = Literal["warn", "block", "off"]
SyntaxCheckMode = Literal["warn", "block", "off"]
SearchEngine = Literal["auto", "ripgrep", "python"]

#: Version-control internals and editors' settings folders: readable, not writable.
DEFAULT_PROTECTED_GLOBS: tuple[str, ...] = (
    ".git/**",
    ".git",
    ".hg/**",
    ".svn/**",
    ".vscode/**",
    ".idea/**",
    ".vs/**",
    ".zed/**",
    ".fleet/**",
    # A workspace file holds editor settings, which could widen what agents may do.
    "**/*.code-workspace",
)


@dataclass(frozen=True, slots=True)
class Settings:
    #: Extra folders (besides the workspace folders) the agent may read and write.
    allowed_paths: tuple[str, ...] = ()
    #: Glob patterns (``**`` spans folders) that are neither readable nor writable.
    deny_globs: tuple[str, ...] = ()
    #: A whole-file read of a larger file is refused with ``too_large``.
    max_read_bytes: int = 256 * 1024
    #: A whole-file read whose content is estimated above this many tokens is refused.
    max_read_tokens: int = 25_000
    #: A write or edit producing more bytes than this is refused with ``too_large``.
    max_write_bytes: int = 1024 * 1024 * 1024
    #: Work on files that have several hard links (another name may lie outside the roots).
    allow_hard_links: bool = False
    #: Lines returned by a read without ``limit``.
    default_read_lines: int = 2000
    #: Longer lines are cut in read output, with a visible marker.
    max_line_chars: int = 2000
    #: Files tracked per session (LRU).
    max_tracked_files: int = 10_000
    #: Sessions kept (the least recently used beyond it are dropped, never "default").
    max_sessions: int = 256
    #: Bytes of file content kept for stale-diffs, shared by all sessions (LRU).
    content_store_bytes: int = 64 * 1024 * 1024
    #: Files larger than this are never kept in the content store.
    content_store_max_file_bytes: int = 1024 * 1024
    #: Longest diff (in lines) put into a ``stale`` message.
    stale_diff_max_lines: int = 60
    #: fsync files and folders on every disk write (durability; keep on).
    fsync: bool = True
    #: When the agent edits an open document: save it if it had no unsaved changes,
    #: always, or never.
    save_after_edit: SaveAfterEdit = "whenClean"
    #: Ask the editor to confirm each agent edit (change annotations).
    confirm_edits: bool = False
    #: How long an edit to an open document waits for the editor to apply it before it is
    #: answered as not applied (not while ``confirm_edits`` has the user decide).
    apply_edit_timeout_ms: int = 30_000
    #: Watch tracked files for changes made behind the agent's back.
    watch: bool = True
    #: Keep every version Steadyhand replaces, for undo and rewind (docs/history.md).
    history: bool = True
    #: Folder of the history store; "" = the user's state dir ($XDG_STATE_HOME/steadyhand).
    history_dir: str = ""
    #: Disk budget of one folder's history store (least recently used versions go first).
    history_max_bytes: int = 256 * 1024 * 1024
    #: Versions of files larger than this are not kept.
    history_max_file_bytes: int = 16 * 1024 * 1024
    #: Globs that agents may read but not change (see ``allow_protected_writes``).
    protected_globs: tuple[str, ...] = DEFAULT_PROTECTED_GLOBS
    #: Let agents change protected paths.
    allow_protected_writes: bool = False
    #: Credentials in lines a change adds: warn in the result, block the change, or off.
    secrets: SecretsMode = "warn"
    #: Syntax errors a change introduces (tree-sitter): warn in the result, block the
    #: change, or off.
    syntax_check: SyntaxCheckMode = "warn"
    #: Images are downscaled to at most this many pixels (width × height) ...
    image_max_pixels: int = 1_150_000
    #: ... and this many pixels on their long edge ...
    image_max_dimension: int = 1568
    #: ... and re-encoded until their bytes (before base64) fit this budget.
    image_max_bytes: int = 1024 * 1024
    #: A PDF with more pages must be read with ``pages``; no read returns more pages.
    pdf_max_pages: int = 20
    #: Notebooks, images and PDFs larger than this are refused with ``too_large``.
    max_document_bytes: int = 64 * 1024 * 1024
    #: What ``search`` runs: ripgrep where it answers as the Python engine would
    #: ("auto"), Python ("python"), or, to compare the two, ripgrep whenever it is
    #: installed and can read the pattern ("ripgrep").
    search_engine: SearchEngine = "auto"

    def updated(self, raw: dict[str, Any] | None) -> Settings:
        """A copy with the values from ``raw`` applied (bad values are logged and skipped)."""
        if not raw:
            return self
        hints = get_type_hints(Settings)
        names = {f.name for f in dataclasses.fields(Settings)}
        changes: dict[str, Any] = {}
        for key, value in raw.items():
            name = _snake(key)
            if name not in names:
                log.info("ignoring unknown setting %r", key)
                continue
            coerced = _coerce(hints[name], value)
            if coerced is _BAD:
                log.warning("ignoring setting %r: unexpected value %r", key, value)
                continue
            if name in _GLOB_SETTINGS:
                coerced = _usable_globs(key, coerced)
            changes[name] = coerced
        return dataclasses.replace(self, **changes)


_BAD = object()

#: Settings holding globs: each pattern is checked when the settings load.
_GLOB_SETTINGS = frozenset({"deny_globs", "protected_globs"})


def _usable_globs(key: str, patterns: tuple[str, ...]) -> tuple[str, ...]:
    """``patterns`` without those that cannot be used, each logged: one bad pattern in a
    settings file must not make every path check fail, nor drop the good ones."""
    kept: list[str] = []
    for pattern in patterns:
        why = invalid_glob(pattern)
        if why is None:
            kept.append(pattern)
        else:
            log.warning("ignoring pattern %r in setting %r: %s", pattern, key, why)
    return tuple(kept)


def setting_keys() -> list[str]:
    """Every setting's key as clients write it (camelCase)."""
    return [_camel(f.name) for f in dataclasses.fields(Settings)]


def unknown_settings(raw: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The keys of ``raw`` that name no setting, each with the known key closest to it
    (None when none is close): a typo must not pass for a setting."""
    names = {f.name for f in dataclasses.fields(Settings)}
    keys = setting_keys()
    out: list[tuple[str, str | None]] = []
    for key in raw:
        if _snake(key) in names:
            continue
        close = difflib.get_close_matches(_camel(_snake(key)), keys, n=1, cutoff=0.6)
        out.append((key, close[0] if close else None))
    return out


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _coerce(tp: Any, value: Any) -> Any:
    if tp is str:
        return value if isinstance(value, str) else _BAD
    if tp is bool:
        return value if isinstance(value, bool) else _BAD
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        return value if ok else _BAD
    if getattr(tp, "__origin__", None) is tuple:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return tuple(value)
        return _BAD
    if getattr(tp, "__origin__", None) is Literal:
        return value if value in get_args(tp) else _BAD
    return _BAD


def settings_from(raw: Any) -> Settings:
    """Settings from an ``initializationOptions`` value (which may wrap them in ``steadyhand``)."""
    if isinstance(raw, dict):
        inner = raw.get("steadyhand", raw)
        if isinstance(inner, dict):
            return Settings().updated(inner)
    return Settings()


__all__ = ["SaveAfterEdit", "Settings", "field", "settings_from"]
