"""Headless permission outcomes a script can see: counts in the result line and `baton show`,
--fail-on-denied's own exit code, and the agent's own edit mode suggested when a policy is not
available."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from baton.cli import exit_codes

from .helpers import AGENT, baton, json_lines

_SUPPORT = Path(__file__).parents[1] / "runtime" / "fakes" / "support.py"
_spec = importlib.util.spec_from_file_location("baton_cli_fakes_support", _SUPPORT)
assert _spec is not None and _spec.loader is not None
fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fakes)


def test_a_cancelled_write_is_counted_everywhere(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "write a.txt hi")
    assert done.returncode == 0  # the turn completed: without --fail-on-denied, still 0
    assert "permissions 0 granted, 0 denied, 1 cancelled" in done.stderr
    assert "--fail-on-denied" in done.stderr
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--json", "write a.txt hi")
    result = json_lines(done.stdout)[-1]
    assert result["permissionOutcomes"] == {"granted": 0, "denied": 0, "cancelled": 1}
    shown = baton(tmp_path, "show", result["runId"])
    assert "permissions 0 granted, 0 denied, 1 cancelled" in shown.stdout
    view = json_lines(baton(tmp_path, "show", result["runId"], "--json").stdout)[0]
    assert view["permissionOutcomes"]["cancelled"] == 1


def test_fail_on_denied_has_its_own_exit_code(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--fail-on-denied", "write a.txt hi")
    assert done.returncode == exit_codes.PERMISSION_NOT_GRANTED, done.stderr
    assert "next:" in done.stderr
    done = baton(
        tmp_path, "run", "--agent-command", AGENT, "--fail-on-denied", "--json", "write a.txt hi"
    )
    assert done.returncode == exit_codes.PERMISSION_NOT_GRANTED
    assert json_lines(done.stdout)[-1]["exitCode"] == exit_codes.PERMISSION_NOT_GRANTED
    allowed = baton(
        tmp_path,
        "run",
        "--agent-command",
        AGENT,
        "--allow-unattended",
        "--policy",
        "auto-edits",
        "--fail-on-denied",
        "write b.txt hi",
    )
    assert allowed.returncode == 0, allowed.stderr
    assert "permissions 1 granted, 0 denied, 0 cancelled" in allowed.stderr
    quiet = baton(tmp_path, "run", "--agent-command", AGENT, "--fail-on-denied", "echo hi")
    assert quiet.returncode == 0


def test_policy_not_available_suggests_claudes_own_mode(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fakes.make_fake(bin_dir, "claude")
    done = baton(
        tmp_path,
        "run",
        "--agent",
        "claude",
        "--policy",
        "auto-edits",
        "echo hi",
        PATH=f"{bin_dir}:/usr/bin:/bin",
    )
    assert done.returncode == exit_codes.USAGE, done.stderr
    assert "POLICY_NOT_AVAILABLE" in done.stderr
    assert "--mode acceptEdits" in done.stderr
