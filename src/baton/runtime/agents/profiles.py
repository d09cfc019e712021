"""Provider profiles: each owns one agent's launch contract, environment contract and policies.

A profile says which installed executables may be this agent (candidate names searched on
``PATH``, or an explicit override), how to launch it, how to prove from its help text that it
really is this agent speaking ACP (the launch-contract probe), which environment variables it
gets, and which permission policies Baton may apply to it. Baton never runs npx, never
downloads, never self-updates and never falls back silently to another runtime: a profile only
ever launches what the user installed.

The built-in profiles are in :data:`BUILTIN_PROFILES`; users add their own in the config file
(:mod:`baton.runtime.agents.config_file`). docs/profiles.md documents every field and the probes.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, get_args

from baton.errors import ConfigurationError
from baton.runtime.agents.environment import (
    CLAUDE_ENVIRONMENT,
    CODEX_ENVIRONMENT,
    CURSOR_ENVIRONMENT,
    GEMINI_ENVIRONMENT,
    GROK_ENVIRONMENT,
    OPENCODE_ENVIRONMENT,
    EnvironmentContract,
)
from baton.runtime.agents.native_modes import UNDECLARED, NativeModes
from baton.wire.budget import BoundSetting, parse_bound_setting
from baton.wire.extensions import claude as claude_extension
from baton.wire.extensions import steering as steering_extension
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES, validate_frame_cap
from baton.wire.version import AUTO_CHOICE, PROTOCOL_V1, ProtocolChoice

#: A permission policy: how Baton answers the agent's permission requests.
#: ``ask`` asks the user; ``auto-edits`` picks an exact allow_once only for verified in-worktree
#: edits; ``full`` picks an exact allow_once for anything. None ever picks an ``*_always`` option.
Policy = Literal["ask", "auto-edits", "full"]

#: Every policy, safest first.
ALL_POLICIES: Final[tuple[Policy, ...]] = get_args(Policy)

#: What a profile id may look like: it is typed on the command line and used as a config key.
PROFILE_ID_PATTERN: Final = re.compile(r"[a-z][a-z0-9-]{0,31}")

#: Longest argv element accepted in a profile (launch, version and probe argv). Protects
#: diagnostics and the config file parser against absurd values.
MAX_ARG_CHARS: Final = 4096

#: Most elements in one argv of a profile. Protects against a config that builds a huge command.
MAX_ARGV_ITEMS: Final = 64

#: Profile-gated extension: Grok Build's session model catalog and ``session/set_model``.
EXT_GROK_SESSION_MODELS: Final = "grok-build-acp/session-models@v1"

#: Profile-gated extension: Cursor's parameterized model picker (``cursor/list_available_models``
#: and ``clientCapabilities._meta.parameterizedModelPicker``).
EXT_CURSOR_MODEL_PICKER: Final = "cursor-agent-acp/parameterized-model-picker@v1"

#: Profile-gated extension: Claude's subagent parent link (``_meta.claudeCode.parentToolUseId``
#: on nested tool calls), recorded and shown nested.
EXT_CLAUDE_SUBAGENT_PARENT: Final = claude_extension.EXTENSION

#: Every extension a profile may enable. No other profile may claim one of these.
#: Profile-gated extension: steering a running turn (``_session/steering``, advertised in
#: initialize ``_meta.steering``), shipped by claude-agent-acp and codex-acp.
EXT_SESSION_STEERING: Final = steering_extension.EXTENSION

KNOWN_EXTENSIONS: Final = frozenset(
    {
        EXT_GROK_SESSION_MODELS,
        EXT_CURSOR_MODEL_PICKER,
        EXT_CLAUDE_SUBAGENT_PARENT,
        EXT_SESSION_STEERING,
    }
)


@dataclass(frozen=True, slots=True)
class LaunchProbe:
    """The launch-contract probe: run the executable with ``argv`` and require every pattern
    of ``patterns`` to match somewhere in its stdout and stderr together."""

    argv: tuple[str, ...]
    patterns: tuple[re.Pattern[str], ...]

    def __post_init__(self) -> None:
        if not self.patterns:
            raise ConfigurationError("a launch-contract probe needs at least one required pattern")
        _check_argv("probe argv", self.argv)

    def matches(self, output: str) -> list[re.Pattern[str]]:
        """The patterns ``output`` fails to match (empty when the contract is proved)."""
        return [p for p in self.patterns if p.search(output) is None]


def _check_argv(what: str, argv: tuple[str, ...]) -> None:
    if len(argv) > MAX_ARGV_ITEMS:
        raise ConfigurationError(f"{what} has {len(argv)} items; at most {MAX_ARGV_ITEMS}")
    for arg in argv:
        if not isinstance(arg, str) or "\0" in arg or len(arg) > MAX_ARG_CHARS:
            raise ConfigurationError(
                f"{what} items must be strings without NUL bytes, at most {MAX_ARG_CHARS} chars"
            )


@dataclass(frozen=True, slots=True)
class Profile:
    """One agent's contract with Baton.

    Fields:

    - ``id``: the name on the command line and in the config file (``claude``).
    - ``display_name``: for people.
    - ``executables``: candidate names searched on ``PATH``, in order. Names that are only
      accepted when the user configures them explicitly (Cursor's generic ``agent``) are never
      here: discovery never runs a generic PATH name.
    - ``override_env``: the variable naming an explicit executable (``BATON_CLAUDE_AGENT_ACP_BIN``).
      A resolver input, never passed to the child.
    - ``launch_argv``: arguments after the executable when Baton starts the agent.
    - ``version_argv``: the version command's arguments; ``None`` when the adapter has none
      (codex-acp 0.16.0 rejects ``--version``); a version then comes only from ``initialize``.
    - ``probe``: the launch-contract probe.
    - ``environment``: the exact environment contract.
    - ``allowed_policies``: the permission policies Baton may apply; always includes ``ask``.
    - ``allow_remembered_permissions``: whether a provider's remembered (``*_always``) option may
      be offered to the user at all (it is never chosen automatically).
    - ``max_frame_bytes``: the per-frame cap of this agent's connection.
    - ``strict_mode``: any skipped (unparseable) stdout line quarantines the lane.
    - ``extensions``: profile-gated protocol extensions other code may use for this profile only.
    - ``account_unsupported_patterns``: error texts that mean "signed in, but this account cannot
      be used" (reported as ACCOUNT_UNSUPPORTED rather than a generic failure).
    - ``terminal_failure_text``: an exact final message that turns an ``end_turn`` into a failed
      turn (Cursor's plan gate), or ``None``.
    - ``builtin``: False for profiles from the user's config file.
    - ``install_command``: the command that installs the adapter (shown by ``baton doctor``),
      or ``None`` when Baton knows none.
    - ``unattended_edit_mode``: the agent's own session mode that lets it edit without asking
      (Claude's ``acceptEdits``), suggested when a policy the profile does not expose is asked
      for; ``None`` when the agent has none.
    - ``native_modes``: which of the agent's native session modes route approvals to the
      client and which act on their own (:class:`NativeModes`); under ``ask`` and
      ``auto-edits`` a session that starts in a self-acting mode is moved to the first asking
      mode offered (docs/permissions.md). Undeclared modes are judged by the bypass rule.
    - ``protocol``: the ACP version ``initialize`` offers and accepts (``auto``: offer the stable
      1, or 2 where the profile declared v2 support (``v2_declared``, the config file's
      ``v2_support = true``), and accept either; a pinned ``1`` or ``2``: only that one).
      ``--protocol`` overrides the pin per run and keeps the declaration.
    - ``idle_timeout``: this agent's turn idle bound (seconds, or ``"off"``), set in the config
      file (``[turns.profiles]`` or a custom profile's ``idle_timeout``); ``None`` leaves it to
      the config file's ``[turns] idle_timeout``, else Baton's default (600 s).
    - ``adapter_packages``: the npm package names the adapter is published as. When the
      executable resolves into one of them (its ``package.json``), the version Baton shows is
      the adapter's own, with the version command's line (the bundled agent's, Claude Code's
      for claude-agent-acp) after it.
    """

    id: str
    display_name: str
    executables: tuple[str, ...]
    override_env: str
    launch_argv: tuple[str, ...]
    version_argv: tuple[str, ...] | None
    probe: LaunchProbe
    environment: EnvironmentContract
    allowed_policies: tuple[Policy, ...] = ("ask",)
    allow_remembered_permissions: bool = False
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    strict_mode: bool = False
    extensions: frozenset[str] = field(default_factory=frozenset)
    account_unsupported_patterns: tuple[re.Pattern[str], ...] = ()
    terminal_failure_text: str | None = None
    builtin: bool = True
    install_command: str | None = None
    unattended_edit_mode: str | None = None
    native_modes: NativeModes = UNDECLARED
    protocol: ProtocolChoice = AUTO_CHOICE
    idle_timeout: BoundSetting = None
    adapter_packages: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if PROFILE_ID_PATTERN.fullmatch(self.id) is None:
            raise ConfigurationError(
                f"profile id {self.id!r} must match {PROFILE_ID_PATTERN.pattern}"
            )
        if not self.executables:
            raise ConfigurationError(f"profile {self.id}: at least one executable name is needed")
        for name in self.executables:
            if not name or "/" in name or "\0" in name or len(name) > MAX_ARG_CHARS:
                raise ConfigurationError(
                    f"profile {self.id}: executable candidate {name!r} must be a bare name"
                )
        _check_argv(f"profile {self.id} launch argv", self.launch_argv)
        if self.version_argv is not None:
            _check_argv(f"profile {self.id} version argv", self.version_argv)
        if "ask" not in self.allowed_policies:
            raise ConfigurationError(f"profile {self.id}: allowed policies must include 'ask'")
        unknown = [p for p in self.allowed_policies if p not in ALL_POLICIES]
        if unknown:
            raise ConfigurationError(f"profile {self.id}: unknown policies {unknown}")
        if self.override_env in self.environment.keys:
            raise ConfigurationError(
                f"profile {self.id}: the override key {self.override_env} cannot be child "
                "environment"
            )
        validate_frame_cap(self.max_frame_bytes)
        if self.idle_timeout is not None:
            parse_bound_setting(self.idle_timeout, f"profile {self.id}: idle_timeout")
        unknown_ext = sorted(self.extensions - KNOWN_EXTENSIONS)
        if unknown_ext:
            raise ConfigurationError(f"profile {self.id}: unknown extensions {unknown_ext}")

    @property
    def session_models_extension(self) -> bool:
        """Grok's ``session/set_model`` catalog extension is enabled for this profile."""
        return EXT_GROK_SESSION_MODELS in self.extensions

    @property
    def parameterized_model_picker(self) -> bool:
        """Cursor's parameterized model picker extension is enabled for this profile."""
        return EXT_CURSOR_MODEL_PICKER in self.extensions

    def allows(self, policy: str) -> bool:
        """True when Baton may apply ``policy`` to this profile."""
        return policy in self.allowed_policies

    def launch_command(self, executable: str) -> list[str]:
        """The full argv that starts this agent from ``executable``."""
        return [executable, *self.launch_argv]

    def launch_form(self, executable: str) -> str:
        """The launch command as one shell-quoted line, for people."""
        return shlex.join(self.launch_command(executable))


def _patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(s, re.IGNORECASE) for s in sources)


#: claude-agent-acp 0.23.1: no argument parsing of its own in ACP mode (``--version`` starts the
#: ACP server and prints nothing), so both commands go through ``--cli`` to the bundled Claude
#: Code, which prints "2.1.83 (Claude Code)" and "Usage: claude [options] [command] [prompt]".
CLAUDE: Final = Profile(
    id="claude",
    display_name="Claude Agent ACP",
    executables=("claude-agent-acp",),
    override_env="BATON_CLAUDE_AGENT_ACP_BIN",
    launch_argv=(),
    version_argv=("--cli", "--version"),
    probe=LaunchProbe(("--cli", "--help"), _patterns(r"\bUsage:\s+claude\b")),
    environment=CLAUDE_ENVIRONMENT,
    allowed_policies=("ask",),
    install_command="npm install -g @agentclientprotocol/claude-agent-acp",
    adapter_packages=(
        "@agentclientprotocol/claude-agent-acp",
        "@zed-industries/claude-agent-acp",
        "@zed-industries/claude-code-acp",
    ),
    unattended_edit_mode="acceptEdits",
    # claude-agent-acp 0.101.0 starts every session in its own ``auto`` ("Claude handles
    # permission decisions"); ``default`` ("Always ask before making changes") routes each
    # approval to the client. ``plan`` is left undeclared (it plans, then asks to switch).
    native_modes=NativeModes(
        asking=("default",),
        self_acting=frozenset({"auto", "acceptEdits", "bypassPermissions", "dontAsk"}),
    ),
    extensions=frozenset({EXT_CLAUDE_SUBAGENT_PARENT, EXT_SESSION_STEERING}),
    # Pinned to ACP 1 (``--protocol auto|2`` still overrides it per run): claude-agent-acp
    # 0.101.0 negotiates the v2 draft under ``auto`` and reports a subagent there as a child
    # session (``subagent_update``), which Baton does not model yet, so a turn that starts a
    # subagent ended RECOVERY_REQUIRED. Under 1 the same subagent arrives as nested tool calls
    # with parent links (tests/fixtures/adapters/claude-agent-acp-0.101.0/subagent*.jsonl).
    protocol=ProtocolChoice(PROTOCOL_V1),
)

#: codex-acp, two generations: ``@zed-industries/codex-acp`` 0.16.0 (Rust) rejects ``--version``
#: with exit 2 and prints its usage line "Usage: codex-acp [OPTIONS]"; the
#: ``@agentclientprotocol/codex-acp`` 1.0+ rewrite (checked: 2.6.0) prints
#: "@agentclientprotocol/codex-acp 2.6.0" and exits 0, and treats ``--help`` as no argument at
#: all (it starts the ACP server and waits on stdin). ``--version`` is therefore the one probe
#: that answers at once on both, and either line proves the program. No version command:
#: 0.16.0 has none; ``--live`` reports the version from initialize on both.
CODEX: Final = Profile(
    id="codex",
    display_name="Codex ACP",
    executables=("codex-acp",),
    override_env="BATON_CODEX_ACP_BIN",
    launch_argv=(),
    version_argv=None,
    probe=LaunchProbe(
        ("--version",),
        _patterns(r"(?m)\bUsage:\s+codex-acp\b|^@agentclientprotocol/codex-acp\s+\d"),
    ),
    environment=CODEX_ENVIRONMENT,
    install_command="npm install -g @agentclientprotocol/codex-acp",
    allowed_policies=("ask", "auto-edits", "full"),
    # codex-acp 0.16.0 starts in ``read-only`` ("Approval is required to edit files"); its
    # ``auto`` edits the workspace and runs commands without asking, ``full-access`` more.
    native_modes=NativeModes(
        asking=("read-only",),
        self_acting=frozenset({"auto", "full-access"}),
    ),
    extensions=frozenset({EXT_SESSION_STEERING}),
)

#: Cursor Agent: ``cursor-agent acp``; ``help acp`` proves the ACP subcommand. The generic
#: ``agent`` alias is accepted only as an explicit override (it is never a PATH candidate).
CURSOR: Final = Profile(
    id="cursor",
    display_name="Cursor Agent",
    executables=("cursor-agent",),
    override_env="BATON_CURSOR_AGENT_ACP_BIN",
    launch_argv=("acp",),
    version_argv=("--version",),
    probe=LaunchProbe(
        ("help", "acp"),
        _patterns(r"(?:Usage:\s+(?:cursor-agent|agent)\s+acp\b|Start the Cursor Agent as an ACP)"),
    ),
    environment=CURSOR_ENVIRONMENT,
    allowed_policies=("ask", "auto-edits", "full"),
    allow_remembered_permissions=True,
    extensions=frozenset({EXT_CURSOR_MODEL_PICKER}),
    account_unsupported_patterns=_patterns(r"^\s*Upgrade your plan to continue\.?\s*$"),
    terminal_failure_text="Upgrade your plan to continue",
)

#: Gemini CLI in ACP mode (``gemini --acp``). Its help (0.61.0) must show the usage line and the
#: ``--acp`` flag itself ("--acp   Starts the agent in ACP mode"), so a build that only knows the
#: deprecated ``--experimental-acp`` is incompatible.
GEMINI: Final = Profile(
    id="gemini",
    display_name="Gemini CLI",
    executables=("gemini",),
    override_env="BATON_GEMINI_ACP_BIN",
    launch_argv=("--acp",),
    version_argv=("--version",),
    probe=LaunchProbe(
        ("--help",),
        _patterns(r"\bUsage:\s+gemini\b", r"(?m)^\s*--acp\s.*\bACP mode\b"),
    ),
    environment=GEMINI_ENVIRONMENT,
    allowed_policies=("ask",),
)

#: Grok Build over stdio, with self-update off and the provider's default permission mode.
GROK: Final = Profile(
    id="grok",
    display_name="Grok Build",
    executables=("grok",),
    override_env="BATON_GROK_ACP_BIN",
    launch_argv=("--no-auto-update", "--permission-mode", "default", "agent", "stdio"),
    version_argv=("--version",),
    probe=LaunchProbe(
        ("--no-auto-update", "--permission-mode", "default", "agent", "stdio", "--help"),
        _patterns(r"\bUsage:\s+grok\s+agent\s+stdio\b", r"\bRun the agent over stdio\b"),
    ),
    environment=GROK_ENVIRONMENT,
    allowed_policies=("ask", "auto-edits", "full"),
    allow_remembered_permissions=True,
    extensions=frozenset({EXT_GROK_SESSION_MODELS}),
)

#: OpenCode's ACP server (``opencode acp``). ``acp --help`` (1.18.33, on stderr) starts with the
#: command line "opencode acp" and "start ACP (Agent Client Protocol) server".
OPENCODE: Final = Profile(
    id="opencode",
    display_name="OpenCode",
    executables=("opencode",),
    override_env="BATON_OPENCODE_ACP_BIN",
    launch_argv=("acp",),
    version_argv=("--version",),
    probe=LaunchProbe(
        ("acp", "--help"),
        _patterns(r"(?m)^\s*opencode\s+acp\b", r"\bstart ACP \(Agent Client Protocol\) server\b"),
    ),
    environment=OPENCODE_ENVIRONMENT,
    allowed_policies=("ask",),
)

#: The built-in profiles, by id, in display order.
BUILTIN_PROFILES: Final[Mapping[str, Profile]] = {
    p.id: p for p in (CLAUDE, CODEX, CURSOR, GEMINI, GROK, OPENCODE)
}

#: Every override key of a built-in profile (none of them may ever be child environment).
BUILTIN_OVERRIDE_KEYS: Final = frozenset(p.override_env for p in BUILTIN_PROFILES.values())


def default_override_env(profile_id: str) -> str:
    """The override key a config-file profile gets unless it names one:
    ``BATON_<ID>_ACP_BIN`` with dashes as underscores."""
    return f"BATON_{profile_id.upper().replace('-', '_')}_ACP_BIN"
