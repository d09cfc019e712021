"""What an error echoes is bounded: a run of characters longer than the cap keeps its head
and a count, a whole message is capped, and the quotes around an echoed value stay."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.errors import (
    ECHOED_TOKEN_HEAD_CHARS,
    MAX_ECHOED_TOKEN_CHARS,
    MAX_ERROR_MESSAGE_CHARS,
    RecordNotFound,
    bounded_message,
)

from .cli.helpers import baton


@pytest.mark.parametrize("length", [MAX_ECHOED_TOKEN_CHARS - 1, MAX_ECHOED_TOKEN_CHARS])
def test_a_run_up_to_the_cap_is_kept_whole(length: int) -> None:
    text = f"no run '{'r' * length}'"
    assert bounded_message(text) == text


def test_a_run_over_the_cap_keeps_its_head_and_a_count() -> None:
    length = MAX_ECHOED_TOKEN_CHARS + 1
    shown = bounded_message(f"no run '{'r' * length}'; try again")
    head = "r" * ECHOED_TOKEN_HEAD_CHARS
    assert shown == f"no run '{head}…[+{length - ECHOED_TOKEN_HEAD_CHARS:,} chars]'; try again"


def test_every_error_bounds_its_message() -> None:
    error = RecordNotFound(f"no session named '{'s' * 100_000}'")
    assert len(error.message) < 200 and "[+99,936 chars]" in error.message
    words = RecordNotFound("word " * 100_000)
    assert len(words.message) == MAX_ERROR_MESSAGE_CHARS


@pytest.mark.parametrize(
    "args",
    [
        ("show", "@"),
        ("session", "show", "@"),
        ("run", "--session", "@", "hi"),
        ("run", "--agent", "@", "hi"),
        ("runs", "--status", "@"),
        ("runs", "@"),
    ],
)
def test_the_cli_echoes_a_100_kb_argument_bounded(tmp_path: Path, args: tuple[str, ...]) -> None:
    huge = "x" * 100_000
    (tmp_path / "d").mkdir(mode=0o700)
    done = baton(tmp_path, *(huge if a == "@" else a for a in args))
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr) < 2_000, done.stderr[:300]
