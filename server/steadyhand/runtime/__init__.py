"""The process's plumbing, shared by every face: asyncio helpers (``tasks.py``), JSON
(``wire.py``), the allocator (``allocator.py``) and the pipes of stdio (``pipes.py``)."""
