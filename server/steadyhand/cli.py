"""Command line: ``steadyhand serve``, ``steadyhand mcp``, ``steadyhand demo``,
``steadyhand --version``."""

from __future__ import annotations

import argparse
import logging
import sys

from steadyhand import __version__
from steadyhand.runtime import allocator, collector


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
    mcp = sub.add_parser(
        "mcp",
        help="run as an MCP server on stdio (attached to a running editor when there is one)",
        description="Serve Steadyhand's file tools over MCP (stdio). Roots: the ROOT "
        "arguments, else the client's roots, else the current folder. See docs/mcp.md.",
    )
    mcp.add_argument("roots", nargs="*", metavar="ROOT", help="folders the tools may work in")
    mcp.add_argument("--config", metavar="FILE", help="JSON settings (the LSP settings' keys)")
    mcp.add_argument(
        "--attach",
        choices=["auto", "require", "never"],
        default="auto",
        help="use the Steadyhand server of a running editor that holds the root: when there "
        "is one (auto, the default), always (require: fail without one), or never",
    )
    mcp.add_argument("--log-file", help="write the log to this file as well as stderr")
    mcp.add_argument(
        "--log-level", default="WARNING", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
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
        # Start-up makes tens of thousands of objects that live as long as the server: no
        # collection walks all of them while they are made, nor any later
        # (runtime/collector.py).
        collector.hold()
        try:
            from steadyhand.lsp.server import create_server
            from steadyhand.lsp.transport import serve_stdio, serve_tcp

            ls = create_server()
        finally:
            collector.release()
        if args.tcp:
            serve_tcp(ls, args.host, args.port)
        else:
            serve_stdio(ls)
        return 0
    if args.command == "mcp":
        return _mcp(args)
    if args.command == "demo":
        from steadyhand.demo.run import run_demo

        return run_demo(keep=args.keep)
    _parser().print_help()
    return 2


def _mcp(args: argparse.Namespace) -> int:
    import os

    _logging(args.log_level, args.log_file)
    allocator.tune()
    collector.hold()  # as for serve
    try:
        from steadyhand.config import Settings
        from steadyhand.mcp.server import ConfigError, Options, load_config, serve
    finally:
        collector.release()
    try:
        settings, warnings = load_config(args.config) if args.config else (Settings(), [])
    except ConfigError as exc:
        print(f"steadyhand mcp: {exc}", file=sys.stderr)
        return 2
    for warning in warnings:
        print(f"steadyhand mcp: warning: {warning}", file=sys.stderr)
    roots = []
    for root in args.roots:
        path = os.path.abspath(os.path.expanduser(root))
        if not os.path.isdir(path):
            print(f"steadyhand mcp: {root} is not a folder", file=sys.stderr)
            return 2
        roots.append(path)
    return serve(Options(roots=roots, settings=settings, attach=args.attach))
