"""The LSP edge: the server's wiring (``server.py``), the transport and its frame parser,
the direct lane for Steadyhand's commands, and every private member of pygls it uses."""
