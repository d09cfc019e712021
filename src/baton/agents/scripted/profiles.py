"""Profiles: option sets that make the scripted agent answer in the shapes of a real adapter.

``claude``, ``codex`` and ``fast-agent`` reproduce the initialize and session/new payloads
captured from claude-agent-acp 0.23.1, codex-acp 0.16.0 and fast-agent 0.10.48 (field for field,
apart from session ids), plus the quirks that matter to a client: request ids from 0 or UUIDs,
not exiting on stdin EOF, a rejected permission that ends the turn. ``baton`` is the default:
every surface present, in the schema's own shapes. ``grok`` and ``cursor`` are not captures:
they speak the two profile-gated model extensions (Grok's session model catalog, Cursor's
parameterized model picker) in the shapes those contracts define.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from baton._version import __version__
from baton.agents.scripted.options import (
    AgentOptions,
    BooleanSpec,
    Catalog,
    Choice,
    PermissionChoice,
    SelectSpec,
)


def _baton() -> AgentOptions:
    return AgentOptions(
        profile="baton",
        agent_info={
            "name": "baton-scripted",
            "title": "Baton scripted agent",
            "version": __version__,
        },
        capabilities={
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": False},
            "mcpCapabilities": {"http": False, "sse": False},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}, "delete": {}},
            "auth": {"logout": {}},
        },
        auth_methods=(
            {
                "id": "scripted-login",
                "name": "Scripted sign-in",
                "description": "Any call to authenticate with this id succeeds.",
            },
        ),
        catalog=Catalog(
            modes=(
                Choice("default", "Default", "Ask before every tool call"),
                Choice("plan", "Plan", "Plan only (the scripted agent behaves the same)"),
            ),
            models=(
                Choice("scripted-small", "Scripted small", "Deterministic and fast"),
                Choice("scripted-large[1m]", "Scripted large (1M context)", "Deterministic"),
            ),
            current_model="scripted-small",
            effort=SelectSpec(
                option_id="effort",
                name="Reasoning effort",
                category="thought_level",
                values=tuple(
                    Choice(value, value.capitalize())
                    for value in ("low", "medium", "high", "max", "ultra")
                ),
                current="medium",
            ),
            toggle=BooleanSpec(
                option_id="thinking",
                name="Extended thinking",
                category="thinking",
                current=False,
            ),
        ),
        permission_options=(
            PermissionChoice("allow-always", "Always allow", "allow_always"),
            PermissionChoice("allow", "Allow", "allow_once"),
            PermissionChoice("reject", "Reject", "reject_once"),
        ),
    )


def _claude() -> AgentOptions:
    modes = (
        Choice("default", "Default", "Standard behavior, prompts for dangerous operations"),
        Choice("acceptEdits", "Accept Edits", "Auto-accept file edit operations"),
        Choice("plan", "Plan Mode", "Planning mode, no actual tool execution"),
        Choice("dontAsk", "Don't Ask", "Don't prompt for permissions, deny if not pre-approved"),
    )
    models = (
        Choice(
            "default",
            "Default (recommended)",
            "Use the default model (currently Sonnet 4.6) · $3/$15 per Mtok",
        ),
        Choice(
            "sonnet[1m]", "Sonnet (1M context)", "Sonnet 4.6 for long sessions · $3/$15 per Mtok"
        ),
        Choice(
            "opus[1m]",
            "Opus (1M context)",
            "Opus 4.6 with 1M context · Most capable for complex work",
        ),
        Choice("haiku", "Haiku", "Haiku 4.5 · Fastest for quick answers · $1/$5 per Mtok"),
    )
    return AgentOptions(
        profile="claude",
        agent_info={
            "name": "@zed-industries/claude-agent-acp",
            "title": "Claude Agent",
            "version": "0.23.1",
        },
        capabilities={
            "_meta": {"claudeCode": {"promptQueueing": True}},
            "promptCapabilities": {"image": True, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "loadSession": True,
            "sessionCapabilities": {"fork": {}, "list": {}, "resume": {}, "close": {}},
        },
        auth_methods=(),
        catalog=Catalog(
            modes=modes,
            models=models,
            current_model="default",
            mode_option_name="Mode",
            mode_option_description="Session permission mode",
            model_option_description="AI model to use",
        ),
        permission_options=(
            PermissionChoice("allow_always", "Always Allow", "allow_always"),
            PermissionChoice("allow", "Allow", "allow_once"),
            PermissionChoice("reject", "Reject", "reject_once"),
        ),
        models_form="both",
        exit_on_eof=False,
        permission_tool_call="full",
        prompt_usage=True,
    )


def _codex() -> AgentOptions:
    modes = (
        Choice(
            "read-only",
            "Read Only",
            "Codex can read files in the current workspace. Approval is required to edit files "
            "or access the internet.",
        ),
        Choice(
            "auto",
            "Default",
            "Codex can read and edit files in the current workspace, and run commands. Approval "
            "is required to access the internet or edit other files. (Identical to Agent mode)",
        ),
        Choice(
            "full-access",
            "Full Access",
            "Codex can edit files outside this workspace and access the internet without asking "
            "for approval. Exercise caution when using.",
        ),
    )
    models = (
        Choice(
            "gpt-5.5",
            "GPT-5.5",
            "Frontier model for complex coding, research, and real-world work.",
        ),
        Choice("gpt-5.4", "gpt-5.4", "Strong model for everyday coding."),
        Choice(
            "gpt-5.4-mini",
            "GPT-5.4-Mini",
            "Small, fast, and cost-efficient model for simpler coding tasks.",
        ),
        Choice("gpt-5.3-codex", "gpt-5.3-codex", "Coding-optimized model."),
        Choice("gpt-5.2", "gpt-5.2", "Optimized for professional work and long-running agents."),
    )
    efforts = (
        Choice("low", "Low", "Fast responses with lighter reasoning"),
        Choice("medium", "Medium", "Balances speed and reasoning depth for everyday tasks"),
        Choice("high", "High", "Greater reasoning depth for complex problems"),
        Choice("xhigh", "Xhigh", "Extra high reasoning depth for complex problems"),
    )
    return AgentOptions(
        profile="codex",
        agent_info={"name": "codex-acp", "title": "Codex", "version": "0.16.0"},
        capabilities={
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False, "acp": False},
            "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
            "auth": {"logout": {}},
        },
        auth_methods=(
            {
                "id": "chatgpt",
                "name": "Login with ChatGPT",
                "description": "Use your ChatGPT login with Codex CLI (requires a paid ChatGPT "
                "subscription)",
            },
            {
                "type": "env_var",
                "id": "codex-api-key",
                "name": "Use CODEX_API_KEY",
                "description": "Requires setting the `CODEX_API_KEY` environment variable.",
                "vars": [{"name": "CODEX_API_KEY"}],
            },
            {
                "type": "env_var",
                "id": "openai-api-key",
                "name": "Use OPENAI_API_KEY",
                "description": "Requires setting the `OPENAI_API_KEY` environment variable.",
                "vars": [{"name": "OPENAI_API_KEY"}],
            },
        ),
        catalog=Catalog(
            modes=modes,
            models=models,
            current_model="gpt-5.4",
            mode_option_name="Approval Preset",
            mode_option_description="Choose an approval and sandboxing preset for your session",
            model_option_description="Choose which model Codex should use",
            effort=SelectSpec(
                option_id="reasoning_effort",
                name="Reasoning Effort",
                category="thought_level",
                values=efforts,
                current="medium",
                description="Choose how much reasoning effort the model should use",
            ),
        ),
        permission_options=(
            PermissionChoice("approved", "Yes, proceed", "allow_once"),
            PermissionChoice(
                "approved-execpolicy-amendment", "Yes, and don't ask again", "allow_always"
            ),
            PermissionChoice("abort", "No, and tell Codex what to do differently", "reject_once"),
        ),
        request_ids="uuid",
        exit_on_eof=False,
        permission_tool_call="full",
        reject_ends_turn=True,
    )


def _fast_agent() -> AgentOptions:
    return AgentOptions(
        profile="fast-agent",
        agent_info={"name": "fast-agent-acp", "version": "0.10.48"},
        capabilities={
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": True},
            "sessionCapabilities": {"list": {}, "resume": {}},
            "_meta": {"co.huggingface": {"structuredOutput": True}},
        },
        auth_methods=(
            {
                "id": "fast-agent-ai-secrets",
                "name": "Configure fast-agent",
                "description": "Set provider keys in fast-agent.secrets.yaml or env vars. See "
                "docs: [Configuration Reference](https://fast-agent.ai/ref/config_file/)",
            },
        ),
        catalog=Catalog(
            modes=(Choice("agent", "Agent", "You are a helpful AI Agent."),),
            models=(),
            current_model="",
            mode_option=False,
        ),
        permission_options=(
            PermissionChoice("allow", "Allow", "allow_once"),
            PermissionChoice("allow-always", "Always allow", "allow_always"),
            PermissionChoice("reject", "Reject", "reject_once"),
        ),
        models_form="none",
        config_options=False,
    )


def _efforts(option_id: str, current: str, *values: str) -> SelectSpec:
    return SelectSpec(
        option_id=option_id,
        name="Reasoning",
        category="thought_level",
        values=tuple(Choice(value, value.capitalize()) for value in values),
        current=current,
    )


def _grok() -> AgentOptions:
    """Grok Build's ``grok-build-acp/session-models@v1`` shapes (not a capture): the catalog
    in initialize ``_meta.modelState`` and in the session's legacy ``models``, per-model
    efforts in each model's ``_meta``, no modes and no config options."""
    return AgentOptions(
        profile="grok",
        agent_info={
            "name": "baton-scripted-grok",
            "title": "Baton scripted agent (Grok profile)",
            "version": __version__,
        },
        capabilities={
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
            "sessionCapabilities": {"resume": {}, "close": {}},
        },
        auth_methods=(),
        catalog=Catalog(
            modes=(),
            models=(
                Choice("grok-build", "Grok Build", "The default coding model"),
                Choice("grok-4.5", "Grok 4.5"),
                Choice("grok-code-fast-1", "Grok Code Fast", "No reasoning effort choices"),
            ),
            current_model="grok-build",
            mode_option=False,
            model_efforts=(
                (
                    "grok-build",
                    _efforts("reasoningEffort", "high", "low", "medium", "high", "xhigh"),
                ),
                ("grok-4.5", _efforts("reasoningEffort", "high", "low", "medium", "high")),
            ),
        ),
        permission_options=(
            PermissionChoice("allow_once", "Allow once", "allow_once"),
            PermissionChoice("reject_once", "Reject once", "reject_once"),
        ),
        models_form="legacy",
        config_options=False,
        modes=False,
        model_extension="grok",
    )


def _cursor() -> AgentOptions:
    """Cursor's ``cursor-agent-acp/parameterized-model-picker@v1`` shapes (not a capture):
    ``default`` (Auto) and models with their own thought_level selector, listed by
    ``cursor/list_available_models``; changing the model replaces the config catalog."""
    return AgentOptions(
        profile="cursor",
        agent_info={
            "name": "baton-scripted-cursor",
            "title": "Baton scripted agent (Cursor profile)",
            "version": __version__,
        },
        capabilities={
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": False},
            "mcpCapabilities": {"http": True, "sse": False},
        },
        auth_methods=(
            {"id": "cursor_login", "name": "Cursor login", "description": "Sign in to Cursor"},
        ),
        catalog=Catalog(
            modes=(
                Choice("agent", "Agent", "Full tool access"),
                Choice("plan", "Plan", "Plan before acting"),
                Choice("ask", "Ask", "Read-only questions"),
            ),
            models=(
                Choice("default", "Auto"),
                Choice("gpt-5", "GPT-5"),
                Choice("sonnet-4.5", "Sonnet 4.5"),
                Choice("composer-1", "Composer 1"),
            ),
            current_model="default",
            mode_option=False,
            model_efforts=(
                ("gpt-5", _efforts("reasoning", "medium", "low", "medium", "high")),
                ("sonnet-4.5", _efforts("thinking_level", "off", "off", "high")),
            ),
        ),
        permission_options=(
            PermissionChoice("allow-once", "Allow once", "allow_once"),
            PermissionChoice("allow-always", "Always allow", "allow_always"),
            PermissionChoice("reject-once", "Reject", "reject_once"),
        ),
        model_extension="cursor",
    )


_PROFILES: Final[dict[str, Callable[[], AgentOptions]]] = {
    "baton": _baton,
    "claude": _claude,
    "codex": _codex,
    "fast-agent": _fast_agent,
    "grok": _grok,
    "cursor": _cursor,
}

#: Names ``--profile`` accepts.
PROFILE_NAMES: Final = tuple(_PROFILES)


def profile_options(name: str) -> AgentOptions:
    """The options of profile ``name`` (a fresh object each call)."""
    try:
        return _PROFILES[name]()
    except KeyError:
        from baton.errors import ConfigurationError

        raise ConfigurationError(
            f"unknown profile {name!r}; choose one of {', '.join(PROFILE_NAMES)}"
        ) from None
