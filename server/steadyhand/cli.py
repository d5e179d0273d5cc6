"""Command line: ``steadyhand serve``, ``steadyhand demo``, ``steadyhand --version``."""

from __future__ import annotations

import argparse
import gc
import logging
import sys

from steadyhand import __version__, allocator


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


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        _logging(args.log_level, args.log_file)
        allocator.tune()
        # Start-up makes tens of thousands of objects that live as long as the server. The
        # interpreter's own are set aside first, so that collections while importing do
        # not walk them again and again; what importing made is set aside at the end, so
        # that no later collection walks it either.
        gc.freeze()
        try:
            from steadyhand.server import create_server
            from steadyhand.transport import serve_stdio, serve_tcp

            ls = create_server()
        finally:
            gc.freeze()
        if args.tcp:
            serve_tcp(ls, args.host, args.port)
        else:
            serve_stdio(ls)
        return 0
    if args.command == "demo":
        from steadyhand.demo import run_demo

        return run_demo(keep=args.keep)
    _parser().print_help()
    return 2
