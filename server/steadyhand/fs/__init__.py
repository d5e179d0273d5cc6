"""File I/O at the edge: safe opening, ranged reading, atomic writing."""
