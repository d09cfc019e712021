"""`baton session fork NAME NEW [--at-turn N]` (issue 29) as a user runs it, against the
scripted agent: a session of its own continuing the parent's context, `--at-turn` only where
the agent advertises Baton's extension, a stable refusal where session/fork is not
advertised, and with a worktree, the fork's own worktree branched from the parent's state."""

from __future__ import annotations

import json
from pathlib import Path

from cli.helpers import AGENT, baton, json_lines
from workspace_repos import git, make_repo

FORK_CAP = "--cap sessionCapabilities.fork={}"
AT_TURN_CAP = '--cap \'sessionCapabilities.fork={"_meta":{"baton.forkAtTurn":true}}\''


def _session(tmp_path: Path, name: str, caps: str, *extra: str) -> None:
    command = f"{AGENT} --state-dir {tmp_path / 'agent-state'} {caps}"
    made = baton(tmp_path, "session", "new", name, "--agent-command", command, *extra)
    assert made.returncode == 0, made.stderr


def _turn(tmp_path: Path, name: str, text: str, *extra: str) -> dict[str, object]:
    done = baton(tmp_path, "run", "--session", name, "--json", *extra, text)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    return json_lines(done.stdout)[-1]


def _agent_prompts(tmp_path: Path, provider_id: str) -> list[str]:
    data = json.loads((tmp_path / "agent-state" / f"{provider_id}.json").read_text())
    return [
        e["content"]["text"]
        for e in data["history"]
        if e.get("sessionUpdate") == "user_message_chunk"
    ]


def test_fork_continues_the_parents_context_as_a_session_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "agent-state").mkdir()
    _session(tmp_path, "main", AT_TURN_CAP)
    for text in ("echo one", "echo two"):
        _turn(tmp_path, "main", text)
    done = baton(tmp_path, "session", "fork", "main", "alt")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "alt (forked from main, 2 turns of context)"
    _turn(tmp_path, "alt", "echo three")
    history = baton(tmp_path, "session", "history", "alt", "--json")
    turns = json_lines(history.stdout)
    assert [(t["prompt"], t["inheritedFrom"]) for t in turns] == [
        ("echo one", "main"),
        ("echo two", "main"),
        ("echo three", None),
    ]
    text = baton(tmp_path, "session", "history", "alt").stdout
    assert "— turn 1 · " in text and " · in main" in text
    assert "forked     from main (2 turns)" in baton(tmp_path, "session", "show", "alt").stdout
    shown = json_lines(baton(tmp_path, "session", "show", "alt", "--json").stdout)[0]
    assert shown["forkedFrom"] == "main" and shown["forkTurns"] == 2
    parent = json_lines(baton(tmp_path, "session", "show", "main", "--json").stdout)[0]
    assert shown["providerSessionId"] != parent["providerSessionId"]
    assert _agent_prompts(tmp_path, shown["providerSessionId"]) == [
        "echo one",
        "echo two",
        "echo three",
    ]
    early = baton(tmp_path, "session", "fork", "main", "early", "--at-turn", "1", "--json")
    assert early.returncode == 0, early.stderr
    record = json_lines(early.stdout)[0]
    assert record["forkTurns"] == 1 and record["forkedFrom"] == "main"
    assert _agent_prompts(tmp_path, record["providerSessionId"]) == ["echo one"]
    beyond = baton(tmp_path, "session", "fork", "main", "late", "--at-turn", "9")
    assert beyond.returncode == 2 and "INVALID_ARGUMENT" in beyond.stderr
    taken = baton(tmp_path, "session", "fork", "main", "alt")
    assert taken.returncode != 0 and "SESSION_NAME_TAKEN" in taken.stderr
    missing = baton(tmp_path, "session", "fork", "nobody", "x")
    assert missing.returncode != 0 and "SESSION_NOT_FOUND" in missing.stderr


def test_at_turn_needs_the_agents_support(tmp_path: Path) -> None:
    (tmp_path / "agent-state").mkdir()
    _session(tmp_path, "main", FORK_CAP)
    _turn(tmp_path, "main", "echo one")
    done = baton(tmp_path, "session", "fork", "main", "early", "--at-turn", "1", "--json")
    assert done.returncode == 2
    assert "SESSION_FORK_AT_TURN_UNSUPPORTED" in done.stderr
    assert "leave out --at-turn" in done.stderr
    assert json_lines(done.stdout)[-1]["errorCode"] == "SESSION_FORK_AT_TURN_UNSUPPORTED"
    whole = baton(tmp_path, "session", "fork", "main", "whole")
    assert whole.returncode == 0, whole.stderr


def test_not_advertised_is_refused_with_the_next_step(tmp_path: Path) -> None:
    (tmp_path / "agent-state").mkdir()
    _session(tmp_path, "main", "")
    _turn(tmp_path, "main", "echo one")
    done = baton(tmp_path, "session", "fork", "main", "alt")
    assert done.returncode == 2
    assert "SESSION_FORK_NOT_ADVERTISED" in done.stderr and "baton session new" in done.stderr
    listed = [r["name"] for r in json_lines(baton(tmp_path, "sessions", "--json").stdout)]
    assert listed == ["main"]


def test_a_fork_gets_its_own_worktree_from_the_parents_current_state(tmp_path: Path) -> None:
    (tmp_path / "agent-state").mkdir()
    repo = make_repo(tmp_path / "repo")
    _session(tmp_path, "main", FORK_CAP, "--cwd", str(repo), "--workspace", "worktree")
    unattended = ("--policy", "auto-edits", "--allow-unattended")
    _turn(tmp_path, "main", "write one.txt from the parent", *unattended)
    done = baton(tmp_path, "session", "fork", "main", "alt", "--json")
    assert done.returncode == 0, done.stderr
    result = _turn(tmp_path, "alt", "write two.txt from the fork", *unattended)
    changes = result["workspaceChanges"]
    assert isinstance(changes, dict) and changes["workspace"] == "session-alt"
    assert changes["branch"] == "baton/session-alt"
    fork_tree = Path(changes["path"])
    # The fork started from the parent's uncommitted state, and has its own change only.
    assert (fork_tree / "one.txt").read_text() == "from the parent"
    assert (fork_tree / "two.txt").read_text() == "from the fork"
    assert [f["path"] for f in changes["files"]] == ["two.txt"]
    assert changes["baseCounts"]["added"] == 1  # since its base: the parent's state
    parent = json_lines(baton(tmp_path, "workspace", "show", "session-main", "--json").stdout)[0]
    parent_tree = Path(parent["path"])
    assert parent_tree != fork_tree and not (parent_tree / "two.txt").exists()
    # The user's checkout and the parent's branch are untouched.
    assert not (repo / "one.txt").exists()
    assert git(repo, "status", "--porcelain") == ""
    log = git(repo, "log", "--format=%s", "baton/session-alt")
    assert log.splitlines()[0] == "Baton: the state of workspace session-main"
    assert git(repo, "log", "--format=%s", "baton/session-main").splitlines() == ["initial"]
