"""The workspace as a tree: walking a folder with the ignore files and deny rules
(``walk.py``, ``ignore.py``), and searching the files' text (``grep.py``, ``rg.py``)."""
