"""What a replaced file carries beside its bytes and mode, given to the file replacing it.

- Linux: ``listxattr``, ``getxattr``, ``setxattr`` (ACLs are ``system.posix_acl_access``);
- macOS: ``fcopyfile(COPYFILE_ACL | COPYFILE_XATTR)``;
- Windows: ``ReplaceFileW`` keeps the ACL, attributes and streams itself.

Best effort everywhere: what the system refuses to set (a label only a privileged
process may give) is left out, as the owner is.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

if sys.platform == "linux":

    def copy(dfd: int, name: str, fd: int) -> None:
        """Copy the extended attributes of ``name`` in the folder ``dfd`` to ``fd``. The
        file is named through the folder already open (``/proc/self/fd``), never by its
        path: a folder on the path swapped for a symbolic link since would lead
        elsewhere."""
        src = f"/proc/self/fd/{dfd}/{name}"
        try:
            names = os.listxattr(src, follow_symlinks=False)
        except OSError:
            return
        for attr in names:
            with contextlib.suppress(OSError):
                os.setxattr(fd, attr, os.getxattr(src, attr, follow_symlinks=False))

elif sys.platform == "darwin":
    import ctypes
    import ctypes.util
    import stat

    from steadyhand.system import checked

    #: ``<copyfile.h>``
    _COPYFILE_ACL = 1 << 0
    _COPYFILE_XATTR = 1 << 2
    _found = ctypes.util.find_library("c")
    _fcopyfile: Any = None
    if _found:  # None where no libc can be named (an emulated macOS): nothing copied
        try:
            _fcopyfile = getattr(ctypes.CDLL(_found, use_errno=True), "fcopyfile", None)
        except OSError:
            _fcopyfile = None
    if _fcopyfile is not None:
        _fcopyfile.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_uint32]
        _fcopyfile.restype = ctypes.c_int

    def copy(dfd: int, name: str, fd: int) -> None:
        """``fcopyfile`` from the replaced file to ``fd``: its ACL and extended
        attributes. The replaced file is opened only once seen to be a regular file, and
        then only if it is the file seen (:mod:`steadyhand.system.checked`)."""
        if _fcopyfile is None:
            return
        try:  # looked at first: a FIFO or a device put in its place is never opened
            probe = checked.probe(name, dfd)
        except OSError:
            return
        try:
            if not stat.S_ISREG(probe.st.st_mode):
                return
            src = probe.open(checked.READ)
        except OSError:
            return
        finally:
            probe.close()
        try:
            now = os.fstat(src)
            if (now.st_dev, now.st_ino) == (probe.st.st_dev, probe.st.st_ino):
                _fcopyfile(src, fd, None, _COPYFILE_ACL | _COPYFILE_XATTR)
        finally:
            os.close(src)

else:

    def copy(dfd: int, name: str, fd: int) -> None:
        """Windows: ``ReplaceFileW`` gives the new file the replaced one's ACL,
        attributes and alternate streams; elsewhere nothing is known to copy."""
