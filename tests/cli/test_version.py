"""`baton --version` and `python -m baton`: the version, the distribution, the name clash."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

from baton._version import DISTRIBUTION, __version__
from baton.cli import exit_codes
from baton.cli.main import main
from baton.cli.version import clash_warning, other_claimants, version_line


def python_m_baton(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "baton", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )


def test_version_line_names_the_version_and_the_distribution() -> None:
    assert version_line() == f"baton {__version__} (distribution baton-acp)"
    assert DISTRIBUTION == "baton-acp"


def test_python_m_baton_prints_the_version(tmp_path: Path) -> None:
    done = python_m_baton(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout == version_line() + "\n"


def test_python_m_baton_runs_the_cli(tmp_path: Path) -> None:
    # Like the console script: no verb prints the help and exits with the usage code.
    done = python_m_baton(tmp_path)
    assert done.returncode == exit_codes.USAGE
    assert done.stdout.startswith("usage: baton ")


def test_python_m_baton_runs_a_verb(tmp_path: Path) -> None:
    done = python_m_baton(tmp_path, "runs", "--json", "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("owners", "others"),
    [
        ({}, []),
        ({"other": ["baton"]}, []),
        ({"baton": ["baton-acp"]}, []),
        ({"baton": ["baton-acp", "baton_acp", "Baton.ACP"]}, []),
        ({"baton": ["baton-acp", "baton"]}, ["baton"]),
        ({"baton": ["baton", "baton-acp", "baton", "zeta-baton"]}, ["baton", "zeta-baton"]),
    ],
)
def test_other_claimants(owners: dict[str, list[str]], others: list[str]) -> None:
    assert other_claimants(owners) == others


def test_version_warns_when_another_distribution_installs_baton(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        importlib.metadata,
        "packages_distributions",
        lambda: {"baton": ["baton-acp", "baton"], "orjson": ["orjson"]},
    )
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    out, err = capsys.readouterr()
    assert out == version_line() + "\n"
    assert err == clash_warning(["baton"]) + "\n"
    assert "pip uninstall baton" in err
    assert "pipx install baton-acp" in err


def test_version_is_quiet_when_baton_is_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        importlib.metadata, "packages_distributions", lambda: {"baton": ["baton-acp"]}
    )
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    out, err = capsys.readouterr()
    assert (out, err) == (version_line() + "\n", "")


def test_version_still_prints_when_metadata_is_unreadable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unreadable() -> dict[str, list[str]]:
        raise PermissionError("site-packages/x.dist-info/RECORD")

    monkeypatch.setattr(importlib.metadata, "packages_distributions", unreadable)
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr() == (version_line() + "\n", "")
