"""`baton run` says a native mode that acts without asking on stderr, in both output formats,
and in the result."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import AGENT, baton, json_lines

MODES = "--native-mode 'default:Always ask' --native-mode 'yolo:Runs every tool without asking'"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_explicit_self_acting_mode_is_said_on_stderr(tmp_path: Path, fmt: str) -> None:
    done = baton(
        tmp_path,
        "run",
        "--agent-command",
        f"{AGENT} {MODES}",
        "--mode",
        "yolo",
        "--format",
        fmt,
        "echo done",
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("MODE_ACTS_WITHOUT_ASKING") == 1
    assert "'yolo'" in done.stderr
    if fmt == "json":
        [result] = [e for e in json_lines(done.stdout) if e["type"] == "result"]
        assert [w["code"] for w in result["warnings"]] == ["MODE_ACTS_WITHOUT_ASKING"]
