"""Text handling: encodings, line endings, matching, diffs and read output."""
