"""Environment contracts: exact allowlists, sensitive classification, the probe environment."""

from __future__ import annotations

import pytest

from baton.errors import ConfigurationError
from baton.runtime.agents.environment import (
    BASE_GROUP,
    CLAUDE_ENVIRONMENT,
    CODEX_ENVIRONMENT,
    GEMINI_ENVIRONMENT,
    NETWORK_GROUP,
    OPENCODE_ENVIRONMENT,
    PROBE_ENVIRONMENT_KEYS,
    SHARED_GROUPS,
    USER_CONFIG_GROUP,
    EnvironmentContract,
    child_environment,
    compose,
    group,
    probe_environment,
    sensitive_values,
)
from baton.runtime.agents.profiles import (
    BUILTIN_PROFILES,
    CLAUDE,
    CODEX,
    CURSOR,
    GEMINI,
    GROK,
    OPENCODE,
)

PARENT = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "USER": "u",
    "LOGNAME": "u",
    "SHELL": "/bin/bash",
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TERM": "xterm-256color",
    "LC_CTYPE": "C.UTF-8",
    "TEMP": "/tmp",
    "ANTHROPIC_API_KEY": "sk-ant-api03-parent-secret-value",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
    "OPENAI_API_KEY": "sk-openai-parent-secret",
    "CODEX_HOME": "/home/u/.codex",
    "GEMINI_API_KEY": "gemini-parent-secret",
    "XAI_API_KEY": "xai-parent-secret-value",
    "CURSOR_API_KEY": "cursor-parent-secret",
    "HTTPS_PROXY": "http://user:pw@proxy:3128",
    "NO_PROXY": "localhost",
    "XDG_CONFIG_HOME": "/home/u/.config",
    "BATON_CLAUDE_AGENT_ACP_BIN": "/opt/claude-agent-acp",
    "BATON_CODEX_ACP_BIN": "/opt/codex-acp",
    "BATON_CONFIG": "/home/u/baton.toml",
    "AWS_SECRET_ACCESS_KEY": "aws-parent-secret-value",
    "ANTHROPIC_API_KEY_EXTRA": "must-not-pass",
    "GITHUB_TOKEN": "ghp_must_not_pass",
    "SSH_AUTH_SOCK": "/tmp/ssh.sock",
    "PYTHONPATH": "/evil",
    "LD_PRELOAD": "/evil.so",
}


def test_base_group_is_the_portable_base() -> None:
    assert BASE_GROUP.keys == {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TMPDIR",
        "LANG",
        "LC_ALL",
    }
    assert "TERM" not in BASE_GROUP.keys


def test_every_contract_has_base_user_config_and_network() -> None:
    for profile in BUILTIN_PROFILES.values():
        keys = profile.environment.keys
        assert BASE_GROUP.keys <= keys
        assert USER_CONFIG_GROUP.keys <= keys
        assert NETWORK_GROUP.keys <= keys
        assert profile.environment.sensitive <= keys


def test_proxies_are_sensitive_no_proxy_is_not() -> None:
    for profile in BUILTIN_PROFILES.values():
        sensitive = profile.environment.sensitive
        for key in ("HTTP_PROXY", "https_proxy", "ALL_PROXY"):
            assert key in sensitive
        assert "NO_PROXY" not in sensitive


def test_claude_contract() -> None:
    keys, sensitive = CLAUDE_ENVIRONMENT.keys, CLAUDE_ENVIRONMENT.sensitive
    assert {"ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "AWS_REGION", "GEMINI_API_KEY"} <= keys
    assert {"ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR", "AWS_SECRET_ACCESS_KEY"} <= sensitive
    assert "ANTHROPIC_BASE_URL" not in sensitive
    assert "AWS_REGION" not in sensitive


def test_codex_gemini_opencode_contracts() -> None:
    assert {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME", "OPENAI_BASE_URL"} <= (
        CODEX_ENVIRONMENT.keys
    )
    assert {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"} <= CODEX_ENVIRONMENT.sensitive
    assert "ANTHROPIC_API_KEY" not in CODEX_ENVIRONMENT.keys
    assert "GOOGLE_CLOUD_PROJECT" in GEMINI_ENVIRONMENT.keys
    assert "GEMINI_API_KEY" in GEMINI_ENVIRONMENT.sensitive
    assert "OPENAI_API_KEY" not in OPENCODE_ENVIRONMENT.keys
    assert "ANTHROPIC_API_KEY" not in OPENCODE_ENVIRONMENT.keys


def test_child_environment_is_exactly_the_contract() -> None:
    env = child_environment(CLAUDE, PARENT)
    assert set(env) <= CLAUDE.environment.keys
    assert env["ANTHROPIC_API_KEY"] == PARENT["ANTHROPIC_API_KEY"]
    assert env["HTTPS_PROXY"] == PARENT["HTTPS_PROXY"]
    for key in (
        "TERM",
        "BATON_CLAUDE_AGENT_ACP_BIN",
        "BATON_CONFIG",
        "ANTHROPIC_API_KEY_EXTRA",
        "GITHUB_TOKEN",
        "OPENAI_API_KEY",
        "XAI_API_KEY",
        "PYTHONPATH",
        "LD_PRELOAD",
        "SSH_AUTH_SOCK",
        "LC_CTYPE",
    ):
        assert key not in env


@pytest.mark.parametrize("profile", list(BUILTIN_PROFILES.values()), ids=list(BUILTIN_PROFILES))
def test_no_override_key_reaches_any_child(profile: object) -> None:
    env = child_environment(profile, PARENT)  # type: ignore[arg-type]
    assert not any(key.startswith("BATON_") for key in env)


def test_provider_keys_stay_with_their_provider() -> None:
    assert "OPENAI_API_KEY" in child_environment(CODEX, PARENT)
    assert "XAI_API_KEY" in child_environment(GROK, PARENT)
    assert "CURSOR_API_KEY" in child_environment(CURSOR, PARENT)
    assert "GEMINI_API_KEY" in child_environment(GEMINI, PARENT)
    assert set(child_environment(OPENCODE, PARENT)) == {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "TMPDIR",
        "LANG",
        "LC_ALL",
        "HTTPS_PROXY",
        "NO_PROXY",
        "XDG_CONFIG_HOME",
    }


def test_values_with_nul_are_dropped() -> None:
    assert "HOME" not in child_environment(CLAUDE, {"HOME": "/a\0b", "PATH": "/bin"})


def test_probe_environment_is_credential_free() -> None:
    env = probe_environment(PARENT)
    assert set(env) == {k for k in PROBE_ENVIRONMENT_KEYS if k in PARENT}
    assert "ANTHROPIC_API_KEY" not in env
    assert "HTTPS_PROXY" not in env
    assert env["LC_CTYPE"] == "C.UTF-8"
    for value in env.values():
        assert "secret" not in value


def test_sensitive_values() -> None:
    values = sensitive_values(CLAUDE, PARENT)
    assert PARENT["ANTHROPIC_API_KEY"] in values
    assert PARENT["AWS_SECRET_ACCESS_KEY"] in values
    assert PARENT["HTTPS_PROXY"] in values
    assert PARENT["GEMINI_API_KEY"] in values
    assert PARENT["OPENAI_API_KEY"] not in values  # not Claude's
    assert PARENT["ANTHROPIC_BASE_URL"] not in values  # not sensitive
    assert values == sorted(values, key=lambda v: (-len(v), v))
    assert PARENT["CODEX_HOME"] in sensitive_values(CODEX, PARENT)


def test_sensitive_values_skip_empty_and_duplicates() -> None:
    env = {"ANTHROPIC_API_KEY": "same-secret-value", "ANTHROPIC_AUTH_TOKEN": "same-secret-value"}
    assert sensitive_values(CLAUDE, env) == ["same-secret-value"]
    assert sensitive_values(CLAUDE, {"ANTHROPIC_API_KEY": ""}) == []


@pytest.mark.parametrize("key", ["ANTHROPIC_*", "FOO=", "1ABC", "A B", "", "X" * 200])
def test_keys_must_be_exact_names(key: str) -> None:
    with pytest.raises(ConfigurationError):
        group("bad", [key])


def test_sensitive_must_be_allowed() -> None:
    with pytest.raises(ConfigurationError):
        group("bad", ["A"], ["B"])
    with pytest.raises(ConfigurationError):
        EnvironmentContract("x", 1, BASE_GROUP.keys, frozenset({"NOPE"}))


def test_contract_needs_base_and_a_version() -> None:
    with pytest.raises(ConfigurationError):
        EnvironmentContract("x", 1, frozenset({"PATH"}), frozenset())
    with pytest.raises(ConfigurationError):
        EnvironmentContract("x", 0, BASE_GROUP.keys, frozenset())


def test_compose_records_groups() -> None:
    contract = compose("baton/demo-environment", 2, USER_CONFIG_GROUP)
    assert contract.id == "baton/demo-environment@v2"
    assert contract.groups == ("base", "user-config")


def test_shared_groups_by_name() -> None:
    assert {"user-config", "network", "aws", "google", "anthropic", "codex"} <= set(SHARED_GROUPS)
    assert "base" not in SHARED_GROUPS
