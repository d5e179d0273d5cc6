"""File history: every version Steadyhand replaces, for undo, checkpoints and rewind."""
