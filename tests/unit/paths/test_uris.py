"""``file:`` URIs from the client and from the agent mean the same: one naming another
host is no local file, on either side."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.documents.open_docs import uri_to_path
from steadyhand.paths.resolve import Roots, resolve
from steadyhand.paths.uris import local_path
from steadyhand.protocol.errors import ErrorCode, ToolError

HOST = st.text(
    st.characters(whitelist_categories=("Ll", "Lu", "Nd"), max_codepoint=127), max_size=8
)


def _agent_refuses(uri: str, ws: Path) -> bool:
    try:
        resolve(uri, Roots.of([str(ws)], (), ()))
    except ToolError as err:
        return err.code is ErrorCode.INVALID_PATH
    return False


@given(host=HOST)
def test_a_host_names_no_local_file_for_the_client_or_the_agent(host: str) -> None:
    ws = Path("/tmp")
    uri = f"file://{host}/tmp/x.txt"
    local = host in ("", "localhost")
    assert (local_path(uri) is not None) is local
    assert (uri_to_path(uri) is not None) is local
    assert _agent_refuses(uri, ws) is not local


@pytest.mark.parametrize(
    "uri",
    ["file://otherhost/tmp/x", "FILE://otherhost/tmp/x", "file:////server/share/x",
     "file://localhost:80/tmp/x", "file://user@localhost/tmp/x", "file:///tmp/a%00b"],
)  # fmt: skip
def test_uris_no_side_takes_as_local(uri: str) -> None:
    assert local_path(uri) is None
    assert _agent_refuses(uri, Path("/tmp"))


@pytest.mark.parametrize("uri", ["file:///tmp/x", "file://localhost/tmp/x", "FILE:///tmp/x"])
def test_uris_both_sides_take_as_local(uri: str) -> None:
    assert local_path(uri) == "/tmp/x"
    assert resolve(uri, Roots.of(["/tmp"], (), ())).path == "/tmp/x"
