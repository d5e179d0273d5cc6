"""The one source of every tool's contract: its names on each face, its parameters (whose
types, bounds and descriptions are written in ``protocol/params.py``), its description,
hints and result fields. The LSP parser, the MCP tools' schemas and the VS Code
extension's language-model tools all come from here (``emit.py`` writes the extension's
files; ``python -m steadyhand.protocol.spec`` runs it)."""

from steadyhand.protocol.spec.faces import FACES, LSP, MCP, VSCODE
from steadyhand.protocol.spec.model import (
    Face,
    Hints,
    Tool,
    description,
    input_schema,
    output_schema,
    shown_params,
)
from steadyhand.protocol.spec.table import BY_COMMAND, TOOLS

__all__ = [
    "BY_COMMAND",
    "FACES",
    "LSP",
    "MCP",
    "TOOLS",
    "VSCODE",
    "Face",
    "Hints",
    "Tool",
    "description",
    "input_schema",
    "output_schema",
    "shown_params",
]
