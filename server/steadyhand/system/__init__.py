"""The one place that chooses per operating system.

Every call that exists on one system and not another (how a file is opened without
following a link, how a file is replaced atomically, locks, where state and sockets live,
who is at the other end of a socket) is made here, behind a function that has the same
meaning on Linux, macOS and Windows. Nothing outside this package branches on
``sys.platform`` or reaches for a name only one system has.
"""
