"""Windows security: the current user's SID, the user a process runs as, who owns a file
or folder, and security descriptors that let only the current user in.

The descriptors are written in SDDL, Windows' text form of a security descriptor. Which
SDDL to ask for and whether a DACL read back lets anyone else in are pure functions of
strings (:func:`private_sddl`, :func:`dacl_is_private`), tested on every system; the calls
that read and set them (advapi32, kernel32 through ctypes) exist on Windows only.
"""

from __future__ import annotations

import re
import sys

#: Entry types that deny or audit (any other may grant something).
_NOT_GRANTING = frozenset({"D", "OD", "XD", "AU", "OU", "XU", "ML", "SP", "ZA"})

#: The DACL's own flags: protected, auto-inherit (requested), or a null DACL.
_DACL_FLAGS = re.compile(r"(?:P|AI|AR|NO_ACCESS_CONTROL)*")


def private_sddl(sid: str, *, folder: bool) -> str:
    """A security descriptor, in SDDL, owned by ``sid`` whose DACL lets only ``sid`` in
    (protected: nothing is inherited from the parent). A folder's entry is inherited by
    the files made in it."""
    inherit = "OICI" if folder else ""
    return f"O:{sid}D:P(A;{inherit};FA;;;{sid})"


def dacl_parts(sddl: str) -> tuple[str, list[str]] | None:
    """The DACL of an SDDL string: its flags and its entries (each without its
    parentheses); None when it has no DACL or one this cannot read."""
    at = sddl.find("D:")
    if at < 0:
        return None
    i = at + 2
    flags = _DACL_FLAGS.match(sddl, i)
    assert flags is not None  # the pattern matches the empty string
    i = flags.end()
    entries: list[str] = []
    while i < len(sddl) and sddl[i] == "(":
        depth, j = 0, i
        while j < len(sddl):
            if sddl[j] == "(":
                depth += 1
            elif sddl[j] == ")":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if depth != 0:
            return None  # an entry left open
        entries.append(sddl[i + 1 : j])
        i = j + 1
    if i < len(sddl) and sddl[i : i + 2] not in ("S:", "O:", "G:"):
        return None  # something after the entries that is not the next part
    return flags.group(), entries


def dacl_is_private(sddl: str, sid: str) -> bool:
    """Whether the DACL in ``sddl`` grants nothing to anyone but ``sid``: every entry that
    may grant access names ``sid`` itself. No DACL, a null DACL or one that cannot be read
    is not private."""
    parts = dacl_parts(sddl)
    if parts is None or "NO_ACCESS_CONTROL" in parts[0]:
        return False
    for entry in parts[1]:
        fields = entry.split(";")
        if len(fields) < 6:
            return False
        if fields[0].upper() in _NOT_GRANTING:
            continue
        if fields[5].upper() != sid.upper():
            return False
    return True


if sys.platform == "win32":
    import ctypes
    from ctypes import wintypes

    _advapi32 = ctypes.WinDLL("advapi32", use_last_error=True)
    _kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)

    TOKEN_QUERY = 0x0008
    TOKEN_USER = 1
    PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
    ERROR_INSUFFICIENT_BUFFER = 122
    SDDL_REVISION_1 = 1
    SE_FILE_OBJECT = 1
    OWNER_SECURITY_INFORMATION = 0x1
    DACL_SECURITY_INFORMATION = 0x4
    PROTECTED_DACL_SECURITY_INFORMATION = 0x80000000

    class _SidAndAttributes(ctypes.Structure):
        _fields_ = [("Sid", ctypes.c_void_p), ("Attributes", wintypes.DWORD)]

    class SecurityAttributes(ctypes.Structure):
        _fields_ = [
            ("nLength", wintypes.DWORD),
            ("lpSecurityDescriptor", ctypes.c_void_p),
            ("bInheritHandle", wintypes.BOOL),
        ]

    _GetCurrentProcess = _kernel32.GetCurrentProcess
    _GetCurrentProcess.restype = wintypes.HANDLE
    _GetCurrentProcess.argtypes = []
    _OpenProcess = _kernel32.OpenProcess
    _OpenProcess.restype = wintypes.HANDLE
    _OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
    _CloseHandle = _kernel32.CloseHandle
    _CloseHandle.restype = wintypes.BOOL
    _CloseHandle.argtypes = [wintypes.HANDLE]
    _LocalFree = _kernel32.LocalFree
    _LocalFree.restype = ctypes.c_void_p
    _LocalFree.argtypes = [ctypes.c_void_p]
    _OpenProcessToken = _advapi32.OpenProcessToken
    _OpenProcessToken.restype = wintypes.BOOL
    _OpenProcessToken.argtypes = [wintypes.HANDLE, wintypes.DWORD, ctypes.POINTER(wintypes.HANDLE)]
    _GetTokenInformation = _advapi32.GetTokenInformation
    _GetTokenInformation.restype = wintypes.BOOL
    _GetTokenInformation.argtypes = [
        wintypes.HANDLE,
        ctypes.c_int,
        ctypes.c_void_p,
        wintypes.DWORD,
        ctypes.POINTER(wintypes.DWORD),
    ]
    _ConvertSidToStringSidW = _advapi32.ConvertSidToStringSidW
    _ConvertSidToStringSidW.restype = wintypes.BOOL
    _ConvertSidToStringSidW.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    _ConvertSddl = _advapi32.ConvertStringSecurityDescriptorToSecurityDescriptorW
    _ConvertSddl.restype = wintypes.BOOL
    _ConvertSddl.argtypes = [
        wintypes.LPCWSTR,
        wintypes.DWORD,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(wintypes.ULONG),
    ]
    _ConvertSdToSddl = _advapi32.ConvertSecurityDescriptorToStringSecurityDescriptorW
    _ConvertSdToSddl.restype = wintypes.BOOL
    _ConvertSdToSddl.argtypes = [
        ctypes.c_void_p,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(wintypes.ULONG),
    ]
    _GetNamedSecurityInfoW = _advapi32.GetNamedSecurityInfoW
    _GetNamedSecurityInfoW.restype = wintypes.DWORD
    _GetNamedSecurityInfoW.argtypes = [
        wintypes.LPCWSTR,
        ctypes.c_int,
        wintypes.DWORD,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
    ]
    _GetSecurityInfo = _advapi32.GetSecurityInfo
    _GetSecurityInfo.restype = wintypes.DWORD
    _GetSecurityInfo.argtypes = [
        wintypes.HANDLE,
        ctypes.c_int,
        wintypes.DWORD,
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(ctypes.c_void_p),
    ]
    _SetNamedSecurityInfoW = _advapi32.SetNamedSecurityInfoW
    _SetNamedSecurityInfoW.restype = wintypes.DWORD
    _SetNamedSecurityInfoW.argtypes = [
        wintypes.LPWSTR,
        ctypes.c_int,
        wintypes.DWORD,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    _GetSecurityDescriptorDacl = _advapi32.GetSecurityDescriptorDacl
    _GetSecurityDescriptorDacl.restype = wintypes.BOOL
    _GetSecurityDescriptorDacl.argtypes = [
        ctypes.c_void_p,
        ctypes.POINTER(wintypes.BOOL),
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.POINTER(wintypes.BOOL),
    ]
    _CreateDirectoryW = _kernel32.CreateDirectoryW
    _CreateDirectoryW.restype = wintypes.BOOL
    _CreateDirectoryW.argtypes = [wintypes.LPCWSTR, ctypes.c_void_p]

    def _sid_string(psid: int | None) -> str:
        out = ctypes.c_void_p()
        if not _ConvertSidToStringSidW(psid, ctypes.byref(out)):
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            return ctypes.wstring_at(out.value or 0)
        finally:
            _LocalFree(out)

    def _token_user(token: int | None) -> str:
        size = wintypes.DWORD(0)
        _GetTokenInformation(token, TOKEN_USER, None, 0, ctypes.byref(size))
        if size.value == 0:
            raise ctypes.WinError(ctypes.get_last_error())
        buf = ctypes.create_string_buffer(size.value)
        if not _GetTokenInformation(token, TOKEN_USER, buf, size, ctypes.byref(size)):
            raise ctypes.WinError(ctypes.get_last_error())
        user = _SidAndAttributes.from_buffer(buf)  # TOKEN_USER holds one SID_AND_ATTRIBUTES
        return _sid_string(user.Sid)

    def _process_user(process: int | None) -> str:
        token = wintypes.HANDLE()
        if not _OpenProcessToken(process, TOKEN_QUERY, ctypes.byref(token)):
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            return _token_user(token.value)
        finally:
            _CloseHandle(token)

    _current: list[str] = []

    def current_sid() -> str:
        """The SID of the user this process runs as (``S-1-5-21-…``)."""
        if not _current:
            _current.append(_process_user(_GetCurrentProcess()))
        return _current[0]

    def process_sid(pid: int) -> str | None:
        """The SID of the user process ``pid`` runs as (None: it cannot be told)."""
        handle = _OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not handle:
            return None
        try:
            return _process_user(handle)
        except OSError:
            return None
        finally:
            _CloseHandle(handle)

    class SecurityDescriptor:
        """A self-relative security descriptor made from SDDL, with the
        SECURITY_ATTRIBUTES that hand it to a create call; freed by :meth:`free`."""

        def __init__(self, sddl: str) -> None:
            self.pointer = ctypes.c_void_p()
            if not _ConvertSddl(sddl, SDDL_REVISION_1, ctypes.byref(self.pointer), None):
                raise ctypes.WinError(ctypes.get_last_error())
            self.attributes = SecurityAttributes(
                ctypes.sizeof(SecurityAttributes), self.pointer.value, False
            )

        def dacl(self) -> int | None:
            present, defaulted = wintypes.BOOL(), wintypes.BOOL()
            acl = ctypes.c_void_p()
            ok = _GetSecurityDescriptorDacl(
                self.pointer, ctypes.byref(present), ctypes.byref(acl), ctypes.byref(defaulted)
            )
            if not ok:
                raise ctypes.WinError(ctypes.get_last_error())
            return acl.value

        def free(self) -> None:
            if self.pointer.value:
                _LocalFree(self.pointer)
                self.pointer = ctypes.c_void_p()

    def _described(sd: ctypes.c_void_p, owner: ctypes.c_void_p) -> tuple[str | None, str]:
        text = ctypes.c_void_p()
        info = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION
        if not _ConvertSdToSddl(sd, SDDL_REVISION_1, info, ctypes.byref(text), None):
            raise ctypes.WinError(ctypes.get_last_error())
        try:
            sddl = ctypes.wstring_at(text.value or 0)
        finally:
            _LocalFree(text)
        return (_sid_string(owner.value) if owner.value else None), sddl

    def path_security(path: str) -> tuple[str | None, str]:
        """The owner SID of a file or folder and its descriptor in SDDL."""
        owner, dacl, sd = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        info = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION
        err = _GetNamedSecurityInfoW(
            path,
            SE_FILE_OBJECT,
            info,
            ctypes.byref(owner),
            None,
            ctypes.byref(dacl),
            None,
            ctypes.byref(sd),
        )
        if err:
            raise ctypes.WinError(err)
        try:
            return _described(sd, owner)
        finally:
            _LocalFree(sd)

    def handle_security(handle: int) -> tuple[str | None, str]:
        """As :func:`path_security`, for an open handle."""
        owner, dacl, sd = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        info = OWNER_SECURITY_INFORMATION | DACL_SECURITY_INFORMATION
        err = _GetSecurityInfo(
            handle,
            SE_FILE_OBJECT,
            info,
            ctypes.byref(owner),
            None,
            ctypes.byref(dacl),
            None,
            ctypes.byref(sd),
        )
        if err:
            raise ctypes.WinError(err)
        try:
            return _described(sd, owner)
        finally:
            _LocalFree(sd)

    def make_private_folder(path: str) -> None:
        """Create ``path`` (its parent exists) owned by this user, with a DACL that lets
        only this user in. ``FileExistsError`` when something is there."""
        sd = SecurityDescriptor(private_sddl(current_sid(), folder=True))
        try:
            if not _CreateDirectoryW(path, ctypes.byref(sd.attributes)):
                raise ctypes.WinError(ctypes.get_last_error())
        finally:
            sd.free()

    def make_folder_private(path: str) -> None:
        """Replace the DACL of a folder this user owns by one that lets only them in (the
        ``chmod 0700`` of Windows)."""
        sd = SecurityDescriptor(private_sddl(current_sid(), folder=True))
        try:
            info = DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION
            err = _SetNamedSecurityInfoW(path, SE_FILE_OBJECT, info, None, None, sd.dacl(), None)
            if err:
                raise ctypes.WinError(err)
        finally:
            sd.free()
