"""The README's library example runs as written: the venv's python, no venv on PATH, only the
bundled agent."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import baton

README = Path(__file__).parents[2] / "README.md"


def library_example() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split("## The first turn from Python", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_readme_library_example_runs_verbatim(tmp_path: Path) -> None:
    code = library_example()
    assert 'agent="claude"' not in code  # runs without any agent installed
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "COMPLETED end_turn 0"
    assert "'text': 'hi'" in done.stdout or "'text': 'hichunk 1" in done.stdout


def test_the_public_names_a_caller_needs_are_exported() -> None:
    for name in baton.__all__:
        assert getattr(baton, name) is not None
    assert baton.Policy.__args__ == ("ask", "auto-edits", "full")  # type: ignore[attr-defined]
    assert issubclass(baton.AgentNotInstalled, baton.BatonError)
    assert issubclass(baton.ConfigurationError, baton.BatonError)
    assert baton.SCRIPTED_AGENT[1:] == ("-m", "baton.agents.scripted")


def test_library_errors_name_fields_not_flags() -> None:
    from baton.errors import AgentLaunchFailed
    from baton.runtime.agents.launch import from_command

    for command in ("", "no-such-agent-anywhere", "a\0b"):
        try:
            from_command(command, {"PATH": "/nonexistent"})
        except (baton.ConfigurationError, AgentLaunchFailed) as exc:
            assert "--" not in exc.message, exc.message
        else:  # pragma: no cover - the test fails
            raise AssertionError(command)


LIBRARY_GUIDE = Path(__file__).parents[2] / "docs" / "library.md"


def test_the_library_guides_example_runs_verbatim(tmp_path: Path) -> None:
    """docs/library.md's first example: a run followed through its handle with an Asker that
    approves the edit (the file is written), then a run interrupted through its handle."""
    text = LIBRARY_GUIDE.read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", text, re.S)
    assert match is not None
    done = subprocess.run(
        [sys.executable, "-c", match.group(1)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("started run-")
    assert lines[1:] == ["permission selected allow", "COMPLETED hello", "INTERRUPTED cancelled"]


def test_the_library_guides_session_example_runs_verbatim(tmp_path: Path) -> None:
    """docs/library.md's session example: a turn's handle from ``session.start`` (its run id
    at once), its events, then a second turn on the same provider session."""
    text = LIBRARY_GUIDE.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    [example] = [block for block in blocks if "Conversations(runtime)" in block]
    done = subprocess.run(
        [sys.executable, "-c", example],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["turn True", "result", "COMPLETED True"]
