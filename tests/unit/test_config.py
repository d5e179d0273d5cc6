"""Settings: glob lists are checked when they load, so a typo never breaks the tools."""

from __future__ import annotations

import logging

import pytest

from steadyhand.config import DEFAULT_PROTECTED_GLOBS, Settings, settings_from
from steadyhand.paths.globs import invalid_glob, matches


def test_unusable_globs_are_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="steadyhand.config"):
        s = settings_from({"denyGlobs": ["*.pem", "[z-a]", "secrets/"], "protectedGlobs": [""]})
    assert s.deny_globs == ("*.pem", "secrets/")
    assert s.protected_globs == ()
    assert "'[z-a]'" in caplog.text and "denyGlobs" in caplog.text


def test_a_single_string_is_a_list_of_one() -> None:
    assert Settings().updated({"deny_globs": "[]x]"}).deny_globs == ("[]x]",)


def test_default_protected_globs_are_usable_and_cover_workspace_files() -> None:
    assert all(invalid_glob(p) is None for p in DEFAULT_PROTECTED_GLOBS)
    assert Settings().protected_globs == DEFAULT_PROTECTED_GLOBS
    for rel in ("a.code-workspace", "d/e/team.code-workspace"):
        assert any(matches(p, "/ws/" + rel, rel) for p in DEFAULT_PROTECTED_GLOBS), rel
