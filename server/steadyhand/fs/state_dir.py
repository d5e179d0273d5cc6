"""The one folder where Steadyhand keeps its own state (history, the temp-file journal)."""

from __future__ import annotations

import os
import sys


def state_dir() -> str:
    """``$STEADYHAND_STATE_DIR``; else ``$XDG_STATE_HOME/steadyhand``; else the platform's
    place for application state: ``~/.local/state/steadyhand`` on Linux and other Unix
    systems, ``~/Library/Application Support/steadyhand`` on macOS,
    ``%LOCALAPPDATA%\\steadyhand\\state`` on Windows."""
    explicit = os.environ.get("STEADYHAND_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg:
        return os.path.join(xdg, "steadyhand")
    home = os.path.expanduser("~")
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA") or os.path.join(home, "AppData", "Local")
        return os.path.join(local, "steadyhand", "state")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Application Support", "steadyhand")
    return os.path.join(home, ".local", "state", "steadyhand")
