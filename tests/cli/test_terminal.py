"""The terminal layer: one sanitizer for agent text, colour rules, the spinner held while
something else owns the screen, and control sequences from an agent made visible end to end."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pexpect
import pytest

from baton.cli.terminal import SPINNER_FRAMES, Screen, color_enabled, error_line, visible
from baton.errors import UsageError

from .helpers import AGENT, baton, spawn


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b]0;pwned\x07title", "\\x1b]0;pwned\\x07title"),  # OSC retitle + BEL
        ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),  # clear screen, home
        ("a\x9bb\x7fc", "a\\x9bb\\x7fc"),  # C1 CSI and DEL
        ("safe\u202eevil", "safe\\u202eevil"),  # bidi override
        ("a\0b", "a\\0b"),
        ("é日本 plain", "é日本 plain"),
    ],
)
def test_visible_escapes_every_control_character(raw: str, shown: str) -> None:
    assert visible(raw) == shown


def test_visible_keeps_lines_only_when_asked_and_cuts() -> None:
    assert visible("a\nb\tc") == "a\\x0ab\\x09c"
    assert visible("a\nb\tc\x1b", newlines=True) == "a\nb\tc\\x1b"
    assert visible("x" * 10, 5) == "xxxx…"


def test_colour_only_on_a_terminal_without_no_color() -> None:
    assert color_enabled(Tty(), {"TERM": "xterm"})
    assert not color_enabled(Tty(), {"TERM": "xterm", "NO_COLOR": "1"})
    assert not color_enabled(Tty(), {"TERM": "dumb"})
    assert not color_enabled(io.StringIO(), {"TERM": "xterm"})


def test_the_spinner_draws_nothing_while_the_screen_is_held() -> None:
    async def scenario() -> tuple[str, str]:
        err = Tty()
        screen = Screen(io.StringIO(), err, environ={"NO_COLOR": "1"})
        screen.start_spinner()
        with screen.hold():
            before = err.getvalue()
            err.write("Choose 1-2, or c to cancel: ")
            await asyncio.sleep(0.35)
            during = err.getvalue()[len(before) :]
        await asyncio.sleep(0.25)
        screen.stop()
        return during, err.getvalue()

    during, everything = asyncio.run(scenario())
    assert during == "Choose 1-2, or c to cancel: "
    assert any(frame in everything for frame in SPINNER_FRAMES)  # it does draw otherwise


def test_the_spinner_never_overdraws_the_permission_question(tmp_path: Path) -> None:
    child = spawn(tmp_path, "run", "--agent-command", AGENT, "write a.txt hi")
    child.expect(r"Choose 1-\d+, or c to cancel \(Ctrl-C cancels\): ")
    with pytest.raises(pexpect.TIMEOUT):
        # Nothing is drawn while the question waits (the spinner used to redraw every 0.1 s).
        child.expect(r".+", timeout=0.6)
    child.send("1")
    child.expect("1")
    assert not any(frame in child.before for frame in SPINNER_FRAMES)
    child.send("\r")
    child.expect("permission: allow")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_agent_control_sequences_are_shown_not_obeyed(tmp_path: Path) -> None:
    prompt = (
        "plan \x1b]0\\;pwned\x07step one|\x1b[2Jstep two; think \x1b[31mred thought; "
        "echo \x1b]0\\;reply\x07done"
    )
    child = spawn(tmp_path, "run", "--agent-command", AGENT, prompt)
    child.expect(pexpect.EOF)
    child.close()
    raw = child.before
    assert child.exitstatus == 0, raw
    assert "\x1b]0;" not in raw and "\x07" not in raw and "\x1b[2J" not in raw
    assert "\x1b[31m" not in raw
    assert "\\x1b]0;pwned\\x07step one" in raw and "\\x1b[2Jstep two" in raw
    assert "\\x1b[31mred thought" in raw and "\\x1b]0;reply\\x07done" in raw


def test_an_error_line_is_redacted_and_visible() -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    line = error_line(UsageError(f"--agent-command: '{token}\x1b[2J' was not found on PATH"))
    assert token not in line
    assert "\x1b" not in line and "\\x1b[2J" in line
    assert line.startswith("baton: USAGE_ERROR: --agent-command:")


def test_a_refused_command_never_prints_a_credential(tmp_path: Path) -> None:
    token = "glpat-" + "x7Yz9Ab3Cd5Ef7Gh9Ij1"
    result = baton(tmp_path, "run", "--agent-command", token, "hello")
    assert result.returncode == 5  # a missing agent, however named (issue 30)
    assert "was not found" in result.stderr
    assert token not in result.stderr and token not in result.stdout
