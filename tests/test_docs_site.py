"""The documentation: the README is the short path and what it held before moved to docs/
(each of its former sections has a home), its links resolve, the API reference page lists
every public name, and ``dir(baton)`` shows them."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

#: The README's sections before it became the short path (issue 35): each must still be a
#: section of the README or of a page in docs/.
FORMER_README_SECTIONS = (
    "Install",
    "Quick start from a clone",
    "Running a prompt: `baton run`",
    "The library",
    "The wire core",
    "Negotiation and sessions",
    "Profiles and `baton doctor`",
    "Permissions",
    "Journal, redaction and the run store",
    "Conversations",
    "Recovery: `baton recover`",
    "The bundled scripted agent",
    "Many hosts: a shared store and queued turns",
    "What Baton deliberately does not support today",
    "The local service: `baton serve`",
    "The inspector: `baton inspect`",
    "Qualification against real adapters",
    "Building and checking the distributions",
    "Benchmarks",
    "Documentation",
)


def _headings(path: Path) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6} (.+)$", path.read_text(), re.M)}


def _slug(heading: str) -> str:
    """The anchor mkdocs and GitHub give a heading (lower case, punctuation dropped)."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.strip().replace(" ", "-")


def test_every_former_readme_section_has_a_home() -> None:
    homes = _headings(README).union(*(_headings(p) for p in DOCS.glob("*.md")))
    missing = [s for s in FORMER_README_SECTIONS if s not in homes]
    assert not missing, missing


def test_the_readme_stays_short() -> None:
    # The reference moved to docs/usage.md: the README is the short path (it was 632 lines).
    assert len(README.read_text().splitlines()) < 300


def test_the_readme_links_resolve() -> None:
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert links
    for link in links:
        if link.startswith(("http://", "https://", "mailto:")):
            continue
        target, _, anchor = link.partition("#")
        path = ROOT / target
        assert path.exists(), link
        if anchor:
            assert anchor in {_slug(h) for h in _headings(path)}, link


@pytest.fixture(scope="module")
def api_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "api_reference_script", ROOT / "scripts" / "api_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_reference_page_lists_every_public_name(api_reference: ModuleType) -> None:
    import baton

    page = (DOCS / "reference.md").read_text()
    assert page == api_reference.render()
    for name in baton.__all__:
        if not name.startswith("_"):
            assert f"## {name}" in page, name


def test_dir_lists_the_public_names_without_importing_them() -> None:
    code = (
        "import sys, baton; names = dir(baton); "
        "print(sorted(set(baton.__all__) - set(names)), 'baton.runtime.runtime' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["[]", "False"]
    import baton

    for name in baton.__all__:
        assert getattr(baton, name) is not None, name


def test_the_readme_leads_with_what_installs_today() -> None:
    # baton-acp is not on PyPI yet (issue 30, item 8): the first install command is the
    # clone's, and the PyPI lines come after it, said to need the upload.
    text = README.read_text(encoding="utf-8")
    install = text[text.index("## Install\n") :]
    first_clone = install.index("make demo")
    first_pypi = install.index("pipx install baton-acp")
    assert first_clone < first_pypi
    assert "not on PyPI yet" in install[:first_clone]
    assert "Once `baton-acp` is published" in install[first_clone:first_pypi]
