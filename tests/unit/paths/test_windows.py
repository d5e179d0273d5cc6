"""Windows path rules, checked with ``ntpath`` semantics on any system.

The cases of the reference MCP filesystem server's tracker are among them: drive-letter
case (its issues 470, 1033, 1838, 1987), UNC shares (447, 3921), non-ASCII folder names
(3508), and an alternate data stream passing its confinement (pull request 4523).
"""

from __future__ import annotations

import ntpath
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from steadyhand.paths import windows
from steadyhand.paths.globs import first_match, relative_to, within
from steadyhand.paths.resolve import Roots, expand, names_folder
from steadyhand.protocol.errors import ErrorCode, ToolError

ROOTS = Roots(workspace=("C:\\Users\\Ana\\Proj",))
UNC_ROOTS = Roots(workspace=("\\\\fileserver\\team\\proj",))


def _expand(path: str, roots: Roots = ROOTS) -> str:
    return expand(path, roots, windows_rules=True)


def _refused(path: str, roots: Roots = ROOTS) -> ToolError:
    with pytest.raises(ToolError) as err:
        _expand(path, roots)
    assert err.value.code == ErrorCode.INVALID_PATH
    return err.value


# -- drive letters (the reference server's 470, 1033, 1838, 1987) ------------------------


@pytest.mark.parametrize(
    "given",
    [
        "C:\\Users\\Ana\\Proj\\a.txt",
        "c:\\Users\\Ana\\Proj\\a.txt",
        "c:/Users/Ana/Proj/a.txt",
        "C:/Users/Ana/Proj/./sub/../a.txt",
        "\\\\?\\C:\\Users\\Ana\\Proj\\a.txt",
        "\\\\?\\c:\\Users\\Ana\\Proj\\a.txt",
        "file:///c%3A/Users/Ana/Proj/a.txt",
        "file:///C:/Users/Ana/Proj/a.txt",
        "FILE:///c:/Users/Ana/Proj/a.txt",
        "file://localhost/c%3A/Users/Ana/Proj/a.txt",
        "a.txt",
        "sub\\..\\a.txt",
    ],
)
def test_every_spelling_of_a_drive_path_is_one_path(given: str) -> None:
    assert _expand(given) == "C:\\Users\\Ana\\Proj\\a.txt"


def test_drive_letter_case_never_takes_a_path_outside_or_inside() -> None:
    root = windows.normalize("c:\\Users\\Ana\\Proj")
    assert root == "C:\\Users\\Ana\\Proj"
    assert within(_expand("c:\\Users\\Ana\\Proj\\x.txt"), root, "\\")
    assert not within(_expand("C:\\Users\\Ana\\Project2\\x.txt"), root, "\\")
    assert not within(_expand("D:\\Users\\Ana\\Proj\\x.txt"), root, "\\")


@given(st.sampled_from(string.ascii_letters), st.lists(st.sampled_from(["a", "B", "é", "1"])))
def test_normalize_is_idempotent_and_upper_cases_the_drive(letter: str, names: list[str]) -> None:
    path = letter + ":\\" + "\\".join(names)
    once = windows.normalize(path)
    assert once[0] == letter.upper()
    assert windows.normalize(once) == once
    assert windows.key(path) == windows.key(path.swapcase()[0] + path[1:])


# -- UNC shares and long paths (the reference server's 447, 3921) ------------------------


@pytest.mark.parametrize(
    "given",
    [
        "\\\\fileserver\\team\\proj\\doc.md",
        "//fileserver/team/proj/doc.md",
        "\\\\?\\UNC\\fileserver\\team\\proj\\doc.md",
        "file://fileserver/team/proj/doc.md",
        "doc.md",
    ],
)
def test_a_unc_share_is_a_path_like_any_other(given: str) -> None:
    assert _expand(given, UNC_ROOTS) == "\\\\fileserver\\team\\proj\\doc.md"


def test_a_unc_path_is_inside_its_share_folder_only() -> None:
    root = UNC_ROOTS.workspace[0]
    assert within(_expand("\\\\fileserver\\team\\proj\\a", UNC_ROOTS), root, "\\")
    assert not within(_expand("\\\\fileserver\\team\\other\\a", UNC_ROOTS), root, "\\")
    assert not within(_expand("\\\\otherserver\\team\\proj\\a", UNC_ROOTS), root, "\\")
    assert relative_to("\\\\fileserver\\team\\proj\\x\\y.md", root, "\\") == "x\\y.md"


def test_a_server_without_a_share_and_the_device_namespace_are_refused() -> None:
    _refused("\\\\fileserver")
    for device in (
        "\\\\.\\PhysicalDrive0",
        "\\\\.\\pipe\\steadyhand",
        "\\\\?\\GLOBALROOT\\Device\\HarddiskVolume1\\x",
        "\\\\?\\Volume{0b8d7c3e-0000-0000-0000-100000000000}\\x",
        "\\??\\C:\\x",
    ):
        assert "device" in _refused(device).message, device


def test_a_path_relative_to_a_drive_is_refused() -> None:
    assert "drive" in _refused("C:a.txt").message
    assert "drive" in _refused("\\Users\\a.txt").message


# -- non-ASCII folder names (the reference server's 3508) -------------------------------


def test_non_ascii_folders_in_paths_and_uris() -> None:
    roots = Roots(workspace=("C:\\Users\\Zoë\\Документы\\項目",))
    want = "C:\\Users\\Zoë\\Документы\\項目\\é.txt"
    assert _expand("C:\\Users\\Zoë\\Документы\\項目\\é.txt", roots) == want
    uri = windows.path_to_uri(want)
    assert uri.startswith("file:///c%3A/Users/Zo%C3%AB/")
    assert windows.uri_to_path(uri) == want
    assert _expand(uri, roots) == want
    assert within(want, roots.workspace[0], "\\")


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs", "Cc"]), min_size=1))
def test_uri_round_trip(name: str) -> None:
    name = "".join(c for c in name if c not in '\\/:*?"<>|').strip(" .") or "x"
    path = "C:\\Users\\Ana\\" + name
    if windows.refusal(path) is not None:
        return
    assert windows.uri_to_path(windows.path_to_uri(path)) == windows.normalize(path)


# -- alternate data streams (the reference server's pull request 4523) --------------------


@pytest.mark.parametrize(
    "given",
    [
        "C:\\Users\\Ana\\Proj\\a.txt:secret",
        "C:\\Users\\Ana\\Proj\\a.txt::$DATA",
        "C:\\Users\\Ana\\Proj:stream",
        "C:\\Users\\Ana\\Proj:..\\..\\Other\\x.txt",
        "a.txt:hidden",
        "sub:x\\a.txt",
        "file:///c%3A/Users/Ana/Proj/a.txt%3Asecret",
    ],
)
def test_alternate_data_streams_are_refused(given: str) -> None:
    assert "alternate data stream" in _refused(given).message


# -- DOS device names, trailing dots and spaces, forbidden characters -------------------


@pytest.mark.parametrize(
    "name",
    [
        "CON",
        "con",
        "NUL",
        "nul.txt",
        "Nul.tar.gz",
        "COM1",
        "com9.log",
        "LPT1",
        "AUX",
        "PRN",
        "CONIN$",
        "COM¹",
        "NUL .txt",
    ],
)
def test_device_names_are_refused_with_any_extension(name: str) -> None:
    assert windows.device_name(name)
    assert "device name" in _refused(f"sub\\{name}").message


@pytest.mark.parametrize("name", ["CONSOLE", "nullable.txt", "COM10", "LPT", "con_fig", "aux1"])
def test_names_that_only_look_like_devices_are_fine(name: str) -> None:
    assert not windows.device_name(name)
    assert _expand(name).endswith("\\" + name)


@pytest.mark.parametrize("name", ["secrets.env.", "secrets.env ", "notes.txt. . ", "dir.\\a.txt"])
def test_trailing_dots_and_spaces_are_refused(name: str) -> None:
    assert "dot or a space" in _refused(name).message


@pytest.mark.parametrize("name", ["a<b", "a>b", 'a"b', "a|b", "a?b", "a*b", "a\x01b"])
def test_characters_windows_never_allows_are_refused(name: str) -> None:
    assert "characters" in _refused(name).message


# -- 8.3 short names --------------------------------------------------------------------


@pytest.mark.parametrize("name", ["PROGRA~1", "SECRET~1.ENV", "CREDEN~12.JSO", "A~1", "abcdef~9.t"])
def test_short_names_are_told(name: str) -> None:
    assert windows.looks_short(name)


@pytest.mark.parametrize(
    "name", ["secret.env", "a~b.txt", "abcdefgh~1", "x~1.json5", "~1", "a~.txt"]
)
def test_long_names_are_not_short(name: str) -> None:
    assert not windows.looks_short(name)


# -- globs see Windows paths with slashes, and ignore case there -------------------------


def test_globs_match_windows_paths_whatever_their_case() -> None:
    rel = relative_to("C:\\Users\\Ana\\Proj\\.Git\\config", "C:\\Users\\Ana\\Proj", "\\")
    posix = rel.replace("\\", "/")
    assert first_match([".git/**"], posix, posix) is None
    assert first_match([".git/**"], posix, posix, ignore_case=True) == ".git/**"
    assert first_match([".env"], "x/.ENV", "x/.ENV", ignore_case=True) == ".env"
    assert first_match(["*.PEM"], "k/id.pem", "k/id.pem", ignore_case=True) == "*.PEM"


@given(st.text(alphabet="abcABC./", min_size=1, max_size=12))
def test_ignore_case_matches_exactly_what_a_lower_cased_path_matches(path: str) -> None:
    patterns = ["*.env", "secrets/**", ".git/**", "a?c"]
    lowered = first_match(patterns, path.lower(), path.lower())
    assert first_match(patterns, path, path, ignore_case=True) == lowered


def test_key_ignores_case_and_separators() -> None:
    assert windows.key("C:\\Users\\ANA\\a.TXT") == windows.key("c:/users/ana/A.txt")
    assert windows.key("C:\\a") != windows.key("D:\\a")
    assert ntpath.normcase("C:\\A") == windows.key("c:/a")


def test_client_uris_name_windows_files() -> None:
    from steadyhand.paths.uris import local_path

    assert local_path("file:///c%3A/Users/Ana/a.txt", windows_rules=True) == "C:\\Users\\Ana\\a.txt"
    assert local_path("file://fileserver/team/x.md", windows_rules=True) == (
        "\\\\fileserver\\team\\x.md"
    )
    assert local_path("file:///c%3A/a.txt%00", windows_rules=True) is None
    assert local_path("https://example.com/a.txt", windows_rules=True) is None
    # the same URIs on POSIX: another host is no local file
    assert local_path("file://fileserver/team/x.md", windows_rules=False) is None


# -- a trailing separator names a folder -------------------------------------------------


@pytest.mark.parametrize(
    ("path", "folder"),
    [("C:\\Users\\Ana\\Proj\\a.txt\\", True), ("C:\\Users\\Ana\\Proj\\a.txt", False),
     ("C:/Users/Ana/Proj/a.txt/", True), ("C:\\Users\\Ana\\Proj\\src\\.", True),
     ("src\\", True), ("src\\a.txt", False), ("a.txt\\ ", True), ("src/sub\\", True),
     ("\\\\?\\C:\\Users\\Ana\\Proj\\a.txt\\", True), ("\\\\fileserver\\team\\proj\\x\\", True),
     ("C:\\", False), ("c:/", False), ("\\\\fileserver\\team\\", False), ("\\", False),
     (".\\", False), ("file:///c%3A/Users/Ana/Proj/a.txt/", True),
     ("file:///c%3A/Users/Ana/Proj/a.txt", False), ("file://fileserver/team/proj/x/", True)],
)  # fmt: skip
def test_a_trailing_backslash_names_a_folder(path: str, folder: bool) -> None:
    assert names_folder(path, windows_rules=True) is folder


@given(st.lists(st.text(alphabet="ab.", min_size=1, max_size=3), min_size=1, max_size=4))
def test_a_backslash_ends_a_name_as_a_slash_does(names: list[str]) -> None:
    posix = "/w/" + "/".join(names)
    windows_path = "C:\\w\\" + "\\".join(names)
    for end in ("", "/", "/."):
        assert names_folder(windows_path + end.replace("/", "\\"), windows_rules=True) is (
            names_folder(posix + end, windows_rules=False)
        )
    # a POSIX path: a backslash is part of a name there
    assert names_folder(posix + "\\", windows_rules=False) is False
