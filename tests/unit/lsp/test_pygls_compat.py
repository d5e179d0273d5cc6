"""The private pygls members Steadyhand uses exist in the pinned pygls, and only there."""

from __future__ import annotations

import tomllib
from pathlib import Path

from steadyhand.lsp import pygls_compat
from steadyhand.lsp.server import SteadyhandServer


def test_pygls_is_the_pinned_release() -> None:
    """A pygls upgrade must be checked against pygls_compat first: this fails loudly."""
    assert pygls_compat.pygls_version() == pygls_compat.PINNED_PYGLS, (
        f"pygls {pygls_compat.pygls_version()} is installed, but steadyhand.lsp.pygls_compat "
        f"was written for {pygls_compat.PINNED_PYGLS}: check every private member it uses."
    )
    project = tomllib.loads((Path(__file__).parents[3] / "pyproject.toml").read_text())
    assert f"pygls=={pygls_compat.PINNED_PYGLS}" in project["project"]["dependencies"]


def test_every_private_member_used_is_there() -> None:
    server = SteadyhandServer()
    assert pygls_compat.missing_members(server.protocol) == []
    assert hasattr(server, "_stop_event")
