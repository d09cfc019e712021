"""`baton doctor` says how to install a missing agent it knows the install command of."""

from __future__ import annotations

from pathlib import Path

from .helpers import baton


def test_doctor_names_the_install_command(tmp_path: Path) -> None:
    done = baton(tmp_path, "doctor", "claude")
    assert done.returncode == 5
    assert "npm install -g @agentclientprotocol/claude-agent-acp" in done.stdout
