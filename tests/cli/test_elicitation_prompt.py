"""Elicitation on a real pseudo-terminal (pexpect): `baton run` under ask advertises it, asks
field by field, re-asks an invalid answer, shows a URL without opening it; headless runs
decline (tests/runtime/test_live_updates_e2e.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect

AGENT = f"{sys.executable} -m baton.agents.scripted"


def spawn(tmp_path: Path, prompt: str, *flags: str) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        [
            "-m",
            "baton.cli.main",
            "run",
            "--data-dir",
            str(tmp_path / "d"),
            "--cwd",
            str(tmp_path),
            "--agent-command",
            AGENT,
            *flags,
            prompt,
        ],
        encoding="utf-8",
        timeout=30,
        cwd=str(tmp_path),
    )


def test_a_person_fills_in_the_form(tmp_path: Path) -> None:
    child = spawn(tmp_path, "elicit form")
    child.expect("The agent asks: The scripted agent needs a few details")
    child.expect("Answer\\? y = fill in")
    child.sendline("y")
    child.expect("Project name: ")
    child.sendline("web")
    child.expect("Replicas: ")
    child.sendline("9")
    child.expect("above the maximum 5")
    child.expect("Replicas: ")
    child.sendline("2")
    child.expect("2\\) Americas")
    child.expect("Region \\(number or value\\): ")
    child.sendline("1")
    child.expect("Deploy now \\[y/n\\]: ")
    child.sendline("y")
    child.expect(
        '"action":"accept","content":\\{"name":"web","replicas":2,"region":"eu","confirm":true\\}'
    )
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_person_declines_and_a_url_is_only_shown(tmp_path: Path) -> None:
    child = spawn(tmp_path, "elicit form; elicit url")
    child.expect("Answer\\? y = fill in")
    child.sendline("n")
    child.expect("Open this URL yourself \\(Baton does not open it\\)")
    child.expect("https://127.0.0.1:9/scripted-sign-in")
    child.expect("Done\\? y = finished")
    child.sendline("y")
    # The replies stream to stdout after the questions (the output buffer's boundary).
    child.expect('elicitation answer: \\{"action":"decline"\\}')
    child.expect('elicitation answer: \\{"action":"accept"\\}')
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_the_turn_budget_withdraws_an_open_question(tmp_path: Path) -> None:
    child = spawn(tmp_path, "elicit form", "--timeout", "2")
    child.expect("Answer\\? y = fill in")
    # Nobody types: the budget interrupts the turn, the prompt stops waiting and says so.
    child.expect("the agent's question was withdrawn: the turn was interrupted")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3  # the turn budget elapsed


def test_ctrl_c_withdraws_an_open_question_and_the_agent_gets_cancel(tmp_path: Path) -> None:
    child = spawn(tmp_path, "elicit form", "--format", "json")
    child.expect("Answer\\? y = fill in")
    child.sendline("y")
    child.expect("Project name: ")
    child.sendintr()
    child.expect("the agent's question was withdrawn: the turn was interrupted")
    child.expect('"action":"cancel","reasonCode":"turn_cancelled"')
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_a_question_the_agent_withdraws_leaves_the_screen(tmp_path: Path) -> None:
    # Issue 29: the agent cancels its own question ($/cancel_request); the prompt stops asking
    # and says the agent withdrew it, the turn goes on, the agent got -32800.
    child = spawn(tmp_path, "withdraw elicit 1")
    child.expect("The agent asks: The scripted agent will withdraw this question")
    child.expect("the agent withdrew its question")
    child.expect("withdrawn elicit answer: .*-32800")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_permission_request_the_agent_withdraws_leaves_the_screen(tmp_path: Path) -> None:
    child = spawn(tmp_path, "withdraw permission 1")
    child.expect("Withdrawn permission check")
    child.expect("the agent withdrew this permission request")
    child.expect("withdrawn permission answer: .*-32800")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_budget_elapsing_while_the_question_waits_names_the_person(tmp_path: Path) -> None:
    # Issue 30, item 1: the turn's bound ends a question a person was asked and did not
    # answer; the next step says so instead of pointing at the agent (`baton doctor --live`).
    child = spawn(tmp_path, "elicit form", "--timeout", "3")
    child.expect("The agent asks: The scripted agent needs a few details")
    child.expect(pexpect.EOF)  # nobody answers
    said = child.before
    child.close()
    assert child.exitstatus == 3, said
    assert "while a person was asked the agent's question" in said, said
    assert "doctor --live" not in said, said
