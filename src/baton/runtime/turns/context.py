"""What one run carries from its start to its result: the request, the resolved agent and
lane, the working directory and tools, the policy, the budget, and where events go.

The front (``Runtime.run``) builds one :class:`RunContext` once the run is created; session
setup (``runtime/sessions/setup.py``) and turn execution (``runtime/turns/execution.py``) take
it instead of a long argument list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from baton.runtime.agents.launch import LaunchSpec
from baton.runtime.lanes.lane import Lane
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.elicitations import Elicitor
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.turns.events import RunEvent, RunEventType
from baton.runtime.turns.request import RunRequest
from baton.runtime.turns.slot import TurnSlot
from baton.runtime.workspaces.tracking import ActiveWorkspace, WorkspaceTracker
from baton.wire.budget import BudgetClock
from baton.wire.mcp import ToolDeclarations

Emit = Callable[[RunEvent], None]


@dataclass(frozen=True, slots=True)
class RunContext:
    """One run's fixed facts, shared by its setup and its turn."""

    run_id: str
    request: RunRequest
    spec: LaunchSpec
    lane: Lane
    #: The session's working directory (resolved, a directory).
    cwd: str
    tools: ToolDeclarations
    policy: PolicyName
    recorder: Recorder
    #: The turn's budget (None: no bound at all).
    clock: BudgetClock | None
    #: The budget setup runs within (None: the fixed request limit of control requests).
    setup_clock: BudgetClock | None
    #: Where the run's events go (redacted by the front).
    emit: Emit
    #: Where the run's turn is reachable while it runs (its handle interrupts it there).
    slot: TurnSlot
    #: Who answers this run's elicitations (None: nobody; the lane it starts offers none).
    elicitor: Elicitor | None = None
    #: The run's workspace (None: none recorded; the turn is not compared) and the tracker
    #: that compares it.
    workspace: ActiveWorkspace | None = None
    workspaces: WorkspaceTracker | None = None
    #: The run's warnings so far (``{code, message}``), in the order :meth:`warn` said them;
    #: the result carries them (``warnings``).
    warnings: list[dict[str, str]] = field(default_factory=list)

    def redact(self, text: str) -> str:
        """``text`` redacted with the lane's secrets and the credential rules."""
        return self.lane.redact(text)

    def event(self, kind: RunEventType, data: dict[str, object]) -> None:
        """Emit an event of this run."""
        self.emit(RunEvent(kind, self.run_id, dict(data)))

    def warn(self, code: str, message: str) -> None:
        """A ``warning`` event of this run, also kept for the result's ``warnings``."""
        warning = {"code": code, "message": message}
        self.warnings.append(warning)
        self.event("warning", dict(warning))
