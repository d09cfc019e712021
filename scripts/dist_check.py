#!/usr/bin/env python3
"""Checks of Baton's built distributions in DIST_DIR (``make dist``, ``make dist-check``).

    python scripts/dist_check.py metadata DIST_DIR   # names, version and metadata fields
    python scripts/dist_check.py list DIST_DIR       # what the wheel holds: files, sizes, count
    python scripts/dist_check.py contents DIST_DIR   # the wheel against git's files in src/baton

``metadata`` complements ``twine check --strict`` (which renders the README): the wheel and the
sdist are Baton's (name, version from src/baton/_version.py), and the wheel's METADATA carries
Requires-Python, the runtime dependencies, the license expression and its file, valid
classifiers, https project URLs and the ``baton`` console script. ``contents`` fails when a
file git tracks under src/baton (anything but compiled ``.pyc``) is missing from the wheel, or
the wheel holds a file git does not track: a static file or template not declared as package
data fails here, not on a user's machine.

Standard library only, except ``trove_classifiers`` (the ``dist`` extra) for ``metadata``. Run
from the checkout; exits 1 listing every problem found.
"""

from __future__ import annotations

import argparse
import ast
import email.message
import email.parser
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The checkout this script belongs to.
ROOT: Final = Path(__file__).resolve().parent.parent

#: The import package and where its sources live, relative to the checkout.
PACKAGE: Final = "baton"
PACKAGE_SOURCE: Final = f"src/{PACKAGE}"

#: Compiled files git may track by accident but a wheel never needs.
COMPILED_SUFFIXES: Final = (".pyc", ".pyo")

#: The console script the wheel must declare (pyproject.toml ``[project.scripts]``).
CONSOLE_SCRIPT: Final = ("baton", "baton.cli.main:entry")


class DistProblem(Exception):
    """A distribution is not what Baton ships; the message says what is wrong."""


@dataclass(frozen=True)
class Source:
    """What the checkout says the distributions must be."""

    distribution: str
    version: str
    requires_python: str
    license_expression: str
    license_files: tuple[str, ...]
    dependencies: tuple[str, ...]

    @property
    def filename_stem(self) -> str:
        """The distribution name as wheel and sdist file names spell it."""
        return re.sub(r"[-_.]+", "_", self.distribution).lower()

    @property
    def wheel_name(self) -> str:
        """The wheel's file name (pure Python, any platform)."""
        return f"{self.filename_stem}-{self.version}-py3-none-any.whl"

    @property
    def sdist_name(self) -> str:
        """The sdist's file name."""
        return f"{self.filename_stem}-{self.version}.tar.gz"

    @property
    def dist_info(self) -> str:
        """The wheel's metadata directory."""
        return f"{self.filename_stem}-{self.version}.dist-info"


def _module_strings(path: Path) -> dict[str, str]:
    """The string literals assigned to names at the top level of a module (never imported)."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name) and isinstance(node.value.value, str):
                    found[target.id] = node.value.value
    return found


def read_source(root: Path = ROOT) -> Source:
    """The expected name, version and metadata, from _version.py and pyproject.toml."""
    strings = _module_strings(root / PACKAGE_SOURCE / "_version.py")
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    if project["name"] != strings["DISTRIBUTION"]:
        raise DistProblem(
            f"pyproject.toml names the distribution {project['name']!r} but "
            f"baton._version.DISTRIBUTION says {strings['DISTRIBUTION']!r}"
        )
    return Source(
        distribution=strings["DISTRIBUTION"],
        version=strings["__version__"],
        requires_python=project["requires-python"],
        license_expression=project["license"],
        license_files=tuple(project.get("license-files", ())),
        dependencies=tuple(project.get("dependencies", ())),
    )


def find_artifacts(dist_dir: Path, source: Source) -> tuple[Path, Path]:
    """The wheel and the sdist in ``dist_dir``: exactly these two files, named as expected."""
    names = sorted(p.name for p in dist_dir.iterdir() if p.is_file())
    expected = sorted([source.wheel_name, source.sdist_name])
    if names != expected:
        raise DistProblem(f"{dist_dir} holds {names}, expected exactly {expected}")
    return dist_dir / source.wheel_name, dist_dir / source.sdist_name


def _normalized_requirement(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _minimum_python(requires_python: str) -> str | None:
    match = re.fullmatch(r">=\s*(\d+\.\d+)", requires_python.strip())
    return match.group(1) if match else None


def metadata_problems(
    meta: email.message.Message,
    source: Source,
    *,
    wheel_files: Collection[str],
    known_classifiers: Collection[str],
    deprecated_classifiers: Collection[str] = (),
) -> list[str]:
    """What is wrong with a wheel's METADATA, given the files the wheel holds."""
    problems: list[str] = []

    def expect(field: str, wanted: str) -> None:
        if meta.get(field) != wanted:
            problems.append(f"{field} is {meta.get(field)!r}, expected {wanted!r}")

    expect("Name", source.distribution)
    expect("Version", source.version)
    expect("Requires-Python", source.requires_python)
    expect("License-Expression", source.license_expression)
    expect("Description-Content-Type", "text/markdown")
    if not (meta.get("Summary") or "").strip():
        problems.append("Summary is empty")
    if not str(meta.get_payload() or "").strip():
        problems.append("the long description (README) is empty")

    declared = meta.get_all("License-File") or []
    if sorted(declared) != sorted(source.license_files):
        problems.append(f"License-File is {declared}, expected {list(source.license_files)}")
    for name in declared:
        if f"{source.dist_info}/licenses/{name}" not in wheel_files:
            problems.append(f"license file {name} is not in the wheel")

    runtime = {
        _normalized_requirement(r)
        for r in meta.get_all("Requires-Dist") or []
        if not re.search(r";.*\bextra\s*==", r)
    }
    wanted = {_normalized_requirement(r) for r in source.dependencies}
    if runtime != wanted:
        problems.append(f"runtime Requires-Dist is {sorted(runtime)}, expected {sorted(wanted)}")

    classifiers = meta.get_all("Classifier") or []
    if not classifiers:
        problems.append("no classifiers")
    for classifier in classifiers:
        if classifier not in known_classifiers:
            problems.append(f"unknown classifier {classifier!r}")
        elif classifier in deprecated_classifiers:
            problems.append(f"deprecated classifier {classifier!r}")
        if classifier.startswith("License ::"):
            problems.append(f"{classifier!r}: the License-Expression says it (PEP 639)")
    minimum = _minimum_python(source.requires_python)
    if minimum and f"Programming Language :: Python :: {minimum}" not in classifiers:
        problems.append(f"no classifier for Python {minimum}, the lowest Requires-Python allows")
    typed = f"{PACKAGE}/py.typed" in wheel_files
    if typed != ("Typing :: Typed" in classifiers):
        problems.append("'Typing :: Typed' and the wheel's py.typed disagree")

    urls = meta.get_all("Project-URL") or []
    if not urls:
        problems.append("no Project-URL")
    for entry in urls:
        label, _, url = entry.partition(",")
        if not label.strip() or not url.strip().startswith("https://"):
            problems.append(f"Project-URL {entry!r} is not 'label, https://...'")
    return problems


def entry_point_problems(text: str) -> list[str]:
    """What is wrong with a wheel's entry_points.txt (the ``baton`` console script)."""
    name, target = CONSOLE_SCRIPT
    section: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]")
        elif section == "console_scripts" and "=" in line:
            key, _, value = line.partition("=")
            if key.strip() == name:
                found = value.strip()
                return [] if found == target else [f"{name} runs {found!r}, expected {target!r}"]
    return [f"no console script {name!r}"]


def _read_wheel_metadata(wheel: zipfile.ZipFile, source: Source) -> email.message.Message:
    raw = wheel.read(f"{source.dist_info}/METADATA").decode("utf-8")
    return email.parser.Parser().parsestr(raw)


def check_metadata(dist_dir: Path, source: Source) -> list[str]:
    """Every metadata problem of the wheel and the sdist in ``dist_dir``."""
    import trove_classifiers  # the `dist` extra; only this subcommand needs it

    wheel_path, sdist_path = find_artifacts(dist_dir, source)
    with zipfile.ZipFile(wheel_path) as wheel:
        files = set(wheel.namelist())
        meta = _read_wheel_metadata(wheel, source)
        problems = metadata_problems(
            meta,
            source,
            wheel_files=files,
            known_classifiers=trove_classifiers.classifiers,
            deprecated_classifiers=trove_classifiers.deprecated_classifiers,
        )
        entry_points = f"{source.dist_info}/entry_points.txt"
        if entry_points in files:
            problems += entry_point_problems(wheel.read(entry_points).decode("utf-8"))
        else:
            problems.append("the wheel has no entry_points.txt")
    stem = f"{source.filename_stem}-{source.version}"
    with tarfile.open(sdist_path) as sdist:
        members = set(sdist.getnames())
        for needed in (
            "PKG-INFO",
            "pyproject.toml",
            "README.md",
            "CHANGELOG.md",
            *source.license_files,
        ):
            if f"{stem}/{needed}" not in members:
                problems.append(f"the sdist has no {needed}")
        if f"{stem}/PKG-INFO" in members:
            handle = sdist.extractfile(f"{stem}/PKG-INFO")
            assert handle is not None
            pkg_info = email.parser.Parser().parsestr(handle.read().decode("utf-8"))
            for field in ("Name", "Version"):
                if pkg_info.get(field) != meta.get(field):
                    problems.append(f"sdist {field} {pkg_info.get(field)!r} != wheel's")
    return problems


def package_files(tracked: Iterable[str]) -> set[str]:
    """The wheel paths that git-tracked checkout paths must have (``src/baton/x`` →
    ``baton/x``), leaving out compiled files and anything outside the package."""
    prefix = f"{PACKAGE_SOURCE}/"
    return {
        path.removeprefix("src/")
        for path in tracked
        if path.startswith(prefix)
        and not path.endswith(COMPILED_SUFFIXES)
        and "/__pycache__/" not in path
    }


def content_problems(
    expected: Collection[str], wheel_files: Iterable[str], dist_info: str
) -> list[str]:
    """How the wheel's files differ from ``expected`` (wheel paths of the package's files):
    missing ones, extra ones in the package, and anything outside the package and
    ``dist_info``."""
    package_prefix = f"{PACKAGE}/"
    in_package: set[str] = set()
    problems: list[str] = []
    for name in wheel_files:
        if name.endswith("/"):
            continue
        if name.startswith(package_prefix):
            in_package.add(name)
        elif not name.startswith(f"{dist_info}/"):
            problems.append(f"the wheel holds {name}, outside the {PACKAGE} package")
    for name in sorted(set(expected) - in_package):
        problems.append(
            f"missing from the wheel: {name} (tracked as src/{name}; declare it in "
            "[tool.setuptools.package-data] in pyproject.toml)"
        )
    for name in sorted(in_package - set(expected)):
        problems.append(f"in the wheel but not tracked by git: {name}")
    return problems


def git_tracked(root: Path = ROOT) -> list[str]:
    """The files git tracks under the package's source directory."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--", PACKAGE_SOURCE],
            check=True,
            capture_output=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise DistProblem(f"cannot list git's files in {root}: {exc}") from exc
    return [name for name in out.decode("utf-8").split("\0") if name]


def check_contents(dist_dir: Path, source: Source, root: Path = ROOT) -> list[str]:
    """Every difference between the wheel and the files git tracks under src/baton."""
    wheel_path, _ = find_artifacts(dist_dir, source)
    expected = package_files(git_tracked(root))
    if not expected:
        return [f"git tracks no files under {PACKAGE_SOURCE} in {root}"]
    with zipfile.ZipFile(wheel_path) as wheel:
        names = wheel.namelist()
    problems = content_problems(expected, names, source.dist_info)
    if not problems:
        print(
            f"dist_check: the wheel holds all {len(expected)} files git tracks in {PACKAGE_SOURCE}"
        )
    return problems


def listing(dist_dir: Path, source: Source) -> str:
    """What the wheel holds, one file a line with its size, then a summary line."""
    wheel_path, sdist_path = find_artifacts(dist_dir, source)
    with zipfile.ZipFile(wheel_path) as wheel:
        infos = [i for i in wheel.infolist() if not i.is_dir()]
    lines = [f"{i.file_size:>9}  {i.filename}" for i in sorted(infos, key=lambda i: i.filename)]
    unpacked = sum(i.file_size for i in infos)
    lines.append(
        f"{wheel_path.name}: {len(infos)} files, {wheel_path.stat().st_size:,} bytes "
        f"({unpacked:,} unpacked); {sdist_path.name}: {sdist_path.stat().st_size:,} bytes"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand; print its problems and return 1 if there are any."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("command", choices=("metadata", "list", "contents"))
    parser.add_argument("dist_dir", type=Path)
    args = parser.parse_args(argv)
    try:
        source = read_source()
        if args.command == "list":
            print(listing(args.dist_dir, source))
            return 0
        check = check_metadata if args.command == "metadata" else check_contents
        problems = check(args.dist_dir, source)
    except DistProblem as exc:
        problems = [str(exc)]
    for problem in problems:
        print(f"dist_check: {problem}", file=sys.stderr)
    if not problems and args.command == "metadata":
        print(f"dist_check: {source.wheel_name} and {source.sdist_name}: metadata checks passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
