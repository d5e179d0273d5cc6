"""The syntax check of a change with tree-sitter: which grammar a file takes, the errors
a change introduces (never one the file had), and the trees kept to check quickly."""
