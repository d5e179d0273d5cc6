"""Grammars, loaded the first time a file of their language is checked.

Each language's grammar is the official wheel of its own (``tree-sitter-python`` and so
on), imported only when needed: a server that never sees a Rust file never loads the
Rust grammar. A grammar that cannot be loaded (its wheel missing, or built for another
ABI) leaves its files unchecked; the reason is logged once.
"""

from __future__ import annotations

import importlib
import logging
import threading

from tree_sitter import Language, Parser

from steadyhand.syntax.languages import GRAMMARS

log = logging.getLogger(__name__)

_loaded: dict[str, Language | None] = {}
_lock = threading.Lock()


def language(name: str) -> Language | None:
    """The grammar of ``name`` (a key of :data:`GRAMMARS`), or None when unavailable."""
    try:
        return _loaded[name]
    except KeyError:
        pass
    with _lock:
        if name not in _loaded:
            _loaded[name] = _load(name)
        return _loaded[name]


def _load(name: str) -> Language | None:
    spec = GRAMMARS.get(name)
    if spec is None:
        return None
    module, function = spec
    try:
        lang = Language(getattr(importlib.import_module(module), function)())
        Parser(lang)  # refuses a grammar of an ABI this tree-sitter cannot run
    except Exception as exc:  # ImportError, AttributeError, ValueError from the binding
        log.warning(
            "syntax check: no %s grammar (%s: %s); its files pass unchecked", name, module, exc
        )
        return None
    return lang


def loaded() -> list[str]:
    """The languages whose grammar has been loaded so far (for tests and diagnostics)."""
    return sorted(k for k, v in _loaded.items() if v is not None)
