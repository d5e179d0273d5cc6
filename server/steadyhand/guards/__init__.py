"""Guard rails: read-only sessions, protected paths, and credentials in new text."""
