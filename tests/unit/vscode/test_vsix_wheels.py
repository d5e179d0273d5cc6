"""Which wheels fit each VS Code platform, and the check of a bundle.

The module under test is ``vscode-extension/scripts/vsix_wheels.py``.

Fast and offline: tag sets are computed with ``packaging`` and compared with pip's own view of the
``--platform`` values the build hands it; bundles are made of small wheels written here.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from packaging.tags import Tag, parse_tag

SCRIPT = Path(__file__).resolve().parents[3] / "vscode-extension" / "scripts" / "vsix_wheels.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vsix_wheels", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vsix_wheels"] = module
    spec.loader.exec_module(module)
    return module


vw = _load()

ALL = ("linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64")


def _fits(target: str, python: str, tag: str) -> bool:
    wanted: frozenset[Tag] = frozenset(parse_tag(tag))
    return bool(wanted & vw.interpreter_tags(vw.TARGETS[target], python))


def test_the_five_targets() -> None:
    assert tuple(vw.TARGETS) == ALL
    assert vw.REQUIRED_PYTHONS == ("3.11", "3.12", "3.13")
    assert vw.BUNDLED_PYTHONS[:3] == vw.REQUIRED_PYTHONS


@pytest.mark.parametrize(
    ("target", "python", "tag", "fits"),
    [
        # Windows: its own ABI, the stable ABI of an older CPython, pure wheels; nothing else
        ("win32-x64", "3.12", "cp312-cp312-win_amd64", True),
        ("win32-x64", "3.12", "cp311-cp311-win_amd64", False),
        ("win32-x64", "3.13", "cp310-abi3-win_amd64", True),
        ("win32-x64", "3.11", "py3-none-win_amd64", True),
        ("win32-x64", "3.11", "py3-none-any", True),
        ("win32-x64", "3.12", "cp312-cp312-win_arm64", False),
        ("win32-x64", "3.12", "cp312-cp312-manylinux_2_17_x86_64", False),
        # Linux: manylinux up to glibc 2.28 (VS Code's own floor), not newer, not musl
        ("linux-x64", "3.11", "cp311-cp311-manylinux_2_17_x86_64", True),
        ("linux-x64", "3.11", "cp311-cp311-manylinux_2_28_x86_64", True),
        ("linux-x64", "3.11", "cp311-cp311-manylinux1_x86_64", True),
        ("linux-x64", "3.11", "cp311-cp311-manylinux_2_31_x86_64", False),
        ("linux-x64", "3.11", "cp311-cp311-musllinux_1_2_x86_64", False),
        ("linux-x64", "3.11", "cp311-cp311-manylinux_2_17_aarch64", False),
        ("linux-arm64", "3.13", "cp313-cp313-manylinux_2_17_aarch64", True),
        ("linux-arm64", "3.13", "cp39-abi3-manylinux2014_aarch64", True),
        ("linux-arm64", "3.13", "cp313-cp313-manylinux_2_17_x86_64", False),
        # macOS on Apple silicon: arm64 from 11.0 and universal2; not Intel-only, not newer
        ("darwin-arm64", "3.12", "cp312-cp312-macosx_11_0_arm64", True),
        ("darwin-arm64", "3.12", "cp312-cp312-macosx_10_9_universal2", True),
        ("darwin-arm64", "3.12", "cp312-cp312-macosx_10_9_x86_64", False),
        ("darwin-arm64", "3.12", "cp312-cp312-macosx_14_0_arm64", False),
        # macOS on Intel: x86_64 and universal2 up to 10.15, the oldest VS Code 1.95 runs on
        ("darwin-x64", "3.11", "cp311-cp311-macosx_10_15_x86_64", True),
        ("darwin-x64", "3.11", "cp311-cp311-macosx_10_9_universal2", True),
        ("darwin-x64", "3.11", "cp311-cp311-macosx_11_0_x86_64", False),
        ("darwin-x64", "3.11", "cp311-cp311-macosx_11_0_arm64", False),
    ],
)
def test_which_wheels_an_interpreter_installs(
    target: str, python: str, tag: str, fits: bool
) -> None:
    assert _fits(target, python, tag) is fits


@pytest.mark.parametrize("target", ALL)
@pytest.mark.parametrize("python", ["3.11", "3.12", "3.13"])
def test_pip_downloads_what_the_check_accepts(target: str, python: str) -> None:
    """pip widens the --platform values the build gives it to exactly the check's tag set."""
    from pip._internal.utils.compatibility_tags import get_supported

    t = vw.TARGETS[target]
    version = python.replace(".", "")
    pip_tags = get_supported(
        version=version, platforms=list(t.pip_platforms), impl="cp", abis=[f"cp{version}"]
    )
    # pip's vendored Tag is another class: compare the tags as text
    assert {str(tag) for tag in pip_tags} == {str(tag) for tag in vw.interpreter_tags(t, python)}


def test_pip_gets_every_glibc_and_one_macos_tag() -> None:
    linux = vw.TARGETS["linux-x64"].pip_platforms
    assert linux[0] == "manylinux_2_28_x86_64"
    assert {"manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux1_x86_64"} <= set(linux)
    assert vw.TARGETS["darwin-arm64"].pip_platforms == ("macosx_11_0_arm64",)
    assert vw.TARGETS["darwin-x64"].pip_platforms == ("macosx_10_15_x86_64",)
    assert vw.TARGETS["win32-x64"].pip_platforms == ("win_amd64",)


def test_host_targets() -> None:
    assert vw.host_target("Linux", "x86_64") == "linux-x64"
    assert vw.host_target("Linux", "aarch64") == "linux-arm64"
    assert vw.host_target("Darwin", "arm64") == "darwin-arm64"
    assert vw.host_target("Darwin", "x86_64") == "darwin-x64"
    assert vw.host_target("Windows", "AMD64") == "win32-x64"
    assert vw.host_target("Windows", "ARM64") is None


def test_marker_environments() -> None:
    win = vw.marker_environment(vw.TARGETS["win32-x64"], "3.12")
    assert (win["sys_platform"], win["os_name"], win["platform_system"]) == (
        "win32",
        "nt",
        "Windows",
    )
    mac = vw.marker_environment(vw.TARGETS["darwin-arm64"], "3.13")
    assert (mac["sys_platform"], mac["platform_machine"], mac["python_version"]) == (
        "darwin",
        "arm64",
        "3.13",
    )


# --- bundles made of small wheels -----------------------------------------------------------


def _wheel(folder: Path, filename: str, requires: list[str]) -> None:
    name, version = filename.split("-")[:2]
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    with zipfile.ZipFile(folder / filename, "w") as z:
        z.writestr(f"{name}-{version}.dist-info/METADATA", "\n".join(lines) + "\n")
        z.writestr(f"{name}/__init__.py", "")


def _bundle(tmp_path: Path, wheels: dict[str, list[str]]) -> Path:
    bundled = tmp_path / "bundled"
    (bundled / "wheels").mkdir(parents=True)
    for filename, requires in wheels.items():
        _wheel(bundled / "wheels", filename, requires)
    manifest = {"requirement": "app==1.0", "wheels": sorted(wheels)}
    (bundled / "manifest.json").write_text(json.dumps(manifest))
    return bundled


def _vsix(tmp_path: Path, bundled: Path) -> Path:
    vsix = tmp_path / "app.vsix"
    with zipfile.ZipFile(vsix, "w") as z:
        z.write(bundled / "manifest.json", "extension/bundled/manifest.json")
        for w in (bundled / "wheels").iterdir():
            z.write(w, f"extension/bundled/wheels/{w.name}")
    return vsix


APP = [
    "fast>=2",
    "winonly; sys_platform == 'win32'",
    "backport; python_version < '3.12'",
    "docs; extra == 'doc'",
]


def test_a_complete_bundle_installs_for_each_version(tmp_path: Path) -> None:
    bundled = _bundle(
        tmp_path,
        {
            "app-1.0-py3-none-any.whl": APP,
            "fast-2.1-cp311-cp311-win_amd64.whl": ["pure"],
            "fast-2.1-cp312-cp312-win_amd64.whl": ["pure"],
            "fast-2.1-cp313-cp313-win_amd64.whl": ["pure"],
            "pure-1.0-py3-none-any.whl": [],
            "winonly-3.0-cp39-abi3-win_amd64.whl": [],
            "backport-1.0-py3-none-any.whl": [],
        },
    )
    for bundle in (vw.Bundle.from_dir(bundled), vw.Bundle.from_vsix(_vsix(tmp_path, bundled))):
        report = vw.check_bundle(bundle, ["win32-x64"], ["3.11", "3.12", "3.13"])
        assert report.problems() == []
        assert report.compiled["win32-x64"]["3.11"] == [
            "fast-2.1-cp311-cp311-win_amd64.whl",
            "winonly-3.0-cp39-abi3-win_amd64.whl",
        ]
        chosen, _ = vw.resolve(bundle, vw.TARGETS["win32-x64"], "3.12")
        assert sorted(chosen) == ["app", "fast", "pure", "winonly"]


def test_a_missing_version_a_foreign_wheel_and_a_marker_pip_would_miss(tmp_path: Path) -> None:
    bundled = _bundle(
        tmp_path,
        {
            "app-1.0-py3-none-any.whl": APP,
            "fast-2.1-cp311-cp311-win_amd64.whl": ["pure"],
            "fast-2.1-cp312-cp312-win_amd64.whl": ["pure"],
            "fast-2.1-cp313-cp313-manylinux_2_17_x86_64.whl": ["pure"],
            "pure-1.0-py3-none-any.whl": [],
            "backport-1.0-py3-none-any.whl": [],
        },
    )
    report = vw.check_bundle(vw.Bundle.from_dir(bundled), ["win32-x64"], ["3.11", "3.12", "3.13"])
    problems = report.problems()
    assert (
        "fast-2.1-cp313-cp313-manylinux_2_17_x86_64.whl: installs on none of the bundle's platforms"
        in problems
    )
    assert (
        "win32-x64, CPython 3.13: no wheel of fast>=2 (needed by app 1.0) installs here" in problems
    )
    # the Windows-only dependency is needed on Windows, for every version
    for python in ("3.11", "3.12", "3.13"):
        assert (
            f'win32-x64, CPython {python}: no wheel of winonly; sys_platform == "win32" '
            "(needed by app 1.0) installs here"
        ) in problems
    assert len(problems) == 5
    # on Linux the same bundle lacks no Windows-only wheel, but has no fast wheel for 3.11/3.12
    linux = vw.check_bundle(vw.Bundle.from_dir(bundled), ["linux-x64"], ["3.11", "3.12", "3.13"])
    assert linux.missing["linux-x64"]["3.13"] == []
    assert linux.missing["linux-x64"]["3.11"] == [
        "no wheel of fast>=2 (needed by app 1.0) installs here"
    ]


def test_a_version_conflict_is_reported(tmp_path: Path) -> None:
    bundled = _bundle(
        tmp_path,
        {
            "app-1.0-py3-none-any.whl": ["pure>=1", "other"],
            "other-1.0-py3-none-any.whl": ["pure<1"],
            "pure-1.0-py3-none-any.whl": [],
        },
    )
    report = vw.check_bundle(vw.Bundle.from_dir(bundled), ["linux-arm64"], ["3.12"])
    assert report.missing["linux-arm64"]["3.12"] == [
        "pure-1.0-py3-none-any.whl does not satisfy pure<1 (needed by other 1.0)"
    ]


def test_the_newest_fitting_wheel_is_taken(tmp_path: Path) -> None:
    bundled = _bundle(
        tmp_path,
        {
            "app-1.0-py3-none-any.whl": ["fast"],
            "fast-2.0-cp312-cp312-macosx_11_0_arm64.whl": [],
            "fast-3.0-cp312-cp312-macosx_11_0_arm64.whl": [],
            "fast-4.0-cp312-cp312-macosx_14_0_arm64.whl": [],
        },
    )
    chosen, problems = vw.resolve(vw.Bundle.from_dir(bundled), vw.TARGETS["darwin-arm64"], "3.12")
    assert problems == []
    assert chosen["fast"].filename == "fast-3.0-cp312-cp312-macosx_11_0_arm64.whl"


def test_the_command_line_fails_on_a_required_version_only(tmp_path: Path) -> None:
    bundled = _bundle(
        tmp_path,
        {
            "app-1.0-py3-none-any.whl": ["fast"],
            "fast-2.1-cp311-cp311-win_amd64.whl": [],
            "fast-2.1-cp312-cp312-win_amd64.whl": [],
            "fast-2.1-cp313-cp313-win_amd64.whl": [],
        },
    )
    # 3.14 is missing: reported, not a failure
    assert vw.main(["check", str(bundled), "--target", "win32-x64"]) == 0
    assert vw.main(["check", str(bundled), "--target", "win32-x64", "--require", "3.14"]) == 1
    assert vw.main(["check", str(bundled), "--target", "darwin-x64"]) == 1
