"""What each agent session knows about files: the file-state cache and the content store."""
