"""`baton completion`: scripts generated from the parser; the bash one tested by sourcing it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from .helpers import baton

COMPLETE = """
source {script}
complete_words() {{
  COMP_WORDS=("$@"); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=()
  _baton
  echo "${{COMPREPLY[*]}}"
}}
complete_words baton r
complete_words baton run --pol
complete_words baton run --policy ""
complete_words baton run --agent claude --js
complete_words baton journal ""
complete_words baton journal verify --j
complete_words baton completion ""
complete -p baton
"""


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_from_the_parser(tmp_path: Path) -> None:
    done = baton(tmp_path, "completion", "bash")
    assert done.returncode == 0
    script = tmp_path / "baton.bash"
    script.write_text(done.stdout)
    ran = subprocess.run(
        ["bash", "--norc", "-c", COMPLETE.format(script=script)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.splitlines() == [
        "run runs recover",
        "--policy",
        "ask auto-edits full",
        "--json",
        "show verify -h --help",
        "--json",
        "bash zsh fish -h --help",
        "complete -F _baton baton",
    ]


def test_zsh_and_fish_scripts_name_every_verb(tmp_path: Path) -> None:
    zsh = baton(tmp_path, "completion", "zsh").stdout
    assert zsh.startswith("#compdef baton") and "bashcompinit" in zsh
    fish = baton(tmp_path, "completion", "fish").stdout
    for verb in ("run", "runs", "show", "recover", "doctor", "journal", "agent", "completion"):
        assert f"-a {verb} " in fish
    assert "-l policy -x -a 'ask auto-edits full'" in fish
