"""``steadyhand demo``: a sample workspace (``workspace/``) driven through the real server."""
