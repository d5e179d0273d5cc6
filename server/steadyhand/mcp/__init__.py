"""The MCP face of Steadyhand: ``steadyhand mcp``, on stdio, standalone or attached to the
language server of a running editor (see docs/mcp.md)."""
