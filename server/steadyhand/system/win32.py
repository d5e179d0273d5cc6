"""kernel32, through ctypes: the few Windows calls the other modules of this package make.

Everything here exists on Windows only; the names are defined under a ``sys.platform``
branch, so importing the module elsewhere defines nothing but the constants.
"""

from __future__ import annotations

import sys

# CreateFileW
GENERIC_READ = 0x80000000
GENERIC_WRITE = 0x40000000
FILE_READ_ATTRIBUTES = 0x80
FILE_SHARE_READ = 0x1
FILE_SHARE_WRITE = 0x2
FILE_SHARE_DELETE = 0x4
OPEN_EXISTING = 3
OPEN_ALWAYS = 4
FILE_FLAG_BACKUP_SEMANTICS = 0x02000000
FILE_FLAG_OPEN_REPARSE_POINT = 0x00200000
FILE_ATTRIBUTE_DIRECTORY = 0x10
FILE_ATTRIBUTE_REPARSE_POINT = 0x400
FILE_TYPE_DISK = 0x1
# GetFinalPathNameByHandleW
FILE_NAME_NORMALIZED = 0x0
VOLUME_NAME_DOS = 0x0
# MoveFileExW
MOVEFILE_REPLACE_EXISTING = 0x1
MOVEFILE_WRITE_THROUGH = 0x8
# LockFileEx
LOCKFILE_EXCLUSIVE_LOCK = 0x2
# OpenProcess / GetExitCodeProcess
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
STILL_ACTIVE = 259
# errors
ERROR_FILE_NOT_FOUND = 2
ERROR_PATH_NOT_FOUND = 3
ERROR_ACCESS_DENIED = 5
ERROR_INVALID_PARAMETER = 87
ERROR_SHARING_VIOLATION = 32
ERROR_LOCK_VIOLATION = 33
ERROR_ALREADY_EXISTS = 183
ERROR_FILE_EXISTS = 80
ERROR_UNABLE_TO_REMOVE_REPLACED = 1175
ERROR_UNABLE_TO_MOVE_REPLACEMENT = 1176
ERROR_UNABLE_TO_MOVE_REPLACEMENT_2 = 1177
#: Errors of a file another process holds open without ``FILE_SHARE_DELETE`` (an
#: editor, an indexer, an antivirus scanner): worth a few more tries.
BUSY_ERRORS = frozenset(
    {
        ERROR_ACCESS_DENIED,
        ERROR_SHARING_VIOLATION,
        ERROR_LOCK_VIOLATION,
        ERROR_UNABLE_TO_REMOVE_REPLACED,
        ERROR_UNABLE_TO_MOVE_REPLACEMENT,
    }
)


if sys.platform == "win32":
    import ctypes
    import msvcrt
    from ctypes import wintypes

    _k32 = ctypes.WinDLL("kernel32", use_last_error=True)

    INVALID_HANDLE_VALUE = wintypes.HANDLE(-1).value

    class _FileInfo(ctypes.Structure):
        _fields_ = [
            ("dwFileAttributes", wintypes.DWORD),
            ("ftCreationTime", wintypes.FILETIME),
            ("ftLastAccessTime", wintypes.FILETIME),
            ("ftLastWriteTime", wintypes.FILETIME),
            ("dwVolumeSerialNumber", wintypes.DWORD),
            ("nFileSizeHigh", wintypes.DWORD),
            ("nFileSizeLow", wintypes.DWORD),
            ("nNumberOfLinks", wintypes.DWORD),
            ("nFileIndexHigh", wintypes.DWORD),
            ("nFileIndexLow", wintypes.DWORD),
        ]

    class _Overlapped(ctypes.Structure):
        _fields_ = [
            ("Internal", ctypes.c_void_p),
            ("InternalHigh", ctypes.c_void_p),
            ("Offset", wintypes.DWORD),
            ("OffsetHigh", wintypes.DWORD),
            ("hEvent", wintypes.HANDLE),
        ]

    _CreateFileW = _k32.CreateFileW
    _CreateFileW.argtypes = [
        wintypes.LPCWSTR,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.c_void_p,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.HANDLE,
    ]
    _CreateFileW.restype = wintypes.HANDLE
    _ReOpenFile = _k32.ReOpenFile
    _ReOpenFile.argtypes = [wintypes.HANDLE, wintypes.DWORD, wintypes.DWORD, wintypes.DWORD]
    _ReOpenFile.restype = wintypes.HANDLE
    _CloseHandle = _k32.CloseHandle
    _CloseHandle.argtypes = [wintypes.HANDLE]
    _CloseHandle.restype = wintypes.BOOL
    _GetFileType = _k32.GetFileType
    _GetFileType.argtypes = [wintypes.HANDLE]
    _GetFileType.restype = wintypes.DWORD
    _GetFileInformationByHandle = _k32.GetFileInformationByHandle
    _GetFileInformationByHandle.argtypes = [wintypes.HANDLE, ctypes.POINTER(_FileInfo)]
    _GetFileInformationByHandle.restype = wintypes.BOOL
    _GetFinalPathNameByHandleW = _k32.GetFinalPathNameByHandleW
    _GetFinalPathNameByHandleW.argtypes = [
        wintypes.HANDLE,
        wintypes.LPWSTR,
        wintypes.DWORD,
        wintypes.DWORD,
    ]
    _GetFinalPathNameByHandleW.restype = wintypes.DWORD
    _GetLongPathNameW = _k32.GetLongPathNameW
    _GetLongPathNameW.argtypes = [wintypes.LPCWSTR, wintypes.LPWSTR, wintypes.DWORD]
    _GetLongPathNameW.restype = wintypes.DWORD
    _MoveFileExW = _k32.MoveFileExW
    _MoveFileExW.argtypes = [wintypes.LPCWSTR, wintypes.LPCWSTR, wintypes.DWORD]
    _MoveFileExW.restype = wintypes.BOOL
    _ReplaceFileW = _k32.ReplaceFileW
    _ReplaceFileW.argtypes = [
        wintypes.LPCWSTR,
        wintypes.LPCWSTR,
        wintypes.LPCWSTR,
        wintypes.DWORD,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    _ReplaceFileW.restype = wintypes.BOOL
    _LockFileEx = _k32.LockFileEx
    _LockFileEx.argtypes = [
        wintypes.HANDLE,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.POINTER(_Overlapped),
    ]
    _LockFileEx.restype = wintypes.BOOL
    _UnlockFileEx = _k32.UnlockFileEx
    _UnlockFileEx.argtypes = [
        wintypes.HANDLE,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.POINTER(_Overlapped),
    ]
    _UnlockFileEx.restype = wintypes.BOOL
    _OpenProcess = _k32.OpenProcess
    _OpenProcess.argtypes = [wintypes.DWORD, wintypes.BOOL, wintypes.DWORD]
    _OpenProcess.restype = wintypes.HANDLE
    _GetExitCodeProcess = _k32.GetExitCodeProcess
    _GetExitCodeProcess.argtypes = [wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD)]
    _GetExitCodeProcess.restype = wintypes.BOOL

    def error(code: int, path: str, other: str | None = None) -> OSError:
        """An ``OSError`` for the Windows error ``code``: Python derives its errno (and
        so its class: ``FileNotFoundError``, ``PermissionError``...) from ``winerror``."""
        return OSError(0, ctypes.FormatError(code), path, code, other)

    def _last(path: str, other: str | None = None) -> OSError:
        return error(ctypes.get_last_error(), path, other)

    def create_file(path: str, access: int, share: int, disposition: int, flags: int) -> int:
        """``CreateFileW``: a handle, or ``OSError``."""
        h = _CreateFileW(path, access, share, None, disposition, flags, None)
        if h is None or h == INVALID_HANDLE_VALUE:
            raise _last(path)
        return int(h)

    def reopen(handle: int, access: int, share: int, path: str) -> int:
        """``ReOpenFile``: a new handle to the very file ``handle`` is open on."""
        h = _ReOpenFile(handle, access, share, 0)
        if h is None or h == INVALID_HANDLE_VALUE:
            raise _last(path)
        return int(h)

    def close_handle(handle: int) -> None:
        _CloseHandle(handle)

    def file_type(handle: int) -> int:
        return int(_GetFileType(handle))

    def attributes(handle: int, path: str) -> tuple[int, int, int, int]:
        """(attributes, volume serial, file index, link count) of an open handle."""
        info = _FileInfo()
        if not _GetFileInformationByHandle(handle, ctypes.byref(info)):
            raise _last(path)
        index = (info.nFileIndexHigh << 32) | info.nFileIndexLow
        return (
            int(info.dwFileAttributes),
            int(info.dwVolumeSerialNumber),
            int(index),
            int(info.nNumberOfLinks),
        )

    def final_path(handle: int, path: str) -> str:
        """``GetFinalPathNameByHandleW``: the file's path as the system stores it
        (``\\\\?\\C:\\...`` or ``\\\\?\\UNC\\server\\share\\...``), every reparse point on
        the way resolved."""
        size = 512
        while True:
            buf = ctypes.create_unicode_buffer(size)
            n = _GetFinalPathNameByHandleW(handle, buf, size, FILE_NAME_NORMALIZED)
            if n == 0:
                raise _last(path)
            if n < size:
                return buf.value
            size = n + 1

    def long_path(path: str) -> str:
        """``GetLongPathNameW``: ``path`` with every 8.3 short name replaced by the long
        name it stands for (the path must exist)."""
        size = 512
        while True:
            buf = ctypes.create_unicode_buffer(size)
            n = _GetLongPathNameW(path, buf, size)
            if n == 0:
                raise _last(path)
            if n < size:
                return buf.value
            size = n + 1

    def move(src: str, dst: str, flags: int) -> None:
        if not _MoveFileExW(src, dst, flags):
            raise _last(src, dst)

    def replace_file(replaced: str, replacement: str, backup: str | None) -> None:
        """``ReplaceFileW``: ``replaced`` gets ``replacement``'s bytes and keeps its own
        attributes, ACL and streams; its old file is kept as ``backup``."""
        if not _ReplaceFileW(replaced, replacement, backup, 0, None, None):
            raise _last(replaced, replacement)

    def lock_handle(handle: int, path: str) -> None:
        """``LockFileEx``, exclusive, waiting for it: the first byte (a lock, not data)."""
        ov = _Overlapped()
        if not _LockFileEx(handle, LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ctypes.byref(ov)):
            raise _last(path)

    def unlock_handle(handle: int) -> None:
        ov = _Overlapped()
        _UnlockFileEx(handle, 0, 1, 0, ctypes.byref(ov))

    def fd_handle(fd: int) -> int:
        return int(msvcrt.get_osfhandle(fd))

    def handle_fd(handle: int, flags: int) -> int:
        """A C runtime descriptor owning ``handle`` (closing it closes the handle)."""
        return int(msvcrt.open_osfhandle(handle, flags))

    def process_alive(pid: int) -> bool:
        h = _OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not h:
            # no such process, or one we may not look at (then it is alive)
            return ctypes.get_last_error() == ERROR_ACCESS_DENIED
        try:
            code = wintypes.DWORD()
            if not _GetExitCodeProcess(h, ctypes.byref(code)):
                return True
            return code.value == STILL_ACTIVE
        finally:
            _CloseHandle(h)
