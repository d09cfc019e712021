"""The command language parser (pure: no process)."""

from __future__ import annotations

import pytest

from baton.agents.scripted.script import (
    COMMAND_SPECS,
    MAX_COMMANDS_PER_PROMPT,
    MAX_STREAM_CHUNKS,
    ScriptError,
    decode_escapes,
    is_script,
    parse_bytes,
    parse_prompt,
    split_segments,
)


def test_not_a_script_is_echoed() -> None:
    for text in ["Hello; echo hi", "Echo this", "", "   ", "# echo"]:
        script = parse_prompt(text)
        assert script.commands == () and script.echo_text == text
        assert not is_script(text)


def test_segments_newlines_and_semicolons() -> None:
    assert split_segments("a; b\n\n c ;; d\\;e\r\n") == [
        (1, "a"),
        (1, "b"),
        (3, "c"),
        (3, "d\\;e"),
    ]


def test_escapes() -> None:
    assert decode_escapes(r"a\nb\tc\\d\;e\ f\qg") == "a\nb\tc\\d;e f\\qg"
    assert decode_escapes("trailing\\") == "trailing\\"


def test_arguments_and_defaults() -> None:
    script = parse_prompt("stream 10 5; stream 1_000; write my\\ file.txt two  words; usage 1")
    first, second, write, usage = script.commands
    assert first.args == {"N": 10, "DELAY_MS": 5} and first.given == {"N", "DELAY_MS"}
    assert second.get_int("N") == 1000 and second.get_int("DELAY_MS") == 0
    assert write.get_str("PATH") == "my file.txt" and write.get_str("TEXT") == "two  words"
    assert (usage.get_int("USED"), usage.get_int("SIZE")) == (1, 200_000)
    assert parse_prompt("slow 0.25").commands[0].get_float("SECONDS") == 0.25
    assert parse_prompt("crash").commands[0].get_int("CODE") == 1
    assert parse_prompt("late_update").commands[0].get_str("TEXT") == "late update"
    assert parse_prompt("wait_for_cancel").commands[0].get_int("INTERVAL_MS") == 50
    assert parse_prompt("permission many").commands[0].get_int("COUNT") == 3
    assert parse_prompt("echo line 2\nstream 1").commands[1].line == 2


@pytest.mark.parametrize(
    ("text", "reason", "line"),
    [
        ("echo ok\nbogus", "unknown_command", 2),
        ("stream", "missing_argument", 1),
        ("stream -1", "out_of_range", 1),
        (f"stream {MAX_STREAM_CHUNKS + 1}", "out_of_range", 1),
        ("stream 1.5", "bad_integer", 1),
        ("stream 3 4 5", "unexpected_argument", 1),
        ("slow nan", "bad_number", 1),
        ("slow inf", "bad_number", 1),
        ("slow 3601", "out_of_range", 1),
        ("crash 256", "out_of_range", 1),
        ("bigframe 0", "out_of_range", 1),
        ("bigframe 2GiB", "out_of_range", 1),
        ("bigframe 12XB", "bad_integer", 1),
        ("permission sideways", "bad_choice", 1),
        ("permission cancel_id 2", "unexpected_argument", 1),
        ("permission many 0", "out_of_range", 1),
        ("shell", "missing_argument", 1),
        ("stop", "missing_argument", 1),
        ("commands now", "unexpected_argument", 1),
        ("client_request fs/write_text_file", "missing_argument", 1),
        ("client_request terminal/create", "missing_argument", 1),
    ],
)
def test_errors(text: str, reason: str, line: int) -> None:
    with pytest.raises(ScriptError) as caught:
        parse_prompt(text)
    assert caught.value.reason == reason
    assert caught.value.line == line
    assert caught.value.code == "SCRIPT_ERROR"


def test_too_many_commands() -> None:
    with pytest.raises(ScriptError) as caught:
        parse_prompt(";".join(["echo"] * (MAX_COMMANDS_PER_PROMPT + 1)))
    assert caught.value.reason == "too_many_commands"
    assert len(parse_prompt(";".join(["echo"] * MAX_COMMANDS_PER_PROMPT)).commands) == 10_000


def test_byte_suffixes() -> None:
    assert parse_bytes("4096") == 4096
    assert parse_bytes("64k") == parse_bytes("64KiB") == 65536
    assert parse_bytes("16MiB") == parse_bytes("16m") == 16 * 1024 * 1024
    assert parse_bytes("1G") == 1024**3


def test_every_command_parses_with_its_usage() -> None:
    samples = {
        "stream": "stream 1",
        "write": "write a b",
        "delete": "delete a",
        "move": "move a b",
        "silent_write": "silent_write a b",
        "shell": "shell ls",
        "permission": "permission many",
        "stop": "stop end_turn",
        "slow": "slow 0",
        "garbage": "garbage 1",
        "bigframe": "bigframe 1k",
        "stderr_flood": "stderr_flood 1",
        "client_request": "client_request x/y",
        "withdraw": "withdraw permission 0.5",
    }
    for spec in COMMAND_SPECS:
        command = parse_prompt(samples.get(spec.name, spec.name)).commands[0]
        assert command.name == spec.name
        assert spec.usage().startswith(spec.name)
