"""Which wheels a platform-specific VSIX carries, and the check that it carries the right ones.

Used by ``build-vsix.sh`` (``pip-platforms``: the ``--platform`` values handed to ``pip download``
for a VS Code target; ``check``: after the wheels are in ``bundled/``) and by the tests, which
open built VSIXes (zip files) with ``check_bundle``.

A VSIX for one VS Code target (``linux-x64``, ``linux-arm64``, ``darwin-x64``, ``darwin-arm64``,
``win32-x64``) must let the server install offline for CPython 3.11 to 3.13 there: for each of
those versions, every requirement of the server, followed through the dependencies' own
requirements (their environment markers evaluated for that system and version, which
``pip download`` does not do: it evaluates markers for the machine that builds), has a wheel
in the bundle that such an interpreter installs. Wheels that no interpreter on the target would
install (another platform's) are reported as well. CPython 3.14 is bundled when its wheels exist;
the extension falls back to the package index for what is missing.

Standard library only, plus ``packaging`` (pip's own copy when it is not installed).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import sys
import zipfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING or importlib.util.find_spec("packaging") is not None:
    from packaging import tags as _tags
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name, parse_wheel_filename
    from packaging.version import Version
else:  # the build machine's Python without packaging: pip's own copy
    from pip._vendor.packaging import tags as _tags
    from pip._vendor.packaging.requirements import InvalidRequirement, Requirement
    from pip._vendor.packaging.utils import canonicalize_name, parse_wheel_filename
    from pip._vendor.packaging.version import Version

#: Python versions every platform VSIX must install offline.
REQUIRED_PYTHONS: tuple[str, ...] = ("3.11", "3.12", "3.13")
#: Python versions the build asks wheels for (the last one when they exist).
BUNDLED_PYTHONS: tuple[str, ...] = (*REQUIRED_PYTHONS, "3.14")

#: The oldest glibc VS Code itself runs on (its Linux builds need 2.28).
GLIBC = (2, 28)
#: The oldest macOS the VS Code releases the extension supports run on (1.95: 10.15 on Intel).
MACOS_X64 = (10, 15)
MACOS_ARM64 = (11, 0)


def _manylinux(arch: str) -> tuple[str, ...]:
    """Platform tags a glibc-2.28 Linux on ``arch`` installs, newest first (PEPs 600, 599, 571)."""
    out = [f"manylinux_{GLIBC[0]}_{minor}_{arch}" for minor in range(GLIBC[1], 16, -1)]
    out.append(f"manylinux2014_{arch}")
    if arch in ("x86_64", "i686"):
        out += [f"manylinux_2_{minor}_{arch}" for minor in range(16, 4, -1)]
        out += [f"manylinux2010_{arch}", f"manylinux1_{arch}"]
    return tuple(out)


@dataclass(frozen=True)
class Target:
    """A VS Code platform and what its Python reports and installs."""

    name: str
    sys_platform: str
    platform_system: str
    platform_machine: str
    #: Wheel platform tags an interpreter there installs, most specific first.
    platforms: tuple[str, ...]

    @property
    def pip_platforms(self) -> tuple[str, ...]:
        """The ``--platform`` values for ``pip download``.

        pip widens a macOS tag to the older releases and other binary formats itself (as
        ``mac_platforms`` does), but not a manylinux one.
        """
        return self.platforms[:1] if self.sys_platform == "darwin" else self.platforms


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target("linux-x64", "linux", "Linux", "x86_64", _manylinux("x86_64")),
        Target("linux-arm64", "linux", "Linux", "aarch64", _manylinux("aarch64")),
        Target(
            "darwin-x64",
            "darwin",
            "Darwin",
            "x86_64",
            tuple(_tags.mac_platforms(MACOS_X64, "x86_64")),
        ),
        Target(
            "darwin-arm64",
            "darwin",
            "Darwin",
            "arm64",
            tuple(_tags.mac_platforms(MACOS_ARM64, "arm64")),
        ),
        Target("win32-x64", "win32", "Windows", "AMD64", ("win_amd64",)),
    )
}


def target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise SystemExit(f"unknown target {name!r} (one of: {', '.join(TARGETS)})") from None


def _version_tuple(python: str) -> tuple[int, int]:
    major, minor = python.split(".")[:2]
    return int(major), int(minor)


def interpreter_tags(t: Target, python: str) -> frozenset[_tags.Tag]:
    """Every wheel tag CPython ``python`` (``"3.12"``) on ``t`` installs."""
    version = _version_tuple(python)
    abi = f"cp{version[0]}{version[1]}"
    found = set(_tags.cpython_tags(version, abis=[abi], platforms=t.platforms))
    found |= set(_tags.compatible_tags(version, interpreter=abi, platforms=t.platforms))
    return frozenset(found)


def marker_environment(t: Target, python: str) -> dict[str, str]:
    """The values of PEP 508 environment markers for CPython ``python`` on ``t``."""
    return {
        "implementation_name": "cpython",
        "implementation_version": f"{python}.0",
        "os_name": "nt" if t.sys_platform == "win32" else "posix",
        "platform_machine": t.platform_machine,
        "platform_python_implementation": "CPython",
        "platform_release": "",
        "platform_system": t.platform_system,
        "platform_version": "",
        "python_full_version": f"{python}.0",
        "python_version": python,
        "sys_platform": t.sys_platform,
        "extra": "",
    }


@dataclass(frozen=True)
class Wheel:
    filename: str
    name: str
    version: Version
    tags: frozenset[_tags.Tag]

    @property
    def compiled(self) -> bool:
        """Whether the wheel holds code for one platform (not ``none-any``)."""
        return any(tag.platform != "any" for tag in self.tags)


def parse_wheel(filename: str) -> Wheel:
    name, version, _build, wheel_tags = parse_wheel_filename(filename)
    return Wheel(filename, str(name), version, frozenset(wheel_tags))


def _requires_dist(metadata: str) -> list[str]:
    return HeaderParser().parsestr(metadata).get_all("Requires-Dist") or []


@dataclass
class Bundle:
    """The wheels of a bundle, and a way to read each one's METADATA."""

    wheels: list[Wheel]
    read_metadata: Callable[[str], str]
    requirement: str

    @classmethod
    def from_dir(cls, bundled: Path) -> Bundle:
        """``bundled/`` as the build leaves it (``manifest.json`` and ``wheels/``)."""
        manifest = json.loads((bundled / "manifest.json").read_text())
        wheels_dir = bundled / "wheels"

        def read(filename: str) -> str:
            return _wheel_metadata(zipfile.ZipFile(wheels_dir / filename))

        names = sorted(p.name for p in wheels_dir.glob("*.whl"))
        return cls([parse_wheel(n) for n in names], read, str(manifest["requirement"]))

    @classmethod
    def from_vsix(cls, vsix: Path) -> Bundle:
        """The bundle inside a built VSIX (``extension/bundled/``)."""
        archive = zipfile.ZipFile(vsix)
        prefix = "extension/bundled/wheels/"
        manifest = json.loads(archive.read("extension/bundled/manifest.json"))
        names = sorted(
            n[len(prefix) :]
            for n in archive.namelist()
            if n.startswith(prefix) and n.endswith(".whl") and "/" not in n[len(prefix) :]
        )

        def read(filename: str) -> str:
            inner = zipfile.ZipFile(io.BytesIO(archive.read(prefix + filename)))
            return _wheel_metadata(inner)

        return cls([parse_wheel(n) for n in names], read, str(manifest["requirement"]))


def _wheel_metadata(wheel: zipfile.ZipFile) -> str:
    for n in wheel.namelist():
        parts = n.split("/")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
            return wheel.read(n).decode("utf-8")
    raise ValueError(f"{wheel.filename}: no .dist-info/METADATA")


def resolve(bundle: Bundle, t: Target, python: str) -> tuple[dict[str, Wheel], list[str]]:
    """The wheels an offline install for CPython ``python`` on ``t`` takes, and what is missing.

    Follows the requirements from the server's down, with their markers evaluated for that
    interpreter, taking for each distribution the newest bundled wheel it installs, as pip does.
    """
    supported = interpreter_tags(t, python)
    env = marker_environment(t, python)
    metadata_cache: dict[str, list[str]] = {}
    chosen: dict[str, Wheel] = {}
    problems: list[str] = []
    todo: list[tuple[Requirement, str]] = [(Requirement(bundle.requirement), "the extension")]
    while todo:
        req, wanted_by = todo.pop(0)
        if req.marker is not None and not req.marker.evaluate(env):
            continue
        name = canonicalize_name(req.name)
        if name in chosen:
            have = chosen[name]
            if not req.specifier.contains(have.version, prereleases=True):
                problems.append(f"{have.filename} does not satisfy {req} (needed by {wanted_by})")
            continue
        fits = [
            w
            for w in bundle.wheels
            if canonicalize_name(w.name) == name
            and req.specifier.contains(w.version, prereleases=True)
            and w.tags & supported
        ]
        if not fits:
            problems.append(f"no wheel of {req} (needed by {wanted_by}) installs here")
            continue
        best = max(fits, key=lambda w: w.version)
        chosen[name] = best
        if best.filename not in metadata_cache:
            metadata_cache[best.filename] = _requires_dist(bundle.read_metadata(best.filename))
        for line in metadata_cache[best.filename]:
            try:
                todo.append((Requirement(line), f"{best.name} {best.version}"))
            except InvalidRequirement as err:
                problems.append(f"{best.filename}: unreadable requirement {line!r}: {err}")
    return chosen, problems


@dataclass
class Report:
    """What a bundle offers each target: per Python version, what is missing (empty: installs)."""

    missing: dict[str, dict[str, list[str]]]
    #: Wheels no interpreter of the bundle's targets installs.
    foreign: list[str]
    #: Per target: the compiled wheels an install takes, with their tags.
    compiled: dict[str, dict[str, list[str]]]

    def problems(self, required: Iterable[str] = REQUIRED_PYTHONS) -> list[str]:
        out = [f"{w}: installs on none of the bundle's platforms" for w in self.foreign]
        for tname, per_version in self.missing.items():
            for python in required:
                for p in per_version.get(python, [f"CPython {python} was not checked"]):
                    out.append(f"{tname}, CPython {python}: {p}")
        return out


def check_bundle(
    bundle: Bundle,
    targets: Sequence[str],
    pythons: Sequence[str] = BUNDLED_PYTHONS,
) -> Report:
    resolved = [target(n) for n in targets]
    missing: dict[str, dict[str, list[str]]] = {}
    compiled: dict[str, dict[str, list[str]]] = {}
    for t in resolved:
        missing[t.name] = {}
        compiled[t.name] = {}
        for python in pythons:
            chosen, problems = resolve(bundle, t, python)
            missing[t.name][python] = problems
            compiled[t.name][python] = sorted(w.filename for w in chosen.values() if w.compiled)
    every = frozenset().union(*(interpreter_tags(t, p) for t in resolved for p in pythons))
    foreign = [w.filename for w in bundle.wheels if not w.tags & every]
    return Report(missing, foreign, compiled)


def host_target(system: str, machine: str) -> str | None:
    """The VS Code target of a machine (``platform.system()``, ``platform.machine()``)."""
    table: Mapping[tuple[str, str], str] = {
        ("Linux", "x86_64"): "linux-x64",
        ("Linux", "aarch64"): "linux-arm64",
        ("Darwin", "x86_64"): "darwin-x64",
        ("Darwin", "arm64"): "darwin-arm64",
        ("Windows", "AMD64"): "win32-x64",
    }
    return table.get((system, machine))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("targets", help="the VS Code targets, one per line")
    plat = sub.add_parser(
        "pip-platforms", help="the --platform values of pip download for a target"
    )
    plat.add_argument("target")
    check = sub.add_parser("check", help="check a bundled/ folder or a .vsix")
    check.add_argument("path", type=Path)
    check.add_argument("--target", action="append", required=True, dest="targets")
    check.add_argument("--require", nargs="*", default=list(REQUIRED_PYTHONS))
    args = parser.parse_args(argv)

    if args.command == "targets":
        print("\n".join(TARGETS))
        return 0
    if args.command == "pip-platforms":
        print("\n".join(target(args.target).pip_platforms))
        return 0
    path: Path = args.path
    bundle = Bundle.from_vsix(path) if path.suffix == ".vsix" else Bundle.from_dir(path)
    report = check_bundle(bundle, args.targets)
    for tname, per_version in report.missing.items():
        ok = [p for p, missing in per_version.items() if not missing]
        short = [p for p, missing in per_version.items() if missing and p not in args.require]
        line = f"[vsix-wheels] {tname}: installs offline for CPython {', '.join(ok) or 'none'}"
        if short:
            line += f"; not {', '.join(short)} (those install from the package index)"
        print(line, file=sys.stderr)
    problems = report.problems(args.require)
    for p in problems:
        print(f"[vsix-wheels] {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
