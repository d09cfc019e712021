"""The shell recognizer: what it accepts it reads exactly as bash does; the rest is opaque."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from baton.runtime.permissions.shell_reading import Opaque, SimpleCommand, read_script

BASH = shutil.which("bash")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("ls -la", [SimpleCommand(("ls", "-la"))]),
        ("a 'b c' \"d e\" f'g'\"h\"", [SimpleCommand(("a", "b c", "d e", "fgh"))]),
        ("echo ''", [SimpleCommand(("echo", ""))]),
        ("a && b || c; d | e |& f", [SimpleCommand((w,)) for w in "abcdef"]),
        ("a\nb\n\n", [SimpleCommand(("a",)), SimpleCommand(("b",))]),
        ("x > out 2>&1", [SimpleCommand(("x",), ("out",))]),
        ("x 2> err >> log < in", [SimpleCommand(("x",), ("err", "log", "in"))]),
        (">log x", [SimpleCommand(("x",), ("log",))]),
        ("x &> all", [SimpleCommand(("x",), ("all",))]),
        ("cat <<< 'a b'", [SimpleCommand(("cat",), (), ("a b",))]),
        ("x a=b --k=v", [SimpleCommand(("x", "a=b", "--k=v"))]),
        ("git diff HEAD~1", [SimpleCommand(("git", "diff", "HEAD~1"))]),
        ("sleep 1 &", [SimpleCommand(("sleep", "1"))]),
        ("'if' x", [SimpleCommand(("if", "x"))]),  # nor a quoted keyword
    ],
)
def test_accepted_commands(text: str, expected: list[SimpleCommand]) -> None:
    assert read_script(text) == tuple(expected)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "a &&",
        "&& a",
        "a | | b",
        "x >",
        "> out",
        "a ;; b",
        "cat <<EOF",
        "x <> f",
        "X=1",
        "X+=1 y",
        "X='a b' y",  # an assignment although its value is quoted
        'PATH="/tmp/evil" git status',
        "'X=1' y",  # a command named X=1: taken for an assignment all the same
        "if x",
        "a\\ b",
        "a\\\nb",
        "$HOME",
        "`x`",
        "a*",
        "~",
        "a=~",
        "x --dir=~/a",
        "a:~",
        "#x",
        "!x",
        "(x)",
        "x\x00",
        "git config alias.p push '--get\x00'",
        "x\r",
        "é",
    ],
)
def test_outside_the_subset_is_opaque(text: str) -> None:
    assert isinstance(read_script(text), Opaque)


# Pieces that make up a command, hostile ones included, weighted toward the subset.
PIECES = st.sampled_from(
    [
        *("a", "git", "-x", "./p", "a=b", "%", "^", "@", "+", ",", ":", "=", " ", " ", "\t"),
        *("~", "~/a", "a~b", "~a", "=~", ":~", "'s q'", "''", '"d q"', '""', "'", '"'),
        *("'~'", '"~"', "\\", "$x", "*", "?", "{a,b}", "#", "'$x'", '"a\'b"', "\\\n"),
    ]
)
TEXTS = st.lists(PIECES, min_size=1, max_size=10).map("".join)


@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=200, deadline=None)
@given(text=TEXTS)
def test_what_is_accepted_is_read_as_bash_reads_it(text: str) -> None:
    reading = read_script("p " + text)
    if isinstance(reading, Opaque) or len(reading) != 1 or reading[0].redirect_targets:
        return
    script = 'p() { for a in "$@"; do printf "%s\\0" "$a"; done; }; p ' + text
    result = subprocess.run(
        [BASH or "bash", "--norc", "--noprofile", "-c", script],
        capture_output=True,
        timeout=10,
        check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
        cwd="/",
    )
    words = result.stdout.split(b"\0")[:-1] if result.stdout else []
    assert tuple(word.decode() for word in words) == reading[0].words[1:], text
