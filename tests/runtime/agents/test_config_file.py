"""The config file: where it is, custom profiles, persisted overrides, stable error sub-codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from baton.errors import ConfigFileError
from baton.runtime.agents import config_file as uc
from baton.runtime.agents.config_file import CONFIG_ENV, config_path, load_config, parse_config
from baton.runtime.agents.profiles import BUILTIN_PROFILES

GOOD = """
[executables]
claude = "/opt/claude/node_modules/.bin/claude-agent-acp"
my-agent = "/usr/local/bin/my-agent"

[profiles.my-agent]
display_name = "My Agent"
argv = ["my-agent", "--acp"]
env = ["MY_AGENT_API_KEY", "MY_AGENT_HOME"]
env_groups = ["user-config", "network"]
sensitive = ["MY_AGENT_API_KEY"]
version_argv = ["--version"]
probe_argv = ["--help"]
probe_patterns = ['\\bUsage:\\s+my-agent\\b', '--acp\\b']
policies = ["ask", "auto-edits"]
max_frame_bytes = 8388608
strict = true
account_unsupported_patterns = ['plan does not include']
protocol = "1"
"""


def test_a_full_config() -> None:
    config = parse_config(GOOD)
    profile = config.profiles["my-agent"]
    assert profile.display_name == "My Agent"
    assert profile.executables == ("my-agent",)
    assert profile.launch_argv == ("--acp",)
    assert profile.override_env == "BATON_MY_AGENT_ACP_BIN"
    assert profile.version_argv == ("--version",)
    assert profile.probe.argv == ("--help",)
    assert profile.probe.matches("usage: MY-AGENT [--acp]") == []
    assert profile.allowed_policies == ("ask", "auto-edits")
    assert profile.max_frame_bytes == 8388608
    assert profile.strict_mode is True
    assert profile.protocol.pinned == 1
    assert profile.builtin is False
    assert profile.account_unsupported_patterns[0].search("your plan does not include this")
    env = profile.environment
    assert env.id == "config/my-agent-environment@v1"
    assert {"MY_AGENT_API_KEY", "MY_AGENT_HOME", "PATH", "XDG_CONFIG_HOME", "HTTPS_PROXY"} <= (
        env.keys
    )
    assert "ANTHROPIC_API_KEY" not in env.keys
    assert {"MY_AGENT_API_KEY", "HTTPS_PROXY"} <= env.sensitive
    assert "MY_AGENT_HOME" not in env.sensitive
    assert config.executable_override("claude") == "/opt/claude/node_modules/.bin/claude-agent-acp"
    assert config.executable_override("codex") is None
    assert list(config.all_profiles()) == [*BUILTIN_PROFILES, "my-agent"]


def test_minimal_custom_profile_defaults() -> None:
    config = parse_config(
        """
[profiles.tiny]
argv = ["tiny"]
probe_argv = ["--help"]
probe_patterns = ["tiny"]
"""
    )
    profile = config.profiles["tiny"]
    assert profile.allowed_policies == ("ask",)
    assert profile.version_argv == ("--version",)
    assert profile.environment.groups == ("base", "config/tiny")
    assert profile.display_name == "tiny"
    assert profile.protocol.label == "auto"
    # Issue 29: no v2 declaration, so auto offers the stable 1.
    assert profile.protocol.offered == 1 and not profile.protocol.v2_declared


def test_a_profile_may_declare_v2_support() -> None:
    config = parse_config(
        '[profiles.v2]\nargv=["v2"]\nprobe_argv=[]\nprobe_patterns=["v2"]\nv2_support=true\n'
    )
    protocol = config.profiles["v2"].protocol
    assert (protocol.label, protocol.offered, set(protocol.accepted)) == ("auto", 2, {1, 2})


def test_empty_version_argv_means_no_version_command() -> None:
    config = parse_config(
        '[profiles.x]\nargv=["x"]\nversion_argv=[]\nprobe_argv=[]\nprobe_patterns=["x"]\n'
    )
    assert config.profiles["x"].version_argv is None


def test_sensitive_may_mark_a_group_key() -> None:
    config = parse_config(
        """
[profiles.x]
argv = ["x"]
env_groups = ["user-config"]
sensitive = ["XDG_CONFIG_HOME"]
probe_argv = ["--help"]
probe_patterns = ["x"]
"""
    )
    assert "XDG_CONFIG_HOME" in config.profiles["x"].environment.sensitive


def test_empty_config() -> None:
    config = parse_config("")
    assert config.profiles == {}
    assert config.executables == {}


P = '[profiles.x]\nargv = ["x"]\nprobe_argv = ["--help"]\nprobe_patterns = ["x"]\n'


@pytest.mark.parametrize(
    ("text", "sub_code"),
    [
        ("this is = = not toml", uc.CONFIG_SYNTAX),
        ("surprise = 1", uc.CONFIG_UNKNOWN_KEY),
        (P + "colour = 'blue'\n", uc.CONFIG_UNKNOWN_KEY),
        ("profiles = 3", uc.CONFIG_WRONG_TYPE),
        ('[profiles.x]\nargv = "x"\nprobe_argv = []\nprobe_patterns = ["x"]', uc.CONFIG_WRONG_TYPE),
        ('[profiles.x]\nargv = [1]\nprobe_argv = []\nprobe_patterns = ["x"]', uc.CONFIG_WRONG_TYPE),
        ('[profiles.x]\nprobe_argv = []\nprobe_patterns = ["x"]', uc.CONFIG_MISSING_KEY),
        (
            '[profiles.x]\nargv = []\nprobe_argv = []\nprobe_patterns = ["x"]',
            uc.CONFIG_INVALID_VALUE,
        ),
        (
            '[profiles.x]\nargv = ["/usr/bin/x"]\nprobe_argv = []\nprobe_patterns = ["x"]',
            uc.CONFIG_INVALID_VALUE,
        ),
        ('[profiles.x]\nargv = ["x"]\nprobe_argv = []\nprobe_patterns = []', uc.CONFIG_BAD_PATTERN),
        (
            '[profiles.x]\nargv = ["x"]\nprobe_argv = []\nprobe_patterns = ["("]',
            uc.CONFIG_BAD_PATTERN,
        ),
        ('[profiles."Bad Id"]\nargv = ["x"]', uc.CONFIG_BAD_PROFILE_ID),
        ('[profiles.claude]\nargv = ["x"]', uc.CONFIG_SHADOWS_BUILTIN),
        (P + 'env = ["MY_*"]\n', uc.CONFIG_BAD_ENV_KEY),
        (P + 'env = ["BATON_CLAUDE_AGENT_ACP_BIN"]\n', uc.CONFIG_RESERVED_ENV_KEY),
        (P + 'env = ["BATON_X_ACP_BIN"]\n', uc.CONFIG_RESERVED_ENV_KEY),
        (P + 'sensitive = ["NOT_ALLOWED"]\n', uc.CONFIG_SENSITIVE_NOT_ALLOWED),
        (P + 'env_groups = ["everything"]\n', uc.CONFIG_UNKNOWN_GROUP),
        (P + 'policies = ["full"]\n', uc.CONFIG_BAD_POLICY),
        (P + 'policies = ["ask", "yolo"]\n', uc.CONFIG_BAD_POLICY),
        (P + "max_frame_bytes = 12\n", uc.CONFIG_INVALID_VALUE),
        (P + "max_frame_bytes = true\n", uc.CONFIG_WRONG_TYPE),
        (P + "strict = 'yes'\n", uc.CONFIG_WRONG_TYPE),
        (P + "protocol = '3'\n", uc.CONFIG_INVALID_VALUE),
        (P + "protocol = true\n", uc.CONFIG_INVALID_VALUE),
        (P + "v2_support = 'yes'\n", uc.CONFIG_WRONG_TYPE),
        (P + "override_env = 'not a key'\n", uc.CONFIG_BAD_ENV_KEY),
        (P + "override_env = 'BATON_CODEX_ACP_BIN'\n", uc.CONFIG_DUPLICATE_OVERRIDE_KEY),
        (P + "display_name = ''\n", uc.CONFIG_INVALID_VALUE),
        ('[executables]\nnobody = "/bin/x"', uc.CONFIG_UNKNOWN_PROFILE),
        ("[executables]\nclaude = 3", uc.CONFIG_WRONG_TYPE),
        ('[executables]\nclaude = ""', uc.CONFIG_INVALID_VALUE),
        (P + 'version_argv = ["x\\u0000y"]\n', uc.CONFIG_INVALID_VALUE),
    ],
)
def test_invalid_configs(text: str, sub_code: str) -> None:
    with pytest.raises(ConfigFileError) as caught:
        parse_config(text)
    assert caught.value.sub_code == sub_code
    assert caught.value.code == "CONFIG_FILE_INVALID"
    assert sub_code in str(caught.value)
    assert caught.value.fault == "caller"


def test_too_many_profiles() -> None:
    text = "".join(
        f'[profiles.p{i}]\nargv = ["x"]\nprobe_argv = []\nprobe_patterns = ["x"]\n'
        for i in range(uc.MAX_CUSTOM_PROFILES + 1)
    )
    with pytest.raises(ConfigFileError) as caught:
        parse_config(text)
    assert caught.value.sub_code == uc.CONFIG_TOO_MANY


def test_errors_name_the_key() -> None:
    with pytest.raises(ConfigFileError) as caught:
        parse_config(P + 'env = ["OK", "BAD-KEY"]\n', path=Path("/etc/baton.toml"))
    assert caught.value.where == "/etc/baton.toml: profiles.x.env[1]"


def test_a_nul_in_an_executable_is_kept_for_the_resolver() -> None:
    config = parse_config('[executables]\nclaude = "/opt/a\\u0000b"\n')
    assert config.executable_override("claude") == "/opt/a\0b"


def test_sub_codes_are_stable_strings() -> None:
    assert all(re.fullmatch(r"CONFIG_[A-Z_]+", code) for code in uc.CONFIG_SUB_CODES)
    assert len(set(uc.CONFIG_SUB_CODES)) == len(uc.CONFIG_SUB_CODES)


# --- finding the file ------------------------------------------------------------------------


def test_path_precedence(tmp_path: Path) -> None:
    flag = tmp_path / "flag.toml"
    assert config_path(flag, {CONFIG_ENV: "/env.toml"}) == (flag, "flag")
    assert config_path(None, {CONFIG_ENV: "/env.toml"}) == (Path("/env.toml"), "env")
    path, source = config_path(None, {})
    assert source == "default"
    assert path.name == "config.toml" and path.parent.name == "baton"


def test_load_from_flag(tmp_path: Path) -> None:
    file = tmp_path / "config.toml"
    file.write_text(GOOD, encoding="utf-8")
    config = load_config(file, env={})
    assert config.path == file and config.source == "flag"
    assert "my-agent" in config.profiles


def test_load_from_env(tmp_path: Path) -> None:
    file = tmp_path / "c.toml"
    file.write_text('[executables]\ncodex = "/x/codex-acp"\n', encoding="utf-8")
    config = load_config(None, env={CONFIG_ENV: str(file)})
    assert config.source == "env"
    assert config.executable_override("codex") == "/x/codex-acp"


def test_missing_default_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uc.platformdirs, "user_config_path", lambda app: tmp_path / app)
    config = load_config(None, env={})
    assert config.path is None and config.source == "default"
    assert config.profiles == {}


def test_default_file_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(uc.platformdirs, "user_config_path", lambda app: tmp_path / app)
    (tmp_path / "baton").mkdir()
    (tmp_path / "baton" / "config.toml").write_text(GOOD, encoding="utf-8")
    assert "my-agent" in load_config(None, env={}).profiles


@pytest.mark.parametrize("via", ["flag", "env"])
def test_missing_named_file_is_an_error(tmp_path: Path, via: str) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigFileError) as caught:
        if via == "flag":
            load_config(missing, env={})
        else:
            load_config(None, env={CONFIG_ENV: str(missing)})
    assert caught.value.sub_code == uc.CONFIG_NOT_FOUND


def test_unreadable_and_oversized_and_binary(tmp_path: Path) -> None:
    with pytest.raises(ConfigFileError) as caught:
        load_config(tmp_path, env={})  # a directory
    assert caught.value.sub_code == uc.CONFIG_UNREADABLE
    big = tmp_path / "big.toml"
    big.write_bytes(b"#" * (uc.MAX_CONFIG_BYTES + 1))
    with pytest.raises(ConfigFileError) as caught:
        load_config(big, env={})
    assert caught.value.sub_code == uc.CONFIG_TOO_LARGE
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ConfigFileError) as caught:
        load_config(binary, env={})
    assert caught.value.sub_code == uc.CONFIG_SYNTAX


def test_turn_idle_bounds_globally_per_profile_and_in_a_custom_profile() -> None:
    config = parse_config(
        P
        + "idle_timeout = 1800\n"
        + '[turns]\nidle_timeout = 900\n[turns.profiles]\ncodex = "off"\nclaude = 120.5\n'
    )
    assert config.idle_timeout == 900.0
    profiles = config.all_profiles()
    assert profiles["x"].idle_timeout == 1800.0
    assert profiles["codex"].idle_timeout == "off"
    assert profiles["claude"].idle_timeout == 120.5
    assert profiles["gemini"].idle_timeout is None
    assert BUILTIN_PROFILES["codex"].idle_timeout is None, "the built-in table is not changed"


def test_turns_profiles_override_a_custom_profiles_own_bound() -> None:
    config = parse_config(P + "idle_timeout = 1800\n[turns.profiles]\nx = 60\n")
    assert config.all_profiles()["x"].idle_timeout == 60.0


def test_no_turns_table_leaves_every_bound_to_the_default() -> None:
    config = parse_config("")
    assert config.idle_timeout is None and config.profile_idle_timeouts == {}


@pytest.mark.parametrize(
    ("text", "sub_code"),
    [
        ("[turns]\nidle_timeout = 0\n", uc.CONFIG_INVALID_VALUE),
        ("[turns]\nidle_timeout = -5\n", uc.CONFIG_INVALID_VALUE),
        ("[turns]\nidle_timeout = inf\n", uc.CONFIG_INVALID_VALUE),
        ("[turns]\nidle_timeout = nan\n", uc.CONFIG_INVALID_VALUE),
        ('[turns]\nidle_timeout = "never"\n', uc.CONFIG_INVALID_VALUE),
        ("[turns]\nidle_timeout = true\n", uc.CONFIG_WRONG_TYPE),
        ("[turns]\nidle_timeout = [600]\n", uc.CONFIG_WRONG_TYPE),
        ("[turns]\ntimeout = 5\n", uc.CONFIG_UNKNOWN_KEY),
        ("turns = 3\n", uc.CONFIG_WRONG_TYPE),
        ("[turns.profiles]\nnobody = 5\n", uc.CONFIG_UNKNOWN_PROFILE),
        ("[turns.profiles]\nclaude = 0\n", uc.CONFIG_INVALID_VALUE),
        (P + "idle_timeout = 'soon'\n", uc.CONFIG_INVALID_VALUE),
        (P + "idle_timeout = false\n", uc.CONFIG_WRONG_TYPE),
    ],
)
def test_invalid_turn_bounds(text: str, sub_code: str) -> None:
    with pytest.raises(ConfigFileError) as caught:
        parse_config(text)
    assert caught.value.sub_code == sub_code
