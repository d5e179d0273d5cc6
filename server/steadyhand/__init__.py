"""Steadyhand: safe read/edit/write tools for AI coding agents, served over LSP."""

__version__ = "0.1.0"
