"""Command line: ``steadyhand serve``, ``steadyhand demo``, ``steadyhand --version``."""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from steadyhand import __version__


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="steadyhand",
        description="Safe read/edit/write tools for AI coding agents, served over LSP.",
    )
    p.add_argument("--version", action="version", version=f"steadyhand {__version__}")
    sub = p.add_subparsers(dest="command")
    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="serve on stdin/stdout (default)")
    serve.add_argument("--tcp", action="store_true", help="serve on a TCP socket instead")
    serve.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    serve.add_argument("--log-file", help="write the log to this file as well as stderr")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])
    demo = sub.add_parser("demo", help="walk through read/edit/write against a sample workspace")
    demo.add_argument("--keep", action="store_true", help="keep the temporary workspace")
    return p


def _logging(level: str, log_file: str | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        handlers.append(logging.FileHandler(log_file))
    logging.basicConfig(
        level=getattr(logging, level),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
    )
    logging.getLogger("pygls").setLevel(max(logging.WARNING, getattr(logging, level)))


#: glibc's mallopt parameters
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def _tune_allocator() -> None:
    """Let glibc keep freed blocks of up to a few MB for reuse.

    Every edit of a file of a few hundred KB allocates several blocks that size (the
    bytes read, the text, the new text, the encoded bytes). By default each such block
    is a fresh ``mmap``, and touching its pages costs more than the work done in it:
    about 0.5 ms for an edit of a 650 KB file. Blocks under 8 MiB now come from the heap
    and are reused, and up to 32 MiB of free heap is kept rather than handed back.
    Elsewhere than glibc this does nothing.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt(_M_MMAP_THRESHOLD, 8 << 20)
    mallopt(_M_TRIM_THRESHOLD, 32 << 20)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        _logging(args.log_level, args.log_file)
        _tune_allocator()
        # Start-up makes tens of thousands of objects that live as long as the server. The
        # interpreter's own are set aside first, so that collections while importing do
        # not walk them again and again; what importing made is set aside at the end, so
        # that no later collection walks it either.
        gc.freeze()
        try:
            from steadyhand.server import create_server
            from steadyhand.transport import serve_stdio

            ls = create_server()
        finally:
            gc.freeze()
        if args.tcp:
            ls.start_tcp(args.host, args.port)
        else:
            serve_stdio(ls)
        return 0
    if args.command == "demo":
        from steadyhand.demo import run_demo

        return run_demo(keep=args.keep)
    _parser().print_help()
    return 2
