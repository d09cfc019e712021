"""`baton doctor`: the table, --json, --live, --config, exit codes, and no leaked secrets."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from baton.cli import exit_codes
from baton.cli.commands import doctor
from baton.cli.main import main
from baton.runtime.agents import config_file as user_config
from baton.runtime.agents.profiles import BUILTIN_OVERRIDE_KEYS, BUILTIN_PROFILES

_SUPPORT = Path(__file__).parent / "fakes" / "support.py"
_spec = importlib.util.spec_from_file_location("baton_runtime_fakes_support_d", _SUPPORT)
assert _spec is not None and _spec.loader is not None
fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fakes)

SECRET = fakes.fake_secret()

JSON_FIELDS = {
    "schema",
    "profile",
    "display_name",
    "state",
    "can_start",
    "next_action",
    "executable",
    "source",
    "version",
    "launch_form",
    "environment_contract",
    "checks",
    "diagnostics",
    "rejected",
    "auth_methods",
    "agent",
    "live",
}


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A PATH of one empty directory, a throw-away HOME, no config file, no overrides."""
    path = tmp_path / "bin"
    path.mkdir()
    monkeypatch.setenv("PATH", str(path))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(user_config.CONFIG_ENV, raising=False)
    for key in BUILTIN_OVERRIDE_KEYS:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(
        user_config.platformdirs, "user_config_path", lambda app: tmp_path / "config" / app
    )
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["doctor", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def json_lines(out: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in out.splitlines()]


def test_doctor_is_a_verb() -> None:
    from baton.cli.main import COMMANDS

    assert "doctor" in COMMANDS


def test_the_table_of_every_profile(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.make_fake(bin_dir, "claude")
    fakes.make_fake(bin_dir, "codex", "wrong-help")
    code, out, _ = run(capsys)
    assert code == exit_codes.OK  # no names: informational
    lines = out.splitlines()
    assert lines[0].split() == ["PROFILE", "STATE", "VERSION", "NEXT", "EXECUTABLE"]
    rows = {line.split()[0]: line for line in lines[1:7]}
    assert list(rows) == list(BUILTIN_PROFILES)
    assert "DISCOVERED" in rows["claude"] and "2.1.83 (Claude Code)" in rows["claude"]
    assert str(bin_dir / "claude-agent-acp") in rows["claude"]
    assert "INCOMPATIBLE" in rows["codex"] and "INSTALL" in rows["codex"]
    assert "NOT_INSTALLED" in rows["gemini"]
    assert "config: none" in out
    assert "LAUNCH_CONTRACT_MISMATCH" in out
    assert "EXECUTABLE_NOT_FOUND" in out
    assert "checks: discovery=FOUND" in out


def test_json_one_object_per_profile(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.make_fake(bin_dir, "gemini")
    code, out, _ = run(capsys, "--json")
    objects = json_lines(out)
    assert [o["profile"] for o in objects] == list(BUILTIN_PROFILES)
    for obj in objects:
        assert set(obj) == JSON_FIELDS
        assert obj["schema"] == "baton/readiness@v1"
    gemini = objects[3]
    assert gemini["state"] == "DISCOVERED" and gemini["version"] == "0.61.0"
    assert gemini["launch_form"] == f"{bin_dir / 'gemini'} --acp"
    assert gemini["live"] is False
    assert code == exit_codes.OK


@pytest.mark.parametrize(
    ("profile", "modes", "live", "expected"),
    [
        ("claude", "good", False, exit_codes.OK),
        ("claude", None, False, exit_codes.NOT_INSTALLED),
        ("claude", "wrong-help", False, exit_codes.NOT_INSTALLED),
        ("claude", "good", True, exit_codes.OK),
        ("codex", "auth", True, exit_codes.AUTH_REQUIRED),
        ("cursor", "account", True, exit_codes.AUTH_REQUIRED),
        ("grok", "crash", True, exit_codes.TURN_FAILED),
        ("grok", "hang-live", True, exit_codes.BUDGET),
        ("opencode", "noisy", True, exit_codes.OK),
    ],
)
def test_exit_codes_for_named_profiles(
    bin_dir: Path,
    capsys: pytest.CaptureFixture[str],
    profile: str,
    modes: str | None,
    live: bool,
    expected: int,
) -> None:
    if modes is not None:
        fakes.make_fake(bin_dir, profile, modes)
    args = [profile, "--json"] + (["--live", "--live-timeout", "1"] if live else [])
    code, out, _ = run(capsys, *args)
    assert code == expected, out
    (obj,) = json_lines(out)
    assert obj["live"] is (live and modes is not None)


def test_first_named_profile_that_cannot_start_decides(
    bin_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fakes.make_fake(bin_dir, "claude")
    fakes.make_fake(bin_dir, "codex", "auth")
    code, out, _ = run(capsys, "claude", "codex", "gemini", "--live", "--json")
    assert code == exit_codes.AUTH_REQUIRED
    states = [o["state"] for o in json_lines(out)]
    assert states == ["READY", "AUTHENTICATION_REQUIRED", "NOT_INSTALLED"]


def test_live_table_shows_auth_methods(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.make_fake(bin_dir, "codex", "auth")
    code, out, _ = run(capsys, "codex", "--live")
    assert code == exit_codes.AUTH_REQUIRED
    assert "AUTHENTICATION_REQUIRED" in out and "AUTHENTICATE" in out
    assert "auth method: fake-login (Log in with Fake, agent)" in out
    assert "agent: fake-agent 9.9.9" in out
    assert "9.9.9" in out.splitlines()[1]  # no version command: initialize's version shows


def test_secrets_never_reach_the_output(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fakes.make_fake(bin_dir, "grok", "secret")
    fakes.make_fake(bin_dir, "claude", "secret,wrong-help")
    fakes.make_fake(bin_dir, "cursor", "crash")
    for args in (("--json",), (), ("--live", "--json"), ("--live",)):
        _, out, err = run(capsys, *args)
        assert SECRET not in out and SECRET not in err
        assert "[REDACTED]" in out


def test_custom_profile_and_persisted_override(
    bin_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    custom = fakes.make_fake(bin_dir, "custom")
    elsewhere = fakes.make_fake(tmp_path / "opt", "claude")
    config = tmp_path / "baton.toml"
    config.write_text(
        f"""
[executables]
claude = "{elsewhere}"

[profiles.my-agent]
display_name = "My Agent"
argv = ["my-agent", "--acp"]
probe_argv = ["--help"]
probe_patterns = ['\\bUsage:\\s+my-agent\\b']
policies = ["ask", "full"]
""",
        encoding="utf-8",
    )
    code, out, _ = run(capsys, "--config", str(config), "claude", "my-agent", "--json", "--live")
    assert code == exit_codes.OK
    claude, mine = json_lines(out)
    assert claude["executable"] == str(elsewhere) and claude["source"] == "config"
    assert mine["executable"] == str(custom) and mine["state"] == "READY"
    assert mine["environment_contract"] == "config/my-agent-environment@v1"
    assert mine["launch_form"] == f"{custom} --acp"


def test_config_from_the_environment(
    bin_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = tmp_path / "env.toml"
    config.write_text('[executables]\ncodex = "/no/such/codex-acp"\n', encoding="utf-8")
    monkeypatch.setenv(user_config.CONFIG_ENV, str(config))
    code, out, _ = run(capsys, "codex")
    assert code == exit_codes.NOT_INSTALLED
    assert f"config: {config}" in out
    assert "next: CONFIGURE" in out
    assert "never a fallback" in out


def test_a_bad_config_is_a_usage_error(
    bin_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text(
        '[profiles.x]\nargv = ["x"]\nprobe_argv = []\nprobe_patterns = ["x"]\nenv = ["OPENAI_*"]\n',
        encoding="utf-8",
    )
    code, out, err = run(capsys, "--config", str(config))
    assert code == exit_codes.USAGE
    assert "CONFIG_FILE_INVALID" in err and "CONFIG_BAD_ENV_KEY" in err
    assert out == ""
    code, _, err = run(capsys, "--config", str(tmp_path / "missing.toml"))
    assert code == exit_codes.USAGE and "CONFIG_NOT_FOUND" in err


def test_unknown_profile(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "nope")
    assert code == exit_codes.USAGE
    assert "unknown profile nope" in err and "claude" in err


def test_bad_live_timeout(bin_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--live-timeout", "0")
    assert code == exit_codes.USAGE
    assert "--live-timeout" in err


def test_nul_override_is_shown_escaped(
    bin_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "nul.toml"
    config.write_text('[executables]\nclaude = "/opt/a\\u0000b"\n', encoding="utf-8")
    code, out, _ = run(capsys, "--config", str(config), "claude")
    assert code == exit_codes.NOT_INSTALLED
    assert "\0" not in out
    assert "EXECUTABLE_PATH_REFUSED" in out and "/opt/a\\0b" in out


def test_printable_escapes_terminal_controls() -> None:
    assert doctor.printable("plain text") == "plain text"
    assert doctor.printable("\x1b[31mred\x1b[0m") == "\\x1b[31mred\\x1b[0m"
    assert doctor.printable("a\0b\u202ec") == "a\\0b\\u202ec"
    assert doctor.printable("tab\there") == "tab\\x09here"


def test_help_lists_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["doctor", "--help"])
    out = capsys.readouterr().out
    for option in ("--json", "--live", "--config", "--live-timeout", "PROFILE"):
        assert option in out
