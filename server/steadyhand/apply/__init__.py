"""How agent changes reach the world: atomic disk writes, or WorkspaceEdits to open buffers."""
