"""pyproject.toml and baton._version agree: one version source, one distribution name."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import baton
from baton._version import DISTRIBUTION, __version__

ROOT = Path(__file__).resolve().parents[2]


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_distribution_name_is_batons_own() -> None:
    assert pyproject()["project"]["name"] == DISTRIBUTION == "baton-acp"


def test_the_version_has_one_source() -> None:
    data = pyproject()
    assert "version" not in data["project"]
    assert "version" in data["project"]["dynamic"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {
        "attr": "baton._version.__version__"
    }
    assert baton.__version__ == __version__


def test_the_console_script_and_import_package_stay_baton() -> None:
    data = pyproject()
    assert data["project"]["scripts"] == {"baton": "baton.cli.main:entry"}
    assert (ROOT / "src" / "baton" / "__main__.py").is_file()


def test_the_dist_extra_holds_the_build_tools() -> None:
    names = {
        r.split(">")[0].split("[")[0]
        for r in pyproject()["project"]["optional-dependencies"]["dist"]
    }
    assert {"build", "twine"} <= names
