"""What a caller asks the runtime to run: one prompt, its agent, settings and bounds.

``RunRequest`` is the library's input (re-exported by ``baton.runtime.runtime`` and
``baton``); it lives here, below the front, so a turn's context can carry it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from baton.runtime.permissions.policies import ExecutionSettings, PolicyName
from baton.wire.budget import TurnBudget
from baton.wire.version import ProtocolChoice


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One prompt to run. Exactly one of ``agent`` (a profile) and ``agent_command``."""

    prompt: str
    agent: str | None = None
    agent_command: str | Sequence[str] | None = None
    env_keys: Sequence[str] = ()
    cwd: str | None = None
    #: The permission policy: ``"ask"``, ``"auto-edits"`` or ``"full"``.
    policy: PolicyName = "ask"
    allow_unattended: bool = False
    mode: str | None = None
    model: str | None = None
    effort: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    tools_file: str | None = None
    #: The turn's bounds: ``idle`` in seconds, ``"off"``, or None for the profile's, the
    #: config file's, else the default (``baton.wire.budget.DEFAULT_IDLE_TIMEOUT_SECONDS``,
    #: 600 s); ``absolute`` in seconds (None: none). Setup runs within it too when it sets
    #: either bound.
    budget: TurnBudget = field(default_factory=TurnBudget)
    attachments: Sequence[str] = ()
    execution: ExecutionSettings = field(default_factory=ExecutionSettings)
    #: The process lane: ``default``, or ``review`` (grok's read-only sandboxed process).
    lane: str = "default"
    #: Attach this provider session (resume, else load) instead of creating one.
    attach_session: str | None = None
    #: With ``attach_session``: attach to look, send no prompt (`baton recover --attach`).
    inspect_only: bool = False
    #: Open the run's provider session by ``session/fork`` of this one (unstable ACP; needs
    #: ``sessionCapabilities.fork``) instead of ``session/new``: the new session holds its
    #: context (`baton session fork`). Excludes ``attach_session``.
    fork_session: str | None = None
    #: With ``fork_session``: keep only the parent's first N turns (Baton's fork extension,
    #: baton.wire.fork; refused before sending where the agent does not advertise it).
    fork_at_turn: int | None = None
    #: Keep the provider session attached after the run (its controls can then be read and
    #: changed with :meth:`Runtime.controls` and :meth:`Runtime.apply_control`).
    keep_session: bool = False
    #: Additional workspace roots (``--add-dir``): existing directories outside ``cwd``, sent
    #: as ``additionalDirectories`` (needs ``sessionCapabilities.additionalDirectories``) and
    #: treated by the local permission policy as inside the worktree.
    additional_directories: Sequence[str] = ()
    #: Unstable ACP: a system prompt replacing the agent's default instructions (``override``;
    #: needs ``sessionCapabilities.systemPrompt.mode.override``). Excludes the next field.
    system_prompt: str | None = None
    #: Unstable ACP: a system prompt added to the agent's own (``append``; needs
    #: ``sessionCapabilities.systemPrompt``).
    append_system_prompt: str | None = None
    #: Run this QUEUED run (a queue's submission, docs/fleet.md) instead of creating one: it
    #: is taken over compare-and-set (QUEUED to STARTING, owned by this process), so a run
    #: cancelled or settled meanwhile is never started.
    queued_run_id: str | None = None
    #: Pin the ACP version for this run (``--protocol``); None: the profile's (default auto).
    protocol: ProtocolChoice | None = None
    #: The run's workspace (docs/workspaces.md): ``"worktree"`` (a new git worktree of the
    #: repository holding ``cwd``, on a branch named after the run), a directory (used as it
    #: is), or None / ``"none"`` (today's behaviour: ``cwd``). A run whose directory lies in a
    #: recorded workspace (a session's) is compared in it either way.
    workspace: str | None = None
    #: With ``workspace="worktree"``: the commit to start from (default ``HEAD``).
    base: str | None = None
    #: With ``workspace="worktree"``: refuse (WORKSPACE_BASE_DIRTY) when the repository's
    #: checkout has uncommitted or untracked changes.
    require_clean: bool = False
    #: The Baton session this run is a turn of (set by conversations): a session's workspace
    #: is shared by its turns only.
    session: str | None = None
