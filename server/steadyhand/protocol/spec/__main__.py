"""``python -m steadyhand.protocol.spec --emit [--check] [--root DIR]``: write the files
made from the tool source (the VS Code extension's language-model tools, the docs' tool
tables), or with ``--check`` name those that differ and exit 1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from steadyhand.protocol.spec.emit import emit


def _root(start: Path) -> Path:
    for folder in (start, *start.parents):
        if (folder / "vscode-extension" / "package.json").exists():
            return folder
    raise SystemExit(f"No Steadyhand repository (vscode-extension/package.json) at {start}.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m steadyhand.protocol.spec")
    parser.add_argument("--emit", action="store_true", help="write the files made from it")
    parser.add_argument("--check", action="store_true", help="only name the files that differ")
    parser.add_argument("--root", type=Path, help="the repository (default: found from here)")
    args = parser.parse_args(argv)
    if not (args.emit or args.check):
        parser.error("pass --emit or --check")
    root = args.root or _root(Path.cwd())
    differ = emit(root, check=args.check)
    for rel in differ:
        print(f"{'differs' if args.check else 'wrote'}: {rel}")
    if args.check and differ:
        print("Run `make tool-schemas` to write them.", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
