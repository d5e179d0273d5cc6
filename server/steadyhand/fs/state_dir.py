"""The one folder where Steadyhand keeps its own state (history, the temp-file journal).

Where it is on each system is decided in :mod:`steadyhand.system.dirs`."""

from __future__ import annotations

from steadyhand.system.dirs import state_dir

__all__ = ["state_dir"]
