"""The agent tools, one module each: read, edit, write, sessions."""
