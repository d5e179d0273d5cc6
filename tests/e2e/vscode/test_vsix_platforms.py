"""The platform VSIXes: built by ``scripts/build-vsix.sh``, opened as the zip files they are, and
checked wheel by wheel against the platform they are for.

By default one platform other than this machine's is built (``win32-x64``, or ``linux-x64`` on
Windows), which proves the mechanism: every wheel in it comes from ``pip download --platform``
for that platform, none from this machine's Python. ``STEADYHAND_VSIX_TARGETS`` names others
(``all`` for the five); ``STEADYHAND_VSIX_DIR`` checks the VSIXes already in a folder (say after
``make vsix``) instead of building. Building needs node, npm and the package index; without them
the test skips, except under CI=true.

For each VSIX: the manifest VS Code reads names its platform; for CPython 3.11, 3.12 and 3.13 the
server's whole dependency tree (markers evaluated for that platform) has a wheel there that such
an interpreter installs, the compiled ones tagged for the platform (their own CPython ABI, or
the stable ABI); no wheel belongs to another platform.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.timeout(1800)

REPO = Path(__file__).resolve().parents[3]
EXT = REPO / "vscode-extension"
IN_CI = os.environ.get("CI", "").lower() == "true"
ALL_TARGETS = ("linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64", "win32-x64")
NETWORK = re.compile(
    r"NewConnectionError|Network is unreachable|Temporary failure in name resolution|"
    r"No matching distribution found for pip|ProxyError|ConnectTimeout"
)


def _load_wheels_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vsix_wheels", EXT / "scripts" / "vsix_wheels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vsix_wheels"] = module
    spec.loader.exec_module(module)
    return module


vw = _load_wheels_module()


def _unavailable(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true and the VSIX platform test cannot run: {reason}")
    pytest.skip(reason)


def _targets() -> list[str]:
    wanted = os.environ.get("STEADYHAND_VSIX_TARGETS", "").split()
    if wanted == ["all"]:
        return list(ALL_TARGETS)
    if wanted:
        return wanted
    return ["linux-x64" if sys.platform == "win32" else "win32-x64"]


def _compiled_dependencies() -> set[str]:
    """The server's dependencies that hold compiled code (their wheels are per platform):
    named here rather than by leaving the pure ones out, so that a new pure dependency
    is not taken for a compiled one."""
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {re.split(r"[<>=!~;\[ ]", d, maxsplit=1)[0].lower() for d in deps}
    compiled = {n for n in names if n.startswith("tree-sitter")} | (
        names & {"xxhash", "orjson", "pillow", "watchdog", "ripgrep"}
    )
    assert {
        "xxhash",
        "orjson",
        "pillow",
        "watchdog",
        "tree-sitter",
        "tree-sitter-python",
    } <= compiled
    return compiled


@pytest.fixture(scope="module")
def vsixes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    prebuilt = os.environ.get("STEADYHAND_VSIX_DIR")
    if prebuilt:
        found: dict[str, Path] = {}
        for vsix in sorted(Path(prebuilt).glob("steadyhand-*.vsix")):
            m = re.match(r"steadyhand-(.+)-\d+\.\d+\.\d+.*\.vsix$", vsix.name)
            if m and m.group(1) in ALL_TARGETS:
                found[m.group(1)] = vsix
        assert found, f"no steadyhand-<platform>-<version>.vsix in {prebuilt}"
        return found
    if not shutil.which("npm") or not shutil.which("node"):
        _unavailable("node and npm are needed to build the extension")
    out = tmp_path_factory.mktemp("vsix")
    targets = _targets()
    args = [a for t in targets for a in ("--target", t)]
    build = subprocess.run(
        ["bash", str(EXT / "scripts" / "build-vsix.sh"), *args, "--out-dir", str(out)],
        env={**os.environ, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=1500,
        check=False,
    )
    if build.returncode != 0 and NETWORK.search(build.stderr):
        _unavailable(f"the package index cannot be reached:\n{build.stderr[-2000:]}")
    assert build.returncode == 0, f"build-vsix.sh failed:\n{build.stderr[-4000:]}"
    built = {t: out / f"steadyhand-{t}-0.1.0.vsix" for t in targets}
    for t, vsix in built.items():
        assert vsix.is_file(), f"no VSIX for {t} in {sorted(p.name for p in out.iterdir())}"
    return built


def _abi_covers(tags: frozenset[object], python: str) -> bool:
    """A compiled wheel for CPython ``python``: its own ABI, or the stable ABI of no newer one."""
    minor = int(python.split(".")[1])
    for tag in tags:
        interpreter, abi = str(tag).split("-")[:2]
        if abi == f"cp3{minor}":
            return True
        if abi == "abi3" and interpreter.startswith("cp3") and int(interpreter[3:]) <= minor:
            return True
        if abi == "none" and interpreter in ("py3", f"cp3{minor}", f"py3{minor}"):
            return True
    return False


def test_each_vsix_carries_its_own_platform_wheels(vsixes: dict[str, Path]) -> None:
    compiled_deps = _compiled_dependencies()
    for target, vsix in vsixes.items():
        t = vw.TARGETS[target]
        with zipfile.ZipFile(vsix) as archive:
            vsix_manifest = archive.read("extension.vsixmanifest").decode()
            manifest = json.loads(archive.read("extension/bundled/manifest.json"))
            packaged = {
                n.rsplit("/", 1)[1]
                for n in archive.namelist()
                if n.startswith("extension/bundled/wheels/") and n.endswith(".whl")
            }
        assert f'TargetPlatform="{target}"' in vsix_manifest, target
        assert manifest["targets"] == [target]
        assert {"3.11", "3.12", "3.13"} <= set(manifest["pythonVersions"])
        assert sorted(manifest["wheels"]) == sorted(packaged)

        bundle = vw.Bundle.from_vsix(vsix)
        report = vw.check_bundle(bundle, [target])
        assert report.problems() == [], f"{target}:\n" + "\n".join(report.problems())
        assert report.foreign == []

        for wheel in bundle.wheels:
            if wheel.compiled:
                platforms = {tag.platform for tag in wheel.tags}
                assert platforms & set(t.platforms), f"{target}: {wheel.filename}"
        for python in ("3.11", "3.12", "3.13"):
            chosen, problems = vw.resolve(bundle, t, python)
            assert problems == []
            missing = compiled_deps - set(chosen)
            assert not missing, f"{target}, CPython {python}: no wheel of {sorted(missing)}"
            for name in sorted(compiled_deps):
                wheel = chosen[name]
                assert wheel.compiled, (
                    f"{target}, CPython {python}: {wheel.filename} is not per platform"
                )
                assert _abi_covers(wheel.tags, python), (
                    f"{target}, CPython {python}: {wheel.filename}"
                )
