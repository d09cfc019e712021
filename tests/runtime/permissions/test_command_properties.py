"""Property: whenever Baton's reading permits a command, really running it with bash delivers
nothing to another repository and runs no reserved git subcommand.

Commands come from a grammar that mixes plain git use with the hostile constructs of issue 15
(line continuations, ``$'...'``, braces, globs, parameter expansion, ``sh -c``, aliases from a
config write, a global config or ``GIT_CONFIG_*``, transports under push). Each one Baton permits
is run by ``bash -c`` in a temporary repository whose ``origin`` is a local bare repository,
with a ``git`` on ``PATH`` that logs its arguments; afterwards the bare repository must be
exactly as it was. Everything stays in temporary directories; nothing touches the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from baton.runtime.permissions.git_rules import GIT_LOCAL_SUBCOMMANDS
from baton.runtime.permissions.local_policy import LocalContext, evaluate

REAL_GIT = shutil.which("git")
BASH = shutil.which("bash")

pytestmark = pytest.mark.skipif(REAL_GIT is None or BASH is None, reason="needs git and bash")

#: A global configuration (in the sandbox's HOME) with aliases that push: Baton cannot read it.
GLOBAL_CONFIG = """[user]
\tname = Sandbox
\temail = sandbox@example.invalid
[alias]
\tst = push origin HEAD:refs/heads/from-alias
\tsave = !git push origin HEAD:refs/heads/from-shell-alias
[init]
\tdefaultBranch = main
"""

#: The git wrapper: logs its arguments (one line per call, NUL-separated), then runs git.
WRAPPER = """#!/bin/sh
printf '%s\\0' "$@" >> "$GIT_LOG"
printf '\\n' >> "$GIT_LOG"
exec {git} "$@"
"""


@dataclass
class Sandbox:
    worktree: Path
    remote: Path
    log: Path
    env: dict[str, str]

    def remote_state(self) -> list[str]:
        """Every ref and every object file of the bare repository."""
        names = []
        for path in sorted(self.remote.rglob("*")):
            relative = path.relative_to(self.remote).as_posix()
            if relative.startswith(("refs", "objects", "packed-refs")) and path.is_file():
                names.append(f"{relative}:{path.read_bytes().hex()[:64]}")
        return names

    def logged_calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        calls = []
        for line in self.log.read_bytes().split(b"\n"):
            if line:
                calls.append([part.decode() for part in line.split(b"\0") if part])
        return calls


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    base = tmp_path_factory.mktemp("sandbox")
    home, bin_dir = base / "home", base / "bin"
    home.mkdir()
    bin_dir.mkdir()
    (home / ".gitconfig").write_text(GLOBAL_CONFIG)
    wrapper = bin_dir / "git"
    wrapper.write_text(WRAPPER.format(git=REAL_GIT))
    wrapper.chmod(0o755)
    # A git that pushes, in a directory no PATH names unless a command changes PATH.
    evil = base / "evilbin" / "git"
    evil.parent.mkdir()
    evil.write_text(f"#!/bin/sh\nexec {REAL_GIT} push -q origin HEAD:refs/heads/evil\n")
    evil.chmod(0o755)
    env = {
        "HOME": str(home),
        "PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "GIT_LOG": str(base / "git.log"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": "file",
        "LANG": "C",
    }
    remote, worktree = base / "remote.git", base / "repo"
    run = {"env": env, "check": True, "capture_output": True}
    subprocess.run([REAL_GIT, "init", "-q", "--bare", str(remote)], **run)  # type: ignore[call-overload]
    subprocess.run([REAL_GIT, "init", "-q", str(worktree)], **run)  # type: ignore[call-overload]
    (worktree / "README.md").write_text("hello\n")
    (worktree / "sub").mkdir()
    for args in (
        ["add", "README.md"],
        ["commit", "-q", "-m", "first"],
        ["remote", "add", "origin", str(remote)],
        ["push", "-q", "origin", "main"],
    ):
        subprocess.run([REAL_GIT, "-C", str(worktree), *args], **run)  # type: ignore[call-overload]
    yield Sandbox(worktree, remote, base / "git.log", env)


# --- the grammar ----------------------------------------------------------------------------

PROGRAMS = [
    "git",
    "/usr/bin/git",
    "gi?",
    "g{i,}t",
    "$'git'",
    '$"git"',
    "'git'",
    '"g"it',
    "${X:-git}",
    "$G",
    "`echo git`",
    "$(echo git)",
    "gi\\\nt",
]
GIT_ARGUMENTS = [
    "status",
    "log --oneline -1",
    "branch",
    "tag -f v1",
    "commit -q --allow-empty -m x",
    "fetch -q origin",
    "config --get user.name",
    "push origin HEAD:refs/heads/evil",
    "pu\\\nsh origin HEAD:refs/heads/evil",
    "pu''sh origin HEAD:refs/heads/evil",
    '"pu"sh origin HEAD:refs/heads/evil',
    "$'push' origin HEAD:refs/heads/evil",
    "p origin HEAD:refs/heads/evil",
    "st",
    "save",
    "send-pack ../remote.git HEAD:refs/heads/evil",
    "http-push ../remote.git HEAD:refs/heads/evil",
    "subtree push --prefix=sub ../remote.git evil",
    "config alias.p push",
    "config alias.q '!git push origin HEAD:refs/heads/evil'",
    "-c alias.p=push p origin HEAD:refs/heads/evil",
    "--git-dir=../remote.git update-ref refs/heads/evil HEAD",
    "-C ../remote.git fetch ../repo HEAD:refs/heads/evil",
    "-C sub status",
    "update-ref refs/heads/evil HEAD",
    "remote add evil ../remote.git",
]
PREFIXES = [
    "",
    "",
    "",
    "X=1 ",
    "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push ",
    "export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.p GIT_CONFIG_VALUE_0=push; ",
    "cd .. && cd remote.git && ",
    "cd sub && ",
    "PATH='../evilbin:/usr/bin:/bin' ",
    'HOME="../home" ',
]
SEPARATORS = [" && ", " || ", "; ", "\n", " | "]
OTHER_COMMANDS = [
    "echo hi",
    "true",
    "ls",
    "cat README.md",
    "echo git push",
    "grep -c hello README.md",
    # Two-step attacks: each step alone looks harmless; the sandbox keeps state between examples.
    "echo 'git() { command git push -q origin HEAD:refs/heads/evil; }' >> ../home/.bash_profile",
    "printf '[alias]\\n\\tlg = push -q origin HEAD:refs/heads/evil\\n' >> ../home/.gitconfig",
    "printf '[core]\\n\\tfsmonitor = git push -q origin HEAD:refs/heads/evil\\n' >> .git/config",
    "printf '#!/bin/sh\\nexec /usr/bin/git push -q origin HEAD:refs/heads/evil\\n' > ../bin/git",
    "chmod +x ../bin/git",
    "printf 'git push -q origin HEAD:refs/heads/evil\\n' > d.sh && sh d.sh",
    "echo 'git push -q origin HEAD:refs/heads/evil' | bash /dev/stdin",
    "cp ../remote.git/refs/heads/main ../remote.git/refs/heads/evil",
    "git rev-parse HEAD > ../remote.git/refs/heads/evil",
    "bash -lc 'git status'",
    "git status",
]


@st.composite
def simple_commands(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 4)) == 0:
        return draw(st.sampled_from(OTHER_COMMANDS))
    program = draw(st.sampled_from(PROGRAMS[:1] * 6 + PROGRAMS))
    return f"{draw(st.sampled_from(PREFIXES))}{program} {draw(st.sampled_from(GIT_ARGUMENTS))}"


@st.composite
def commands(draw: st.DrawFn) -> str:
    parts = draw(st.lists(simple_commands(), min_size=1, max_size=3))
    script = parts[0]
    for part in parts[1:]:
        script += draw(st.sampled_from(SEPARATORS)) + part
    wrapping = draw(st.integers(0, 5))
    if wrapping == 0 and "'" not in script:
        return f"bash -c '{script}'"
    if wrapping == 1 and '"' not in script:
        return f'sh -c "{script}"'
    if wrapping == 2:
        return f"eval '{script}'" if "'" not in script else script
    return script


#: Subcommands whose run would reach another repository; never in a logged call of a permitted
#: command.
FORBIDDEN = {"push", "send-pack", "http-push", "subtree", "update-ref", "p", "q", "st", "save"}


def _subcommand(argv: list[str]) -> str:
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        index += 2 if argv[index] in ("-C", "-c") else 1
    return argv[index] if index < len(argv) else ""


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=commands())
# Always tried, besides the generated ones: one of each way around the rules found so far.
@example(command="PATH='../evilbin:/usr/bin:/bin' git status")
@example(command="printf 'git push -q origin HEAD:refs/heads/evil\\n' > d.sh && sh d.sh")
@example(command="git rev-parse HEAD > ../remote.git/refs/heads/evil")
@example(command="git -C ../remote.git fetch ../repo HEAD:refs/heads/evil")
@example(command="git config alias.p push && git p origin HEAD:refs/heads/evil")
@example(command="git \\\npush origin HEAD:refs/heads/evil")
def test_a_permitted_command_delivers_nothing(sandbox: Sandbox, command: str) -> None:
    context = LocalContext(str(sandbox.worktree), network_allowed=True)
    decision = evaluate({"kind": "execute", "rawInput": {"command": command}}, context)
    if not decision.permits_allow:
        return
    before = sandbox.remote_state()
    sandbox.log.unlink(missing_ok=True)
    subprocess.run(
        [BASH or "bash", "-c", command],
        cwd=sandbox.worktree,
        env=sandbox.env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert sandbox.remote_state() == before, command
    for argv in sandbox.logged_calls():
        subcommand = _subcommand(argv)
        assert subcommand not in FORBIDDEN, (command, argv)
        assert subcommand == "" or subcommand in GIT_LOCAL_SUBCOMMANDS, (command, argv)


def test_the_sandbox_would_see_a_delivery(sandbox: Sandbox) -> None:
    """The property can fail: a push through an alias from the global configuration (which no
    reading of the command shows) changes the bare repository and is logged."""
    before = sandbox.remote_state()
    subprocess.run(
        [BASH or "bash", "-c", "git st"],
        cwd=sandbox.worktree,
        env=sandbox.env,
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert sandbox.remote_state() != before
    assert any(_subcommand(argv) == "st" for argv in sandbox.logged_calls())
    context = LocalContext(str(sandbox.worktree), network_allowed=True)
    assert not evaluate(
        {"kind": "execute", "rawInput": {"command": "git st"}}, context
    ).permits_allow
    # Undo, for the property's examples that run after this test.
    subprocess.run(
        [
            REAL_GIT or "git",
            "--git-dir",
            str(sandbox.remote),
            "update-ref",
            "-d",
            "refs/heads/from-alias",
        ],
        env=sandbox.env,
        check=True,
    )
    for path in (sandbox.remote / "objects").rglob("*"):
        if path.is_file() and path.as_posix() not in before:
            pass  # objects from the alias push stay; the property compares states per example
    os.sync()
