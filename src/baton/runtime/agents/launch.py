"""What it takes to start one agent: the resolved launch of a profile, or an ad-hoc command.

A :class:`LaunchSpec` is the runtime identity of a lane (profile, resolved executable, lane
name) plus everything the lane needs to start and police its child: the exact argv and
environment, the secrets to redact, the frame cap, and the permission policies it allows.
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from baton.errors import AgentLaunchFailed, ConfigurationError
from baton.runtime.agents.environment import BASE_GROUP, filter_environment, sensitive_values
from baton.runtime.agents.profiles import ALL_POLICIES, Profile
from baton.runtime.agents.review_lane import REVIEW_LANE, review_argv
from baton.wire.framing import DEFAULT_MAX_FRAME_BYTES
from baton.wire.version import AUTO_CHOICE, ProtocolChoice

#: The profile id recorded for an ad-hoc ``--agent-command`` agent.
CUSTOM_PROFILE_ID = "custom"

#: The bundled scripted agent as an ad-hoc command, through this interpreter: works whether or
#: not the ``baton`` console script is on PATH (``RunRequest(agent_command=SCRIPTED_AGENT)``).
SCRIPTED_AGENT: Final[tuple[str, ...]] = (sys.executable, "-m", "baton.agents.scripted")
#: ``baton agent scripted``: resolved to :data:`SCRIPTED_AGENT` when ``baton`` is not on PATH.
BUNDLED_SCRIPTED_COMMAND: Final = ("baton", "agent", "scripted")

#: An ad-hoc command line longer than this is refused (it is split like a shell, no shell).
MAX_AGENT_COMMAND_CHARS = 8192


@dataclass(frozen=True, slots=True)
class LaunchSpec:
    """How to start one agent and what rules its lane follows."""

    profile_id: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    secrets: tuple[str, ...] = ()
    lane: str = "default"
    max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES
    strict_mode: bool = False
    allowed_policies: tuple[str, ...] = ("ask",)
    allow_remembered_permissions: bool = False
    terminal_failure_text: str | None = None
    extensions: frozenset[str] = field(default_factory=frozenset)
    profile: Profile | None = None
    #: A read-only review lane (grok): edit, delete, move and MCP tools are never allowed.
    read_only: bool = False
    #: The ACP version ``initialize`` offers and accepts (the profile's, or ``--protocol``).
    protocol: ProtocolChoice = AUTO_CHOICE

    @property
    def executable(self) -> str:
        """The resolved executable (absolute path)."""
        return self.argv[0]

    @property
    def identity(self) -> tuple[str, str, str]:
        """The lane's runtime identity: (profile, executable, lane). An ad-hoc command's is
        its whole command line: two commands of one executable with other arguments are two
        agents, never one process."""
        if self.profile_id == CUSTOM_PROFILE_ID:
            return (self.profile_id, shlex.join(self.argv), self.lane)
        return (self.profile_id, self.executable, self.lane)

    @property
    def launch_form(self) -> str:
        """The command line, for people."""
        return shlex.join(self.argv)


def from_profile(
    profile: Profile, executable: str, parent_env: Mapping[str, str], *, lane: str = "default"
) -> LaunchSpec:
    """The launch of a discovered profile: its argv, its exact environment contract. The
    ``review`` lane exists only for profiles with a read-only sandbox (grok)."""
    env = filter_environment(profile.environment.keys, parent_env, exclude=(profile.override_env,))
    read_only = lane == REVIEW_LANE
    argv = (
        (executable, *review_argv(profile.id))
        if read_only
        else tuple(profile.launch_command(executable))
    )
    return LaunchSpec(
        profile_id=profile.id,
        argv=argv,
        read_only=read_only,
        env=env,
        secrets=tuple(sensitive_values(profile, parent_env)),
        lane=lane,
        max_frame_bytes=profile.max_frame_bytes,
        strict_mode=profile.strict_mode,
        allowed_policies=tuple(profile.allowed_policies),
        allow_remembered_permissions=profile.allow_remembered_permissions,
        terminal_failure_text=profile.terminal_failure_text,
        extensions=profile.extensions,
        profile=profile,
        protocol=profile.protocol,
    )


def from_command(
    command: str | Sequence[str],
    parent_env: Mapping[str, str],
    *,
    env_keys: Sequence[str] = (),
    allow_unattended: bool = False,
    cwd: str | None = None,
) -> LaunchSpec:
    """The launch of an ad-hoc ``--agent-command``: split like a shell (no shell is used), the
    executable resolved on PATH, the environment the portable base plus each named key.

    Values of the named keys are treated as sensitive (redacted everywhere): Baton cannot know
    which of them are credentials. Only ``ask`` is allowed unless ``allow_unattended``.
    """
    if isinstance(command, str):
        if len(command) > MAX_AGENT_COMMAND_CHARS:
            raise ConfigurationError(
                f"the agent command is longer than {MAX_AGENT_COMMAND_CHARS} characters"
            )
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise ConfigurationError(
                f"the agent command cannot be split like a shell line: {exc}"
            ) from exc
    else:
        argv = list(command)
    if not argv:
        raise ConfigurationError("the agent command is empty")
    if any("\0" in arg for arg in argv):
        raise ConfigurationError("the agent command contains a NUL byte")
    executable = argv[0]
    if "/" in executable:
        resolved = os.path.abspath(os.path.join(cwd or os.getcwd(), executable))
    else:
        found = shutil.which(executable, path=parent_env.get("PATH", os.defpath))
        if found is None and list(argv[:3]) == list(BUNDLED_SCRIPTED_COMMAND):
            # `baton agent scripted` outside an activated venv: the bundled agent through this
            # interpreter, so the library example runs without `baton` on PATH.
            argv = [*SCRIPTED_AGENT, *argv[3:]]
            found = SCRIPTED_AGENT[0]
        if found is None:
            raise AgentLaunchFailed(
                executable,
                f"the agent executable {executable!r} was not found on PATH",
                errno.ENOENT,
            )
        resolved = os.path.abspath(found)
    for key in env_keys:
        if not key or "=" in key or "\0" in key:
            raise ConfigurationError(f"an environment key must be a variable name, got {key!r}")
    env = filter_environment(set(BASE_GROUP.keys) | set(env_keys), parent_env)
    secrets = sorted(
        {parent_env[k] for k in env_keys if parent_env.get(k)}, key=lambda v: (-len(v), v)
    )
    policies = tuple(ALL_POLICIES) if allow_unattended else ("ask",)
    return LaunchSpec(
        profile_id=CUSTOM_PROFILE_ID,
        argv=(resolved, *argv[1:]),
        env=env,
        secrets=tuple(secrets),
        allowed_policies=policies,
    )
