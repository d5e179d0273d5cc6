"""Every near-miss case, end to end through the real server over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.conftest import init_params, server_config
from tests.nearmiss.corpus import Case, Verdict, judge, load_cases, run_case

CASES = load_cases()


@pytest.fixture(scope="module")
def corpus_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("nearmiss")


@pytest_lsp.fixture(config=server_config(), scope="module")
async def corpus_client(lsp_client: LanguageClient, corpus_root: Path):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(init_params(corpus_root))
    yield
    await lsp_client.shutdown_session()


def test_corpus_is_large_and_varied() -> None:
    assert len(CASES) >= 120
    assert len({c.cls for c in CASES}) >= 10
    assert len({c.id for c in CASES}) == len(CASES)
    assert sum(not c.recoverable for c in CASES) >= 30


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
async def test_case(corpus_client: LanguageClient, corpus_root: Path, case: Case) -> None:
    out = await run_case(corpus_client, corpus_root, case)
    verdict = judge(case, out)
    expected = Verdict.RECOVERED if case.recoverable else Verdict.REFUSED
    assert verdict == expected, (
        f"{case.description}: {verdict}\nresult: {out.result}\nafter: {out.after!r}"
    )
    assert out.result["message"]
    if not case.recoverable and case.expect["error"] == "no_match":
        # The refusal shows where the closest text is, so a retry needs no read.
        assert "closest" in out.result["message"] or "not found" in out.result["message"]
