"""The workspace as a tree: walking a folder with the ignore files and deny rules
(``walk.py``, ``ignore.py``, ``repo.py``), searching the files' text (``grep.py``,
``search.py``), and the file types a search can be narrowed to (``filetypes.py``)."""
