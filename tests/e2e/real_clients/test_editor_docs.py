"""The editor docs cite only files that exist: every relative link, and every repository path
in backticks (``tests/…``, ``editors/…``, ``docs/…``, ``server/…``), in docs/editors.md and
the Neovim plugin's README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.real_clients.harness import EDITORS_DOC, HERE

ROOT = HERE.parents[2]
DOCS = [EDITORS_DOC, ROOT / "editors" / "nvim" / "README.md"]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
CITED = re.compile(r"`((?:tests|editors|docs|server)/[A-Za-z0-9_./-]*)`")


def cited(doc: Path) -> list[Path]:
    text = doc.read_text()
    paths = [doc.parent / m for m in LINK.findall(text) if "://" not in m]
    paths += [ROOT / m for m in CITED.findall(text)]
    return paths


@pytest.mark.parametrize("doc", DOCS, ids=lambda d: str(d.relative_to(ROOT)))
def test_every_path_the_doc_cites_exists(doc: Path) -> None:
    paths = cited(doc)
    assert paths, f"{doc} cites no path: the patterns no longer match it"
    missing = [str(p) for p in paths if not p.exists()]
    assert not missing, missing


def test_the_check_finds_a_missing_path(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("See `tests/real_clients/test_nvim_plugin.py` and [x](nowhere.md#a).\n")
    assert [p.exists() for p in cited(doc)] == [False, False]
