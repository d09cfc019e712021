"""The run store's rows as typed, immutable values, and the states each may be in.

Timestamps are ISO 8601 strings in UTC with microseconds and a ``Z`` (the journal's format),
so they sort as text. JSON columns come back parsed (``Any``). Journal references come back as
:class:`~baton.durable.JournalRef`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, Union, get_args

from baton.durable.refs import JournalRef

_S = TypeVar("_S", bound=str)
#: One state, or several (``expected=`` and filters): a tuple, list or set of them.
OneOrMany = Union[_S, tuple[_S, ...], list[_S], set[_S], frozenset[_S]]  # noqa: UP007

ServerState = Literal[
    "STARTING", "READY", "RUNNING", "DEGRADED", "STOPPING", "EXITED", "FAILED", "LOST"
]
SERVER_STATES: Final[frozenset[ServerState]] = frozenset(get_args(ServerState))
#: States of a server process that may still be alive; a cold start marks them LOST.
LIVE_SERVER_STATES: Final[frozenset[ServerState]] = frozenset(
    {"STARTING", "READY", "RUNNING", "DEGRADED", "STOPPING"}
)

StoredSessionState = Literal["CREATING", "READY", "ACTIVE", "NOT_LOADED", "CLOSED", "FAILED"]
STORED_SESSION_STATES: Final[frozenset[StoredSessionState]] = frozenset(
    get_args(StoredSessionState)
)

RunStatus = Literal[
    "QUEUED",
    "STARTING",
    "RUNNING",
    "AWAITING_APPROVAL",
    "INTERRUPTING",
    "COMPLETED",
    "FAILED",
    "INTERRUPTED",
    "RECOVERY_REQUIRED",
    "LOST",
    "CANCELLED",
]
RUN_STATUSES: Final[frozenset[RunStatus]] = frozenset(get_args(RunStatus))
#: Statuses a run never leaves: the store refuses to change them. CANCELLED is a queued run
#: cancelled before anything started it (nothing of it reached an agent).
FINAL_RUN_STATUSES: Final[frozenset[RunStatus]] = frozenset(
    {"COMPLETED", "FAILED", "INTERRUPTED", "LOST", "CANCELLED"}
)
#: Statuses whose turn is over (``ended_at`` is set on entering one). RECOVERY_REQUIRED ends
#: the turn but not the run: recovery may still resolve it.
ENDED_RUN_STATUSES: Final[frozenset[RunStatus]] = FINAL_RUN_STATUSES | {"RECOVERY_REQUIRED"}
#: Statuses of a turn in flight on a server process.
ACTIVE_RUN_STATUSES: Final[frozenset[RunStatus]] = frozenset(
    {"STARTING", "RUNNING", "AWAITING_APPROVAL", "INTERRUPTING"}
)

ConversationStatus = Literal["IDLE", "ACTIVE", "RECOVERY_REQUIRED", "CLOSED"]
CONVERSATION_STATUSES: Final[frozenset[ConversationStatus]] = frozenset(
    get_args(ConversationStatus)
)

InteractionState = Literal["PENDING", "RESOLVED", "CANCELLED", "ABORTED"]
INTERACTION_STATES: Final[frozenset[InteractionState]] = frozenset(get_args(InteractionState))
ChosenBy = Literal["user", "policy", "default"]
CHOSEN_BY: Final[frozenset[ChosenBy]] = frozenset(get_args(ChosenBy))

ObservationKind = Literal["PROVIDER_REPORTED", "BATON_RESOLUTION"]
OBSERVATION_KINDS: Final[frozenset[ObservationKind]] = frozenset(get_args(ObservationKind))


@dataclass(frozen=True, slots=True)
class ServerInstance:
    """One process of one lane of a profile."""

    id: str
    profile: str
    lane: str
    generation: int
    pid: int | None
    state: ServerState
    #: Redacted, bounded diagnostics (a stderr tail, why it failed or was lost).
    diagnostics: str | None
    created_at: str
    updated_at: str
    #: When it reached EXITED, FAILED or LOST.
    ended_at: str | None
    #: The Baton process that started it (``pid:start-ticks``), see baton.store.owner.
    owner: str | None = None


@dataclass(frozen=True, slots=True)
class StoredSession:
    """An ACP session Baton created or attached, with its last known native state."""

    id: str
    provider_session_id: str | None
    server_instance_id: str | None
    profile: str
    cwd: str
    state: StoredSessionState
    #: Redacted native state (modes, models, config options) as last recorded.
    native_state: Any
    created_at: str
    updated_at: str


@dataclass(frozen=True, slots=True)
class Run:
    """One prompt turn and its outcome."""

    id: str
    session_id: str | None
    server_instance_id: str | None
    status: RunStatus
    stop_reason: str | None
    #: The prompt as sent, redacted.
    prompt_text: str
    error_code: str | None
    diagnostic: str | None
    skipped_frames: int
    violations: int
    recovery_reason: str | None
    #: The permission policy in force (e.g. "ask", "auto-edits", "full").
    policy: str
    unattended: bool
    #: The journal record of the session/prompt request, once sent.
    prompt_ref: JournalRef | None
    #: The journal record of the session/prompt response, once answered.
    response_ref: JournalRef | None
    created_at: str
    started_at: str | None
    ended_at: str | None
    updated_at: str
    #: The Baton process that runs it (``pid:start-ticks``), see baton.store.owner.
    owner: str | None = None
    #: Questions (permission requests, elicitations) open with a person; the run is
    #: AWAITING_APPROVAL while this is above zero.
    pending_questions: int = 0
    #: The epoch of the run's claim: with ``owner`` the fencing token of the process running
    #: it; a settle or an adoption by another process increments it (docs/fleet.md).
    epoch: int = 0


@dataclass(frozen=True, slots=True)
class NewItem:
    """An item to append to a run (see :meth:`baton.store.Store.append_items`)."""

    kind: str
    content: Any
    #: How many protocol events were coalesced into this item (512 deltas -> one item, 512).
    coalesced_events: int = 1


@dataclass(frozen=True, slots=True)
class StoredItem:
    """A normalized output item of a run: text, thought, tool_call, plan, usage..."""

    run_id: str
    seq: int
    kind: str
    content: Any
    coalesced_events: int
    created_at: str


@dataclass(frozen=True, slots=True)
class Interaction:
    """A permission request and its decision."""

    id: str
    run_id: str
    #: The agent's request id, exactly as sent (int or string).
    request_id: int | str | None
    tool_call: Any
    offered_options: Any
    state: InteractionState
    #: The exact provider optionId chosen, or None (cancelled, aborted, pending).
    choice: str | None
    chosen_by: ChosenBy | None
    reason: str | None
    request_ref: JournalRef | None
    response_ref: JournalRef | None
    created_at: str
    resolved_at: str | None


@dataclass(frozen=True, slots=True)
class Observation:
    """A piece of evidence about a session or run: what the provider reported, or what Baton
    resolved (BATON_RESOLUTION), each with the journal record it came from."""

    id: int
    session_id: str | None
    run_id: str | None
    kind: ObservationKind
    payload: Any
    journal_ref: JournalRef | None
    recorded_at: str


@dataclass(frozen=True, slots=True)
class ReadinessRecord:
    """The latest readiness check of a profile."""

    profile: str
    state: str
    result: Any
    checked_at: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """A named, persistent Baton session (a conversation): the agent, the cwd, the requested
    settings and the provider session it continues, with its status (see
    :mod:`baton.store.conversation_status`)."""

    id: str
    #: Unique per data directory.
    name: str
    #: The profile id, or ``custom`` for an ad-hoc command.
    profile: str
    #: An ad-hoc agent's command (redacted as stored), as a string or an argv list; None for
    #: a profile.
    agent_command: str | list[str] | None
    #: The names of the ``--env`` keys an ad-hoc agent gets (never their values).
    env_keys: list[str]
    cwd: str
    #: The requested native settings: ``mode``, ``model``, ``effort``, ``config`` (as given).
    settings: dict[str, Any]
    provider_session_id: str | None
    #: The agent's advertised session capabilities: ``resume``, ``load``, ``close``, ``list``,
    #: ``fork``, ``forkAtTurn``.
    capabilities: dict[str, bool]
    status: ConversationStatus
    #: The Baton process holding the ACTIVE turn (``pid:start-ticks``), else None.
    owner: str | None
    #: The run of the ACTIVE turn, once created.
    active_run_id: str | None
    #: Why the record is as it is (a local close, a creation that never finished...).
    note: str | None
    created_at: str
    last_used_at: str
    updated_at: str
    #: The conversation this one was forked from (`baton session fork`), else None.
    forked_from: str | None = None
    #: With ``forked_from``: how many of the parent's turns the fork holds (its history starts
    #: with them), all it had at the fork.
    fork_turns: int | None = None


#: Run statuses that hold a workspace: it is neither removed nor given to another run.
UNSETTLED_WORKSPACE_RUN_STATUSES: Final[frozenset[RunStatus]] = frozenset(
    {"QUEUED", "STARTING", "RUNNING", "AWAITING_APPROVAL", "INTERRUPTING", "RECOVERY_REQUIRED"}
)


@dataclass(frozen=True, slots=True)
class WorkspaceRecord:
    """A workspace Baton created (``worktree``) or used (``dir``): where it is, the repository
    and base it came from, its branch, the session it belongs to, its host and state."""

    name: str
    kind: str
    path: str
    repository: str | None
    base_ref: str | None
    base_commit: str | None
    branch: str | None
    #: Where the run's working directory lies under ``path`` (``--cwd`` in a subdirectory).
    subdirectory: str
    session_name: str | None
    #: The run (or session setup run) that created it.
    created_by: str | None
    host: str
    state: str
    created_at: str
    updated_at: str

    def to_json(self) -> dict[str, Any]:
        """The record as the CLI's ``--json`` and the API show it."""
        return {
            "name": self.name,
            "kind": self.kind,
            "path": self.path,
            "repository": self.repository,
            "baseRef": self.base_ref,
            "baseCommit": self.base_commit,
            "branch": self.branch,
            "subdirectory": self.subdirectory,
            "session": self.session_name,
            "createdBy": self.created_by,
            "host": self.host,
            "state": self.state,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
        }


@dataclass(frozen=True, slots=True)
class WorkspaceRun:
    """A run's use of a workspace: the snapshots before and after its turn (None: not
    compared yet)."""

    run_id: str
    workspace: str
    before: Any
    after: Any
    created_at: str
