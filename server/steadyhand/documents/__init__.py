"""Where a file's current content comes from: the editor's open buffer, else the disk."""
