"""`baton logout`: ACP logout only where advertised, only when asked (issue 20)."""

from __future__ import annotations

from pathlib import Path

from .helpers import AGENT, baton, json_lines


def test_logout_where_advertised(tmp_path: Path) -> None:
    done = baton(tmp_path, "logout", "--agent-command", AGENT, "--json")  # advertises auth.logout
    assert done.returncode == 0, done.stderr
    [result] = json_lines(done.stdout)
    assert result["ok"] is True and result["schemaVersion"] == 1


def test_logout_refused_without_the_capability(tmp_path: Path) -> None:
    done = baton(tmp_path, "logout", "--agent-command", f"{AGENT} --cap auth.logout=omit")
    assert done.returncode == 2
    assert "CAPABILITY_NOT_ADVERTISED" in done.stderr and "auth.logout" in done.stderr
    assert "Traceback" not in done.stderr
