"""The faces through which a model reaches the tools, and what differs between them."""

from __future__ import annotations

from steadyhand.protocol.spec.model import Face

#: ``workspace/executeCommand``: every command, every parameter.
LSP = Face(
    "lsp",
    "LSP",
    fragments={
        "own_session": (
            "The session this call runs in: what it read, and so may change. Each agent or "
            'sub-agent names its own (default "default").'
        ),
        "notebook_images": "deliver image outputs (base64, downscaled) in `images`",
        "image_read": (
            "An image is answered as base64 `data` (downscaled) with its size and format."
        ),
        "diagnostics": "",
    },
)

#: The base of an MCP connection's session, ``mcp-`` and 6 hex digits, and the ``/``
#: put between it and a sub-agent's name (``mcp/tools.session_name``).
MCP_SESSION_PREFIX = len("mcp-") + 6 + len("/")

#: ``steadyhand mcp``: the tools an MCP host lists.
MCP = Face(
    "mcp",
    "MCP",
    fragments={
        "own_session": (
            "Optional. Leave it out: each connection has its own session, which remembers "
            "what you read. A host that runs sub-agents may give each one a name here, so "
            "that each keeps its own view of the files."
        ),
        "notebook_images": "return image outputs as images",
        "image_read": "An image is returned as an image (downscaled).",
        "diagnostics": "",
    },
    max_length={
        "session": (
            256 - MCP_SESSION_PREFIX,
            "the connection's own session name and a / are put before the name given, "
            "and the whole must fit the server's 256 characters",
        )
    },
    errors=("invalid_params", "not_attached"),
)

#: The VS Code extension's language-model tools (``vscode.lm.registerTool``).
VSCODE = Face(
    "vscode",
    "VS Code",
    fragments={
        "notebook_images": "ask for image outputs",
        "image_read": (
            "For an image you get its format and size only: this tool returns text, never "
            "the picture."
        ),
        "diagnostics": (
            " The new errors the editor reports for the file afterwards are listed in the "
            "result: fix those."
        ),
    },
    hidden={
        "session": (
            "the extension runs every tool in the session the `steadyhand.tools.session` "
            "setting names, so that what the model read and what it changes are one view; "
            "a name the model chose would split them"
        ),
    },
)

FACES = (LSP, MCP, VSCODE)
