"""Where Steadyhand keeps its own state, per system (platformdirs' conventions).

The state folder (history, the temp-file journal, locks):

- Linux and other Unix systems: ``$XDG_STATE_HOME/steadyhand``, else
  ``~/.local/state/steadyhand``;
- macOS: ``~/Library/Application Support/steadyhand``;
- Windows: ``%LOCALAPPDATA%\\steadyhand`` (the known folder, as the shell reports it).

``$STEADYHAND_STATE_DIR`` overrides it everywhere; ``$XDG_STATE_HOME`` is honoured on
every system (tests and sandboxes set it).
"""

from __future__ import annotations

import os

import platformdirs

APP = "steadyhand"


def state_dir() -> str:
    """The one folder of Steadyhand's own state (it may not exist yet)."""
    explicit = os.environ.get("STEADYHAND_STATE_DIR")
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_STATE_HOME")
    if xdg:
        return os.path.join(xdg, APP)
    return platformdirs.user_state_dir(APP, appauthor=False)
