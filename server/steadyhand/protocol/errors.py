"""Stable error codes carried in the ``error`` field of a failed result."""

from enum import StrEnum


class ErrorCode(StrEnum):
    """Why a tool call did not do what was asked. The values never change."""

    NOT_READ = "not_read"
    STALE = "stale"
    PARTIAL_VIEW = "partial_view"
    NOT_FOUND = "not_found"
    NO_MATCH = "no_match"
    AMBIGUOUS = "ambiguous"
    NO_CHANGE = "no_change"
    IS_DIRECTORY = "is_directory"
    BINARY = "binary"
    NOT_REGULAR_FILE = "not_regular_file"
    TOO_LARGE = "too_large"
    INVALID_PATH = "invalid_path"
    OUTSIDE_WORKSPACE = "outside_workspace"
    DENIED = "denied"
    IO_ERROR = "io_error"
    EDIT_REJECTED = "edit_rejected"
    COUNT_MISMATCH = "count_mismatch"
    READ_ONLY = "read_only"
    PROTECTED = "protected"
    SECRET_DETECTED = "secret_detected"
    NO_HISTORY = "no_history"
    WRONG_TOOL = "wrong_tool"
    UNREADABLE = "unreadable"
    SESSION_EXISTS = "session_exists"
    CONFLICT = "conflict"
    SYNTAX_ERROR = "syntax_error"
    INVALID_PATTERN = "invalid_pattern"
    FILE_IN_USE = "file_in_use"


class ToolError(Exception):
    """A refusal that becomes a result object with ``ok: false`` (never a JSON-RPC error)."""

    def __init__(self, code: ErrorCode, message: str, **fields: object) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = fields
