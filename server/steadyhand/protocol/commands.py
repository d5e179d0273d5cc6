"""Names of the commands and custom methods Steadyhand speaks over LSP."""

from typing import Final

READ: Final = "steadyhand.read"
EDIT: Final = "steadyhand.edit"
WRITE: Final = "steadyhand.write"
SESSION_FORK: Final = "steadyhand.session.fork"
SESSION_CLOSE: Final = "steadyhand.session.close"
PING: Final = "steadyhand.ping"
HISTORY: Final = "steadyhand.history"
UNDO: Final = "steadyhand.undo"
CHECKPOINT: Final = "steadyhand.checkpoint"
REWIND: Final = "steadyhand.rewind"
NOTEBOOK_EDIT: Final = "steadyhand.notebookEdit"
MULTI_EDIT: Final = "steadyhand.multiEdit"
CHANGES: Final = "steadyhand.changes"
CHANGE: Final = "steadyhand.change"
LIST: Final = "steadyhand.list"
SEARCH: Final = "steadyhand.search"
INFO: Final = "steadyhand.info"
CREATE_DIRECTORY: Final = "steadyhand.createDirectory"

#: Every command the server advertises in ``executeCommandProvider``.
ALL_COMMANDS: Final[tuple[str, ...]] = (
    READ,
    EDIT,
    WRITE,
    SESSION_FORK,
    SESSION_CLOSE,
    PING,
    HISTORY,
    UNDO,
    CHECKPOINT,
    REWIND,
    NOTEBOOK_EDIT,
    MULTI_EDIT,
    CHANGES,
    CHANGE,
    LIST,
    SEARCH,
    INFO,
    CREATE_DIRECTORY,
)

#: Server -> client request asking the editor to save documents (see docs/protocol.md).
SAVE_DOCUMENTS: Final = "steadyhand/saveDocuments"
#: Server -> client notification: a tracked file changed behind the agent's back.
FILE_CHANGED: Final = "steadyhand/fileChanged"

DEFAULT_SESSION: Final = "default"
