"""Built-in profiles: launch contracts, override keys, policies, probes against real help text."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from baton.errors import ConfigurationError
from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT, compose, group
from baton.runtime.agents.profiles import (
    ALL_POLICIES,
    BUILTIN_OVERRIDE_KEYS,
    BUILTIN_PROFILES,
    CLAUDE,
    CODEX,
    CURSOR,
    EXT_CLAUDE_SUBAGENT_PARENT,
    EXT_CURSOR_MODEL_PICKER,
    EXT_GROK_SESSION_MODELS,
    EXT_SESSION_STEERING,
    GEMINI,
    GROK,
    OPENCODE,
    LaunchProbe,
    Profile,
    default_override_env,
)
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES

REAL = Path(__file__).parents[1] / "fakes" / "real"


def real(name: str) -> str:
    return (REAL / name).read_text(encoding="utf-8")


def test_builtin_ids_in_order() -> None:
    assert list(BUILTIN_PROFILES) == ["claude", "codex", "cursor", "gemini", "grok", "opencode"]


@pytest.mark.parametrize(
    ("profile", "key"),
    [
        (CLAUDE, "BATON_CLAUDE_AGENT_ACP_BIN"),
        (CODEX, "BATON_CODEX_ACP_BIN"),
        (CURSOR, "BATON_CURSOR_AGENT_ACP_BIN"),
        (GEMINI, "BATON_GEMINI_ACP_BIN"),
        (GROK, "BATON_GROK_ACP_BIN"),
        (OPENCODE, "BATON_OPENCODE_ACP_BIN"),
    ],
)
def test_override_keys(profile: Profile, key: str) -> None:
    assert profile.override_env == key
    assert key not in profile.environment.keys


def test_override_keys_are_unique() -> None:
    assert len(BUILTIN_OVERRIDE_KEYS) == len(BUILTIN_PROFILES)


def test_launch_commands() -> None:
    assert CLAUDE.launch_command("/x/claude-agent-acp") == ["/x/claude-agent-acp"]
    assert CODEX.launch_command("/x/codex-acp") == ["/x/codex-acp"]
    assert CURSOR.launch_command("/x/cursor-agent") == ["/x/cursor-agent", "acp"]
    assert GEMINI.launch_command("/x/gemini") == ["/x/gemini", "--acp"]
    assert GROK.launch_form("/x/grok") == (
        "/x/grok --no-auto-update --permission-mode default agent stdio"
    )
    assert OPENCODE.launch_form("/opt/my tools/opencode") == "'/opt/my tools/opencode' acp"


def test_cursor_generic_agent_is_never_a_path_candidate() -> None:
    assert CURSOR.executables == ("cursor-agent",)
    assert all("agent" not in p.executables for p in BUILTIN_PROFILES.values())


@pytest.mark.parametrize(
    ("profile", "policies", "remembered"),
    [
        (CLAUDE, ("ask",), False),
        (CODEX, ("ask", "auto-edits", "full"), False),
        (CURSOR, ("ask", "auto-edits", "full"), True),
        (GEMINI, ("ask",), False),
        (GROK, ("ask", "auto-edits", "full"), True),
        (OPENCODE, ("ask",), False),
    ],
)
def test_policies(profile: Profile, policies: tuple[str, ...], remembered: bool) -> None:
    assert profile.allowed_policies == policies
    assert profile.allow_remembered_permissions is remembered
    assert profile.allows("ask")
    assert profile.allows("full") is ("full" in policies)


def test_extension_flags_are_profile_gated() -> None:
    assert GROK.session_models_extension and not GROK.parameterized_model_picker
    assert CURSOR.parameterized_model_picker and not CURSOR.session_models_extension
    others = [GEMINI, OPENCODE]
    assert not any(p.extensions for p in others)
    # Issue 29: steering is shipped by claude-agent-acp and codex-acp, read by their profiles.
    assert CODEX.extensions == {EXT_SESSION_STEERING}
    assert CLAUDE.extensions == {EXT_CLAUDE_SUBAGENT_PARENT, EXT_SESSION_STEERING}
    assert GROK.extensions == {EXT_GROK_SESSION_MODELS}
    assert CURSOR.extensions == {EXT_CURSOR_MODEL_PICKER}


def test_defaults() -> None:
    for profile in BUILTIN_PROFILES.values():
        assert profile.max_frame_bytes == DEFAULT_MAX_FRAME_BYTES
        assert profile.strict_mode is False
        assert profile.builtin is True
        assert profile.environment.id == f"baton/{profile.id}-environment@v1"
    assert CURSOR.terminal_failure_text == "Upgrade your plan to continue"
    assert CURSOR.account_unsupported_patterns[0].search("Upgrade your plan to continue")


def test_version_commands() -> None:
    # claude-agent-acp 0.23.1 ignores --version (it starts the ACP server); codex-acp 0.16.0
    # rejects it with exit 2. Both facts were checked against the real packages.
    assert CLAUDE.version_argv == ("--cli", "--version")
    assert CODEX.version_argv is None
    for profile in (CURSOR, GEMINI, GROK, OPENCODE):
        assert profile.version_argv == ("--version",)


# --- probes against the real adapters' help output ------------------------------------------


@pytest.mark.parametrize(
    ("profile", "fixture"),
    [
        (CLAUDE, "claude-agent-acp-0.23.1.cli-help.txt"),
        (CLAUDE, "claude-agent-acp-0.101.0.cli-help.txt"),
        (CODEX, "codex-acp-0.16.0.version.txt"),
        (CODEX, "codex-acp-2.6.0.version.txt"),
        (GEMINI, "gemini-cli-0.61.0.help.txt"),
        (OPENCODE, "opencode-1.18.33.acp-help.txt"),
    ],
)
def test_probe_matches_real_help(profile: Profile, fixture: str) -> None:
    assert profile.probe.matches(real(fixture)) == []


@pytest.mark.parametrize(
    "fixture",
    [
        "claude-agent-acp-0.23.1.cli-help.txt",
        "claude-agent-acp-0.101.0.cli-help.txt",
        "codex-acp-0.16.0.help.txt",
        "codex-acp-0.16.0.version.txt",
        "codex-acp-2.6.0.version.txt",
        "gemini-cli-0.61.0.help.txt",
        "opencode-1.18.33.acp-help.txt",
    ],
)
def test_each_probe_rejects_every_other_adapter(fixture: str) -> None:
    text = real(fixture)
    matching = [p.id for p in BUILTIN_PROFILES.values() if not p.probe.matches(text)]
    assert len(matching) == 1


def test_gemini_probe_needs_the_stable_acp_flag() -> None:
    old = "Usage: gemini [options]\n      --experimental-acp   Starts the agent in ACP mode\n"
    missing = GEMINI.probe.matches(old)
    assert [p.pattern for p in missing] == [GEMINI.probe.patterns[1].pattern]


def test_grok_probe_needs_both_patterns() -> None:
    assert GROK.probe.matches("Usage: grok agent stdio\n\nRun the agent over stdio") == []
    assert len(GROK.probe.matches("Usage: grok agent stdio")) == 1


def test_cursor_probe_accepts_either_form() -> None:
    assert CURSOR.probe.matches("Usage: agent acp [options]") == []
    assert CURSOR.probe.matches("Start the Cursor Agent as an ACP server") == []
    assert CURSOR.probe.matches("Usage: cursor-agent [options]") != []


def test_codex_probe_is_the_version_flag_of_both_generations() -> None:
    # 2.6.0 treats --help as no argument (it starts the ACP server), so --help would time out.
    assert CODEX.probe.argv == ("--version",)
    assert CODEX.probe.matches("codex-acp 2.6.0") != []
    assert CODEX.probe.matches("log: @agentclientprotocol/codex-acp 2.6.0") != []
    assert CODEX.install_command == "npm install -g @agentclientprotocol/codex-acp"


def test_claude_version_line_is_real() -> None:
    assert real("claude-agent-acp-0.23.1.cli-version.txt").strip() == "2.1.83 (Claude Code)"


# --- validation -----------------------------------------------------------------------------


def _custom(**changes: object) -> Profile:
    base = replace(CLAUDE, id="mine", override_env="BATON_MINE_ACP_BIN", builtin=False)
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_valid_custom_profile() -> None:
    profile = _custom(allowed_policies=ALL_POLICIES)
    assert profile.allows("auto-edits")


@pytest.mark.parametrize(
    "changes",
    [
        {"id": "Bad Id"},
        {"id": ""},
        {"executables": ()},
        {"executables": ("/usr/bin/agent",)},
        {"allowed_policies": ("full",)},
        {"allowed_policies": ("ask", "yolo")},
        {"extensions": frozenset({"made-up@v1"})},
        {"max_frame_bytes": 10},
        {"max_frame_bytes": 1024 * 1024 * 1024},
        {"launch_argv": ("a\0b",)},
        {"version_argv": tuple("x" for _ in range(100))},
    ],
)
def test_invalid_profiles_are_refused(changes: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        _custom(**changes)


def test_a_probe_needs_a_pattern() -> None:
    with pytest.raises(ConfigurationError):
        LaunchProbe(("--help",), ())


def test_baton_keys_cannot_be_child_environment() -> None:
    with pytest.raises(ConfigurationError, match="Baton's own inputs"):
        compose("x", 1, group("bad", ["BATON_X_ACP_BIN"]))


def test_override_key_cannot_be_in_the_contract() -> None:
    with pytest.raises(ConfigurationError, match="override key"):
        _custom(override_env="ANTHROPIC_API_KEY", environment=CLAUDE_ENVIRONMENT)


def test_default_override_env() -> None:
    assert default_override_env("my-agent") == "BATON_MY_AGENT_ACP_BIN"


def test_probe_patterns_are_case_insensitive() -> None:
    assert all(p.flags & re.IGNORECASE for p in CLAUDE.probe.patterns)


def test_claude_is_pinned_to_protocol_1_and_the_others_negotiate() -> None:
    # claude-agent-acp 0.101.0's v2 subagents are child sessions Baton does not model yet.
    assert CLAUDE.protocol.pinned == 1
    for profile in (CODEX, CURSOR, GEMINI, GROK, OPENCODE):
        assert profile.protocol.pinned is None
