"""The interactive permission prompt, in a real pseudo-terminal (pexpect) and over pipes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pexpect
import pytest

from baton.cli.permission_prompt import (
    MAX_DIFF_LINE_CHARS,
    MAX_DIFF_PREVIEW_LINES,
    MAX_DISPLAY_CHARS,
    TtyAsker,
    describe,
    sanitize,
    terminal_asker,
)
from baton.runtime.permissions.ask import AskPrompt, NoUserAsker
from baton.runtime.permissions.local_policy import LocalDecision
from baton.wire.permission import parse_permission_request

FIXTURES = Path(__file__).parents[1] / "fixtures" / "permissions"

#: A child that asks one question on its own terminal and prints the answer.
CHILD = r"""
import asyncio, json, sys, termios
from baton.cli.permission_prompt import TtyAsker
from baton.runtime.permissions.ask import AskPrompt, ask_within
from baton.runtime.permissions.local_policy import LocalDecision
from baton.wire.permission import parse_permission_request

spec = json.loads(sys.argv[1])
request = parse_permission_request(spec["params"])
local = LocalDecision(spec["permits"], "code", spec["detail"])
offered = tuple(o for o in request.options if o.option_id in spec["offered"])
prompt = AskPrompt(request, request.tool_call, offered, local, "ask")
before = termios.tcgetattr(0)
asker = TtyAsker(sys.stdin, sys.stdout)
answer = asyncio.run(ask_within(asker, prompt, spec["deadline"]))
after = termios.tcgetattr(0)
print(f"ANSWER={answer.option_id or 'cancelled'} BY={answer.answered_by} "
      f"REASON={answer.reason!r} RESTORED={before == after}", flush=True)
"""

#: Generous bound for each expectation; a slow machine waits, a hang fails.
EXPECT_TIMEOUT = 30


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return loaded


def _spawn(
    tmp_path: Path,
    params: dict[str, Any],
    offered: list[str] | None = None,
    *,
    permits: bool = True,
    detail: str = "1 path(s) inside the worktree",
    deadline: float | None = None,
) -> pexpect.spawn:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    ids = [o["optionId"] for o in params["options"]] if offered is None else offered
    spec = {
        "params": params,
        "offered": ids,
        "permits": permits,
        "detail": detail,
        "deadline": deadline,
    }
    child = pexpect.spawn(
        sys.executable,
        [str(script), json.dumps(spec)],
        encoding="utf-8",
        timeout=EXPECT_TIMEOUT,
        dimensions=(40, 200),
    )
    return child


def _finish(child: pexpect.spawn) -> str:
    child.expect(r"ANSWER=.*RESTORED=\w+")
    line: str = child.after
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before
    return line


def test_choosing_a_numbered_option(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("claude-edit")["params"])
    child.expect(r"The agent asks permission \(tool kind: edit\):")
    child.expect("Edit edit_me.txt")
    child.expect(r"path: /home/user/project/edit_me.txt  \+1 -1 lines")
    child.expect(
        r"1\) Always Allow  \(remembered by the provider; it owns their scope and lifetime\)"
    )
    child.expect(r"2\) Allow\r\n")
    child.expect(r"3\) Reject\r\n")
    child.expect(r"c\) Cancel")
    child.expect(r"Choose 1-3, or c to cancel")
    child.sendline("2")
    line = _finish(child)
    assert "ANSWER=allow BY=user" in line and "RESTORED=True" in line


def test_ctrl_c_answers_cancelled_without_killing_the_process(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("claude-execute")["params"])
    child.expect(r"command: echo hi > bash_out.txt")
    child.expect("Choose 1-3")
    child.sendcontrol("c")
    line = _finish(child)
    assert "ANSWER=cancelled BY=user REASON='Ctrl-C'" in line and "RESTORED=True" in line


def test_ctrl_d_answers_cancelled(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("codex-edit")["params"])
    child.expect("Choose 1-2")
    child.sendcontrol("d")
    line = _finish(child)
    assert "ANSWER=cancelled BY=user REASON='end of input'" in line


def test_unreadable_answers_are_asked_again_and_editing_works(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("codex-execute-first-sight")["params"])
    child.expect(r"1\) Yes, proceed")
    child.expect("Choose 1-3")
    child.send("9\r")
    child.expect("Not a choice: '9'")
    child.expect("Choose 1-3")
    child.send("x\x7f3\r")  # typo erased with backspace
    line = _finish(child)
    assert "ANSWER=abort BY=user" in line


def test_c_cancels(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("codex-edit")["params"])
    child.expect("Choose 1-2")
    child.send("c\r")
    assert "ANSWER=cancelled BY=user" in _finish(child)


def test_a_local_refusal_is_shown_and_only_rejections_offered(tmp_path: Path) -> None:
    params = _fixture("codex-execute-first-sight")["params"]
    child = _spawn(tmp_path, params, ["abort"], permits=False, detail="git push origin")
    child.expect("Baton's local policy forbids allowing this: git push origin")
    child.expect(r"1\) No, and tell Codex what to do differently")
    child.expect(r"Choose 1, or c")
    child.send("1\r")
    assert "ANSWER=abort BY=user" in _finish(child)


def test_nothing_to_choose_still_lets_the_user_cancel(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("codex-edit")["params"], [], permits=False)
    child.expect("No option can be chosen here")
    child.send("\r")
    assert "ANSWER=cancelled BY=user" in _finish(child)


def test_a_wait_past_the_budget_is_cancelled_and_the_terminal_restored(tmp_path: Path) -> None:
    child = _spawn(tmp_path, _fixture("codex-edit")["params"], deadline=0.2)
    child.expect(r"no answer in time: the request is answered cancelled")
    line = _finish(child)
    assert "ANSWER=cancelled BY=default" in line and "RESTORED=True" in line


def test_hostile_labels_are_shown_escaped(tmp_path: Path) -> None:
    params = {
        "sessionId": "s",
        "toolCall": {"toolCallId": "t", "kind": "edit", "title": "\x1b[2J\x1b[HInnocent\u202eevil"},
        "options": [
            {"optionId": "a", "name": "\x1b[31mReject\x1b[0m", "kind": "allow_always"},
            {"optionId": "r", "name": "Reject", "kind": "reject_once"},
        ],
    }
    child = _spawn(tmp_path, params)
    child.expect(r"\\x1b\[2J\\x1b\[HInnocent\\u202eevil")
    child.expect(r"1\) \\x1b\[31mReject\\x1b\[0m  \(remembered by the provider")
    child.send("2\r")
    assert "ANSWER=r BY=user" in _finish(child)


# --- in process --------------------------------------------------------------------------


def test_sanitize_bounds_and_escapes() -> None:
    assert sanitize("a\nb\tc\x07") == "a\\x0ab\\x09c\\x07"
    assert sanitize("x" * (MAX_DISPLAY_CHARS + 5)) == "x" * (MAX_DISPLAY_CHARS - 1) + "…"
    assert sanitize("é日本") == "é日本"


def test_describe_lists_a_bounded_number_of_paths() -> None:
    paths = [{"path": f"/w/{n}"} for n in range(25)]
    request = parse_permission_request(
        {
            "sessionId": "s",
            "toolCall": {"toolCallId": "t", "kind": "read", "locations": paths},
            "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
        }
    )
    prompt = AskPrompt(
        request, request.tool_call, request.options, LocalDecision(True, "c", "d"), "r"
    )
    lines = describe(prompt)
    assert sum(line.startswith("  path: ") for line in lines) == 10
    assert lines[-1] == "  ... and 15 more paths"


def _edit(old: str | None, new: str) -> list[str]:
    diff = {"type": "diff", "path": "/w/a.txt", "oldText": old, "newText": new}
    request = parse_permission_request(
        {
            "sessionId": "s",
            "toolCall": {"toolCallId": "t", "kind": "edit", "title": "Write", "content": [diff]},
            "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
        }
    )
    prompt = AskPrompt(
        request, request.tool_call, request.options, LocalDecision(True, "c", "d"), "r"
    )
    return describe(prompt)


def test_describe_shows_the_text_an_edit_would_write_escaped_and_bounded() -> None:
    lines = _edit(None, "Hello,\n\x1b[2Jworld\n")
    assert lines[-2:] == ["    +Hello,", "    +\\x1b[2Jworld"]
    changed = _edit("keep\nold\n", "keep\nnew\n")
    assert changed[-2:] == ["    -old", "    +new"]
    many = _edit(None, "".join(f"line {n}\n" for n in range(40)))
    assert many[-1] == f"    ... {40 - MAX_DIFF_PREVIEW_LINES} more lines"
    assert sum(line.startswith("    +line") for line in many) == MAX_DIFF_PREVIEW_LINES
    long = _edit(None, "x" * 1000)
    assert long[-1] == "    +" + "x" * (MAX_DIFF_LINE_CHARS - 2) + "…"


def test_describe_names_the_tool() -> None:
    request = parse_permission_request(
        {
            "sessionId": "s",
            "toolCall": {"toolCallId": "t", "kind": "execute", "name": "Bash", "title": "ls"},
            "options": [{"optionId": "a", "name": "A", "kind": "allow_once"}],
        }
    )
    prompt = AskPrompt(
        request, request.tool_call, request.options, LocalDecision(True, "c", "d"), "r"
    )
    assert describe(prompt)[0] == "The agent asks permission (tool kind: execute, tool: Bash):"


def _prompt() -> AskPrompt:
    request = parse_permission_request(_fixture("codex-edit")["params"])
    local = LocalDecision(True, "c", "d")
    return AskPrompt(request, request.tool_call, request.options, local, "r")


#: Write ends a test closed itself: the fixture must not close them again (the number may
#: belong to another file by then, such as a later event loop's self-pipe).
_CLOSED_BY_THE_TEST: set[int] = set()


def _close_write_end(write_fd: int) -> None:
    os.close(write_fd)
    _CLOSED_BY_THE_TEST.add(write_fd)


@pytest.fixture
def pipe(tmp_path: Path) -> Iterator[tuple[IO[bytes], int, IO[str]]]:
    """A pipe as the prompt's input (its write end for the test) and a file as its output."""
    read_fd, write_fd = os.pipe()
    with open(read_fd, "rb", buffering=0) as stdin, (tmp_path / "out.txt").open("w") as output:
        yield stdin, write_fd, output
        if write_fd in _CLOSED_BY_THE_TEST:
            _CLOSED_BY_THE_TEST.discard(write_fd)
        else:
            os.close(write_fd)


def test_pipes_get_the_no_user_asker(pipe: tuple[IO[bytes], int, IO[str]]) -> None:
    stdin, _, output = pipe
    assert isinstance(terminal_asker(stdin, output), NoUserAsker)


async def test_the_prompt_reads_a_pipe_without_blocking_the_loop(
    pipe: tuple[IO[bytes], int, IO[str]], tmp_path: Path
) -> None:
    stdin, write_fd, output = pipe
    task = asyncio.create_task(TtyAsker(stdin, output).ask(_prompt()))
    await asyncio.sleep(0.05)
    assert not task.done()  # waiting, and the loop still runs this test
    os.write(write_fd, b"1\n")
    answer = await asyncio.wait_for(task, timeout=EXPECT_TIMEOUT)
    assert answer.option_id == "approved"
    assert "1) Yes" in (tmp_path / "out.txt").read_text()


async def test_end_of_a_pipe_is_cancelled(pipe: tuple[IO[bytes], int, IO[str]]) -> None:
    stdin, write_fd, output = pipe
    _close_write_end(write_fd)
    answer = await asyncio.wait_for(TtyAsker(stdin, output).ask(_prompt()), EXPECT_TIMEOUT)
    assert answer.is_cancelled and answer.reason == "end of input"


async def test_a_regular_file_is_read_too(tmp_path: Path) -> None:
    answers = tmp_path / "answers"
    answers.write_text("2\n")
    with answers.open("rb") as stdin, (tmp_path / "o").open("w") as output:
        answer = await asyncio.wait_for(TtyAsker(stdin, output).ask(_prompt()), EXPECT_TIMEOUT)
    assert answer.option_id == "abort"


async def test_concurrent_questions_take_turns(pipe: tuple[IO[bytes], int, IO[str]]) -> None:
    stdin, write_fd, output = pipe
    asker = TtyAsker(stdin, output)
    first = asyncio.create_task(asker.ask(_prompt()))
    second = asyncio.create_task(asker.ask(_prompt()))
    await asyncio.sleep(0.05)
    os.write(write_fd, b"1\n")
    assert (await asyncio.wait_for(first, EXPECT_TIMEOUT)).option_id == "approved"
    assert not second.done()
    os.write(write_fd, b"2\n")
    assert (await asyncio.wait_for(second, EXPECT_TIMEOUT)).option_id == "abort"
