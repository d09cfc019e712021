"""The config file's ``[workspaces] root`` and the runtime's default under the data dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.errors import ConfigFileError
from baton.runtime.agents.config_file import parse_config
from baton.runtime.runtime import Runtime


def test_an_absolute_root_is_taken_and_home_expanded() -> None:
    assert parse_config('[workspaces]\nroot = "/srv/wt"\n').workspace_root == "/srv/wt"
    assert parse_config('[workspaces]\nroot = "~/wt"\n').workspace_root.endswith("/wt")
    assert parse_config("").workspace_root is None


@pytest.mark.parametrize(
    "body", ['root = "relative/wt"', "root = 3", 'root = ""', 'place = "/srv"']
)
def test_a_bad_root_is_refused(body: str) -> None:
    with pytest.raises(ConfigFileError):
        parse_config(f"[workspaces]\n{body}\n")


def test_the_default_root_is_under_the_data_directory(tmp_path: Path) -> None:
    assert Runtime(data_dir=tmp_path / "d").workspaces.root == str(tmp_path / "d" / "worktrees")
    assert Runtime(data_dir=tmp_path, workspace_root="/srv/x").workspaces.root == "/srv/x"
