"""An emulated macOS for the processes a test starts with this folder on ``PYTHONPATH``
and ``STEADYHAND_EMULATE_PLATFORM=darwin``: ``sys.platform`` says darwin, and the names
of the socket and fcntl modules that macOS lacks and the MCP face could reach for are
gone. The kernel stays Linux's, so what is checked is that the macOS branches import and
run, not how a macOS kernel answers them. (The file-opening names, such as ``os.O_PATH``,
are left in place: the file layer is emulated in its own tests.)"""

from __future__ import annotations

import os
import sys

if os.environ.get("STEADYHAND_EMULATE_PLATFORM") == "darwin":
    import fcntl
    import socket

    sys.platform = "darwin"
    for module, names in (
        (socket, ("SO_PEERCRED", "SO_PASSCRED", "SO_PEERSEC", "SCM_CREDENTIALS")),
        (fcntl, ("F_SETPIPE_SZ", "F_GETPIPE_SZ")),
    ):
        for name in names:
            if hasattr(module, name):
                delattr(module, name)
