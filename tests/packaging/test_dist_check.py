"""scripts/dist_check.py: the wheel-content comparison and the metadata checks."""

from __future__ import annotations

import email.message
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from baton._version import DISTRIBUTION, __version__

ROOT = Path(__file__).resolve().parents[2]
DIST_INFO = "baton_acp-1.2.3.dist-info"
KNOWN = {
    "Programming Language :: Python :: 3.11",
    "Typing :: Typed",
    "Topic :: Software Development",
    "License :: OSI Approved :: Apache Software License",
    "Natural Language :: Ancient Greek",
}


def source(dist_check: ModuleType, **changes: Any) -> Any:
    fields = {
        "distribution": "baton-acp",
        "version": "1.2.3",
        "requires_python": ">=3.11",
        "license_expression": "Apache-2.0",
        "license_files": ("LICENSE",),
        "dependencies": ("orjson>=3.10", "platformdirs>=4.2"),
    }
    fields.update(changes)
    return dist_check.Source(**fields)


def good_metadata() -> email.message.Message:
    meta = email.message.Message()
    for field, value in [
        ("Metadata-Version", "2.4"),
        ("Name", "baton-acp"),
        ("Version", "1.2.3"),
        ("Summary", "Drive ACP agents."),
        ("License-Expression", "Apache-2.0"),
        ("Requires-Python", ">=3.11"),
        ("Description-Content-Type", "text/markdown"),
        ("License-File", "LICENSE"),
        ("Requires-Dist", "orjson>=3.10"),
        ("Requires-Dist", "platformdirs>=4.2"),
        ("Requires-Dist", 'pytest>=8.0; extra == "dev"'),
        ("Classifier", "Programming Language :: Python :: 3.11"),
        ("Classifier", "Typing :: Typed"),
        ("Project-URL", "Agent Client Protocol, https://agentclientprotocol.com"),
    ]:
        meta[field] = value
    meta.set_payload("# Baton\n\nIt drives agents.\n")
    return meta


WHEEL = {"baton/__init__.py", "baton/py.typed", f"{DIST_INFO}/licenses/LICENSE"}


def problems_of(dist_check: ModuleType, meta: email.message.Message, **kw: Any) -> list[str]:
    result: list[str] = dist_check.metadata_problems(
        meta,
        source(dist_check),
        wheel_files=kw.get("wheel_files", WHEEL),
        known_classifiers=KNOWN,
        deprecated_classifiers={"Natural Language :: Ancient Greek"},
    )
    return result


def test_good_metadata_has_no_problem(dist_check: ModuleType) -> None:
    assert problems_of(dist_check, good_metadata()) == []


def replace(field: str, value: str | None) -> Callable[[email.message.Message], None]:
    def change(meta: email.message.Message) -> None:
        del meta[field]
        if value is not None:
            meta[field] = value

    return change


def add(field: str, value: str) -> Callable[[email.message.Message], None]:
    def change(meta: email.message.Message) -> None:
        meta[field] = value

    return change


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (replace("Name", "baton"), "Name is 'baton'"),
        (replace("Version", "1.2.4"), "Version is '1.2.4'"),
        (replace("Requires-Python", None), "Requires-Python is None"),
        (replace("License-Expression", "MIT"), "License-Expression is 'MIT'"),
        (replace("Description-Content-Type", "text/x-rst"), "Description-Content-Type"),
        (replace("Summary", " "), "Summary is empty"),
        (replace("License-File", None), "License-File is []"),
        (replace("Requires-Dist", "orjson>=3.10"), "runtime Requires-Dist"),
        (add("Requires-Dist", "requests"), "runtime Requires-Dist"),
        (replace("Classifier", None), "no classifiers"),
        (add("Classifier", "Programming Language :: Cobol :: 85"), "unknown classifier"),
        (add("Classifier", "Natural Language :: Ancient Greek"), "deprecated classifier"),
        (
            add("Classifier", "License :: OSI Approved :: Apache Software License"),
            "the License-Expression says it",
        ),
        (replace("Project-URL", None), "no Project-URL"),
        (replace("Project-URL", "Home, http://example.invalid"), "is not 'label, https://...'"),
        (replace("Project-URL", "https://example.invalid"), "is not 'label, https://...'"),
    ],
)
def test_each_metadata_problem_is_found(
    dist_check: ModuleType, change: Callable[[email.message.Message], None], problem: str
) -> None:
    meta = good_metadata()
    change(meta)
    found = problems_of(dist_check, meta)
    assert any(problem in p for p in found), found


def test_the_python_classifier_must_match_requires_python(dist_check: ModuleType) -> None:
    meta = good_metadata()
    del meta["Classifier"]
    meta["Classifier"] = "Typing :: Typed"
    meta["Classifier"] = "Topic :: Software Development"
    assert problems_of(dist_check, meta) == [
        "no classifier for Python 3.11, the lowest Requires-Python allows"
    ]


def test_typed_classifier_and_py_typed_must_agree(dist_check: ModuleType) -> None:
    untyped = WHEEL - {"baton/py.typed"}
    assert problems_of(dist_check, good_metadata(), wheel_files=untyped) == [
        "'Typing :: Typed' and the wheel's py.typed disagree"
    ]


def test_an_empty_readme_and_a_missing_license_file_are_found(dist_check: ModuleType) -> None:
    meta = good_metadata()
    meta.set_payload("\n")
    found = problems_of(dist_check, meta, wheel_files=WHEEL - {f"{DIST_INFO}/licenses/LICENSE"})
    assert found == [
        "the long description (README) is empty",
        "license file LICENSE is not in the wheel",
    ]


@pytest.mark.parametrize(
    ("text", "problems"),
    [
        ("[console_scripts]\nbaton = baton.cli.main:entry\n", []),
        ("[console_scripts]\nbaton=baton.cli.main:entry", []),
        ("[console_scripts]\nbaton = baton.cli:main\n", ["baton runs 'baton.cli:main'"]),
        ("[gui_scripts]\nbaton = baton.cli.main:entry\n", ["no console script 'baton'"]),
        ("", ["no console script 'baton'"]),
    ],
)
def test_entry_points(dist_check: ModuleType, text: str, problems: list[str]) -> None:
    found = dist_check.entry_point_problems(text)
    assert [p.split(", expected")[0] for p in found] == problems


def test_package_files_maps_tracked_sources_to_wheel_paths(dist_check: ModuleType) -> None:
    tracked = [
        "src/baton/__init__.py",
        "src/baton/py.typed",
        "src/baton/inspector/static/app.css",
        "src/baton/cli/__pycache__/main.cpython-311.pyc",
        "src/baton/stray.pyc",
        "src/batonx/other.py",
        "tests/test_x.py",
        "README.md",
    ]
    assert dist_check.package_files(tracked) == {
        "baton/__init__.py",
        "baton/py.typed",
        "baton/inspector/static/app.css",
    }


def test_content_problems(dist_check: ModuleType) -> None:
    expected = {"baton/__init__.py", "baton/py.typed", "baton/inspector/templates/run.html"}
    wheel = [
        "baton/",
        "baton/__init__.py",
        "baton/py.typed",
        "baton/scratch.py",
        "tests/__init__.py",
        f"{DIST_INFO}/METADATA",
        f"{DIST_INFO}/RECORD",
    ]
    assert dist_check.content_problems(expected, wheel, DIST_INFO) == [
        "the wheel holds tests/__init__.py, outside the baton package",
        "missing from the wheel: baton/inspector/templates/run.html (tracked as "
        "src/baton/inspector/templates/run.html; declare it in [tool.setuptools.package-data] "
        "in pyproject.toml)",
        "in the wheel but not tracked by git: baton/scratch.py",
    ]
    wheel_ok = [*wheel[:3], "baton/inspector/templates/run.html", f"{DIST_INFO}/METADATA"]
    assert dist_check.content_problems(expected, wheel_ok, DIST_INFO) == []


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def make_checkout(tmp_path: Path, files: dict[str, str]) -> Path:
    """A git checkout with Baton's _version.py and pyproject.toml and ``files`` added."""
    repo = tmp_path / "checkout"
    for name in ("src/baton/_version.py", "pyproject.toml"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text((ROOT / name).read_text(encoding="utf-8"), encoding="utf-8")
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    return repo


def make_wheel(dist_dir: Path, src: Any, names: list[str]) -> Path:
    dist_dir.mkdir(exist_ok=True)
    wheel = dist_dir / src.wheel_name
    with zipfile.ZipFile(wheel, "w") as zf:
        for name in names:
            zf.writestr(name, "x")
    (dist_dir / src.sdist_name).write_bytes(b"")
    return wheel


def test_an_undeclared_static_file_fails_the_contents_check(
    dist_check: ModuleType, tmp_path: Path
) -> None:
    # A future inspector stylesheet tracked by git but not declared as package data: the wheel
    # (as setuptools would build it) has the modules but not the .css, and the check says so.
    repo = make_checkout(
        tmp_path,
        {
            "src/baton/__init__.py": "",
            "src/baton/py.typed": "",
            "src/baton/inspector/__init__.py": "",
            "src/baton/inspector/static/app.css": "body {}",
        },
    )
    src = dist_check.read_source(repo)
    dist_dir = tmp_path / "dist"
    modules = [
        "baton/__init__.py",
        "baton/_version.py",
        "baton/py.typed",
        "baton/inspector/__init__.py",
        f"{src.dist_info}/METADATA",
    ]
    make_wheel(dist_dir, src, modules)
    assert dist_check.check_contents(dist_dir, src, repo) == [
        "missing from the wheel: baton/inspector/static/app.css (tracked as "
        "src/baton/inspector/static/app.css; declare it in [tool.setuptools.package-data] in "
        "pyproject.toml)"
    ]
    (dist_dir / src.wheel_name).unlink()
    make_wheel(dist_dir, src, [*modules, "baton/inspector/static/app.css"])
    assert dist_check.check_contents(dist_dir, src, repo) == []


def test_read_source_follows_the_checkout(dist_check: ModuleType) -> None:
    src = dist_check.read_source(ROOT)
    assert (src.distribution, src.version) == (DISTRIBUTION, __version__)
    assert src.wheel_name == f"baton_acp-{__version__}-py3-none-any.whl"
    assert src.sdist_name == f"baton_acp-{__version__}.tar.gz"
    assert src.license_files == ("LICENSE",)
    assert (ROOT / "LICENSE").is_file()


def test_read_source_refuses_two_names(dist_check: ModuleType, tmp_path: Path) -> None:
    repo = make_checkout(tmp_path, {})
    version_file = repo / "src/baton/_version.py"
    version_file.write_text(
        version_file.read_text().replace('"baton-acp"', '"baton-other"'), encoding="utf-8"
    )
    with pytest.raises(dist_check.DistProblem, match="baton-other"):
        dist_check.read_source(repo)


def test_find_artifacts_wants_exactly_the_wheel_and_the_sdist(
    dist_check: ModuleType, tmp_path: Path
) -> None:
    src = source(dist_check)
    make_wheel(tmp_path, src, [])
    assert dist_check.find_artifacts(tmp_path, src) == (
        tmp_path / src.wheel_name,
        tmp_path / src.sdist_name,
    )
    (tmp_path / "baton_acp-1.2.2-py3-none-any.whl").write_bytes(b"")
    with pytest.raises(dist_check.DistProblem, match="expected exactly"):
        dist_check.find_artifacts(tmp_path, src)


def test_listing_counts_the_wheels_files(dist_check: ModuleType, tmp_path: Path) -> None:
    src = source(dist_check)
    make_wheel(tmp_path, src, ["baton/__init__.py", "baton/py.typed", f"{DIST_INFO}/RECORD"])
    lines = dist_check.listing(tmp_path, src).splitlines()
    assert lines[:3] == [
        "        1  baton/__init__.py",
        "        1  baton/py.typed",
        f"        1  {DIST_INFO}/RECORD",
    ]
    assert lines[3].startswith(f"{src.wheel_name}: 3 files, ")
