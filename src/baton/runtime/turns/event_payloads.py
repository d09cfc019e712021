"""The type of each run event (:data:`RunEventType`) and its payload, as a type a caller can import: one ``TypedDict`` per
type (``RunEvent.data`` holds it; :meth:`~baton.runtime.turns.events.RunEvent.payload` reads it
back typed). docs/events.md documents the same fields; ``tests/runtime/turns/test_event_payloads``
checks the page against these classes, so the two cannot drift.

Keys are the JSON contract's (camelCase). A key marked ``NotRequired`` is sent only when there
is something to say (docs/events.md writes it with a ``?``). Values kept as the agent sent
them (a plan's entries, a control's choices) are typed loosely: their shapes are the agent's.
"""

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, TypedDict, get_args

if TYPE_CHECKING:  # a name for the type checker only: importing the store here would load it
    from baton.store.models import RunStatus

#: Run event types, in the order a turn usually produces them (docs/events.md).
RunEventType = Literal[
    "run_started",
    "session",
    "controls",
    "text",
    "thought",
    "user_text",
    "tool_call",
    "plan",
    "usage",
    "steer",
    "notice",
    "compaction",
    "elicitation",
    "mode",
    "config",
    "session_info",
    "commands",
    "state",
    "permission",
    "workspace_changes",
    "item",
    "warning",
    "result",
]
#: The service's own events on a run's feed (docs/api.md): pending questions opened and closed,
#: and the record of a run sent when a stream cannot replay what a client missed.
ServiceEventType = Literal[
    "permission_request",
    "permission_closed",
    "elicitation_request",
    "elicitation_closed",
    "replay",
]
#: Every type a :class:`~baton.runtime.turns.events.RunEvent` may have.
EventType = RunEventType | ServiceEventType

#: The run event types as a tuple (the order above).
EVENT_TYPES: Final[tuple[RunEventType, ...]] = get_args(RunEventType)
#: Every event type, the service's included.
ALL_EVENT_TYPES: Final[frozenset[str]] = frozenset(EVENT_TYPES + get_args(ServiceEventType))


class RunStartedPayload(TypedDict):
    """``run_started``: before the agent is started."""

    agent: str
    cwd: str
    policy: str
    command: str | None
    idleTimeout: float | None
    idleTimeoutSource: str


class SessionPayload(TypedDict):
    """``session``: the provider session is open."""

    sessionId: str
    providerSessionId: str
    attachedBy: str | None
    replayedUpdates: int


class ControlsPayload(TypedDict):
    """``controls``: the session's safe controls, after settings were applied."""

    providerSessionId: str
    sessionId: str
    revision: int
    omitted: list[Any]
    controls: list[dict[str, Any]]


class TextPayload(TypedDict):
    """``text``, ``thought`` and ``user_text``: streamed text, consecutive deltas coalesced."""

    text: str
    coalescedEvents: int


class ToolCallPayload(TypedDict):
    """``tool_call``: a tool call's merged state (never its raw input or output)."""

    toolCallId: str
    kind: str | None
    title: str | None
    status: str | None
    paths: list[str]
    command: NotRequired[str]
    diff: NotRequired[dict[str, Any]]
    name: NotRequired[str]
    parentToolCallId: NotRequired[str]


class PlanPayload(TypedDict):
    """``plan``: the agent's plan, each entry ``{content, status, priority}``."""

    entries: list[dict[str, Any]]


class UsagePayload(TypedDict):
    """``usage``: only what the agent sent (a field it did not send is absent, never 0)."""

    used: NotRequired[int]
    size: NotRequired[int]
    cost: NotRequired[dict[str, Any]]
    turn: NotRequired[dict[str, int]]


class NoticePayload(TypedDict):
    """``notice``: a session notice (live only)."""

    severity: str
    title: str
    description: str | None


class CompactionPayload(TypedDict):
    """``compaction``: a compaction's current state."""

    compactionId: str
    status: str
    summary: str
    error: str | None
    truncated: bool
    otherBlocks: int


class ElicitationPayload(TypedDict):
    """``elicitation``: after an elicitation/create was answered."""

    request: dict[str, Any] | None
    action: str
    reasonCode: str
    reason: str | None
    chosenBy: str
    content: NotRequired[dict[str, Any]]


class ModePayload(TypedDict):
    """``mode``: current_mode_update."""

    modeId: str


class ConfigPayload(TypedDict):
    """``config``: config_option_update, each option ``{id, currentValue}``."""

    configOptions: list[dict[str, Any]]


class SessionInfoPayload(TypedDict):
    """``session_info``: session_info_update."""

    title: str | None


class CommandsPayload(TypedDict):
    """``commands``: available_commands_update, the commands' names."""

    commands: list[str]


class StatePayload(TypedDict):
    """``state``: ACP v2 only, a state_update of the session."""

    state: str


class PermissionPayload(TypedDict):
    """``permission``: after the decision was recorded, as it is answered."""

    toolCallId: str | None
    options: list[dict[str, Any]]
    outcome: str
    optionId: str | None
    chosenBy: str
    reasonCode: str | None
    reason: str | None


class ItemPayload(TypedDict):
    """``item``: a part of the turn was materialized to the store."""

    kind: str
    coalescedEvents: int


class SteerPayload(TypedDict):
    """``steer``: a steering text reached the agent during this run (docs/protocol.md)."""

    text: str
    outcome: str
    reason: NotRequired[str]


class WarningPayload(TypedDict):
    """``warning``: something the caller should know that did not end the run."""

    code: str
    message: str


class WorkspaceChangesPayload(TypedDict):
    """``workspace_changes``: what the turn really changed in its compared workspace
    (docs/workspaces.md); the diffs are in the run's ``workspace_changes`` item."""

    workspace: str
    path: str
    branch: str | None
    counts: dict[str, int]
    unreported: list[str]
    truncated: list[str]
    provisional: bool
    files: list[dict[str, Any]]
    baseCounts: dict[str, int]


class ResultPayload(TypedDict):
    """``result``: always last (the CLI adds the fields docs/events.md lists for it)."""

    status: "RunStatus"
    stopReason: str | None
    exitCode: int
    errorCode: str | None
    message: str | None
    sessionId: str | None
    providerSessionId: str | None
    toolCalls: int
    permissions: int
    durationMs: int
    bound: str | None
    retryable: bool
    skippedFrames: int
    violations: int
    usage: dict[str, Any] | None
    warnings: list[dict[str, str]]
    #: The run's workspace and the turn's comparison (docs/workspaces.md), or None.
    workspace: dict[str, Any] | None
    workspaceChanges: dict[str, Any] | None


#: The payload type of each run event type (the service's own feed events, such as
#: ``permission_request``, are docs/api.md's).
PAYLOAD_TYPES: Final[Mapping[str, type[Any]]] = {
    "run_started": RunStartedPayload,
    "session": SessionPayload,
    "controls": ControlsPayload,
    "text": TextPayload,
    "thought": TextPayload,
    "user_text": TextPayload,
    "tool_call": ToolCallPayload,
    "plan": PlanPayload,
    "usage": UsagePayload,
    "steer": SteerPayload,
    "notice": NoticePayload,
    "compaction": CompactionPayload,
    "elicitation": ElicitationPayload,
    "mode": ModePayload,
    "config": ConfigPayload,
    "session_info": SessionInfoPayload,
    "commands": CommandsPayload,
    "state": StatePayload,
    "workspace_changes": WorkspaceChangesPayload,
    "permission": PermissionPayload,
    "item": ItemPayload,
    "warning": WarningPayload,
    "result": ResultPayload,
}
