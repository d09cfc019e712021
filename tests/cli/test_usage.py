"""Input validation, one spelling per meaning, usage of the verb at fault, fast --version, lazy
verbs and examples in every help."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from baton.cli import exit_codes
from baton.cli.main import VERBS, build_parser

from .helpers import AGENT, baton, json_lines


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_an_empty_prompt_is_a_usage_error(tmp_path: Path, prompt: str) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, prompt)
    assert done.returncode == exit_codes.USAGE
    assert "prompt is empty" in done.stderr
    assert not (tmp_path / "d").exists() or not json_lines(baton(tmp_path, "runs", "--json").stdout)


@pytest.mark.parametrize("stdin", ["", "  \n"])
def test_an_empty_stdin_prompt_is_a_usage_error(tmp_path: Path, stdin: str) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "-", stdin=stdin)
    assert done.returncode == exit_codes.USAGE
    assert "standard input is empty" in done.stderr


@pytest.mark.parametrize("value", ["-1", "0", "nan", "inf", "soon"])
@pytest.mark.parametrize("flag", ["--timeout", "--idle-timeout"])
def test_bounds_must_be_positive(tmp_path: Path, flag: str, value: str) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, flag, value, "echo hi")
    assert done.returncode == exit_codes.USAGE
    assert "positive number of seconds" in done.stderr


def test_off_disables_a_bound(tmp_path: Path) -> None:
    done = baton(
        tmp_path,
        "run",
        "--agent-command",
        AGENT,
        "--timeout",
        "off",
        "--idle-timeout",
        "OFF",
        "echo hi",
    )
    assert done.returncode == 0, done.stderr


def test_an_unknown_flag_shows_the_verbs_usage(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--bogus", "x")
    assert done.returncode == exit_codes.USAGE
    assert done.stderr.startswith("usage: baton run ")
    assert "unrecognized arguments: --bogus" in done.stderr
    done = baton(tmp_path, "journal", "verify", "--bogus")
    assert done.stderr.startswith("usage: baton journal verify ")


def test_session_options_and_the_config_file_have_one_flag_each(tmp_path: Path) -> None:
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--set-option", "novalue", "echo hi")
    assert done.returncode == exit_codes.USAGE and "--set-option takes ID=VALUE" in done.stderr
    done = baton(
        tmp_path, "run", "--agent-command", AGENT, "--set-option", "thinking=true", "echo hi"
    )
    assert done.returncode == 0, done.stderr
    config = tmp_path / "baton.toml"
    config.write_text("[executables]\n")
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--config", str(config), "echo hi")
    assert done.returncode == 0, done.stderr
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--config", "/nope.toml", "echo hi")
    assert done.returncode == exit_codes.USAGE
    done = baton(tmp_path, "run", "--agent-command", AGENT, "--config", "mode=plan", "echo hi")
    assert done.returncode == exit_codes.USAGE and "--set-option mode=plan" in done.stderr


def test_json_is_one_flag_and_format_json_its_alias(tmp_path: Path) -> None:
    one = json_lines(baton(tmp_path, "run", "--agent-command", AGENT, "--json", "echo a").stdout)
    two = json_lines(
        baton(tmp_path, "run", "--agent-command", AGENT, "--format", "json", "echo a").stdout
    )
    assert [e["type"] for e in one] == [e["type"] for e in two]
    assert one[0]["schemaVersion"] == one[-1]["schemaVersion"] == 1


def test_version_and_its_short_flag() -> None:
    for flag in ("--version", "-V"):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "from baton.cli.main import entry; raise SystemExit(entry())",
                flag,
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0 and done.stdout.startswith("baton "), done


def test_version_imports_no_verb_and_no_asyncio() -> None:
    code = (
        "import sys; sys.argv = ['baton', '--version']; from baton.cli.main import entry; "
        "entry(); print(sorted(m for m in sys.modules if m in ('asyncio', 'argparse', 'typing', "
        "'importlib.metadata') "
        "or m.startswith('baton.cli.commands') or m.startswith('baton.runtime')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "[]"


def test_the_fast_version_line_is_the_full_one_and_a_possible_clash_takes_the_full_path(
    tmp_path: Path,
) -> None:
    from baton.cli.version import version_line

    code = "import sys; sys.argv = ['baton', '-V']; from baton.cli.main import entry; entry()"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == version_line() + "\n" and done.stderr == ""
    (tmp_path / "baton-9.0.dist-info").mkdir()
    (tmp_path / "baton-9.0.dist-info" / "METADATA").write_text("Name: baton\nVersion: 9.0\n")
    (tmp_path / "baton-9.0.dist-info" / "top_level.txt").write_text("baton\n")
    done = subprocess.run(
        [sys.executable, "-c", f"import sys; sys.path.append({str(tmp_path)!r}); {code}"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout == version_line() + "\n"
    assert "also installed by baton" in done.stderr


def test_a_verb_imports_only_its_own_module() -> None:
    code = (
        "import sys; from baton.cli.main import build_parser; build_parser('runs'); "
        "print(sorted(m for m in sys.modules if m.startswith('baton.cli.commands.') "
        "or m in ('baton.runtime.runtime', 'baton.cli.permission_prompt')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "['baton.cli.commands.runs']"


def test_top_level_help_lists_every_verb_without_importing_them(tmp_path: Path) -> None:
    done = baton(tmp_path, "--help")
    assert done.returncode == 0
    for verb in VERBS:
        assert verb in done.stdout


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_every_verb_has_examples_in_its_help(verb: str) -> None:
    parser = build_parser(verb)
    sub = parser._subparsers._group_actions[0].choices[verb]  # type: ignore[union-attr]
    assert "examples:" in sub.format_help()
