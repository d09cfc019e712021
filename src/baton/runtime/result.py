"""A run's result: :class:`RunResult`, what ``Run.result()`` and ``Runtime.run()`` return,
the final ``result`` event it becomes (:meth:`RunResult.to_event`) and the one it is read back
from (:meth:`RunResult.from_event`), and the result of a turn's outcome
(:func:`result_of_outcome`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from baton.runtime.lanes.lane import LaneSession
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.outcome import (
    EXIT_CODES,
    RunOutcome,
    TurnOutcome,
    exit_code_of,
    run_outcome_of,
)
from baton.store.models import RUN_STATUSES, RunStatus

__all__ = ["RunResult", "result_of_outcome"]


@dataclass
class RunResult:
    """The outcome of a run, as `baton run` reports it in its last line."""

    run_id: str
    status: RunStatus
    stop_reason: str | None
    exit_code: int
    error_code: str | None = None
    message: str | None = None
    session_id: str | None = None
    provider_session_id: str | None = None
    tool_calls: int = 0
    duration_ms: int = 0
    text: str = ""
    permissions: list[dict[str, Any]] = field(default_factory=list)
    bound: str | None = None
    retryable: bool = False
    skipped_frames: int = 0
    violations: int = 0
    #: The class of the ending (its exit code is ``EXIT_CODES[outcome]``); None only for a
    #: result built by hand.
    outcome: RunOutcome | None = None
    #: What the agent reported of usage: ``{used, size, cost?, turn?}``, or None.
    usage: dict[str, Any] | None = None
    #: The turn's workspace comparison (counts, files without diffs, unreported paths; the
    #: diffs are in the run's ``workspace_changes`` item), or None without a workspace.
    workspace_changes: dict[str, Any] | None = None
    #: The run's workspace (``name``, ``kind``, ``path``, ``branch``, ``baseCommit``,
    #: ``compared``), or None when it had none (docs/workspaces.md).
    workspace: dict[str, Any] | None = None

    @property
    def unreported_changes(self) -> int:
        """How many of the turn's workspace changes no tool call or permission reported."""
        counts = (self.workspace_changes or {}).get("counts") or {}
        return int(counts.get("unreported", 0))

    #: The run's warnings (``{code, message}``), as its ``warning`` events said them: a native
    #: mode chosen explicitly that acts on its own, a starting mode that may bypass approvals.
    warnings: list[dict[str, str]] = field(default_factory=list)

    def to_event(self) -> RunEvent:
        """The final ``result`` event."""
        return RunEvent(
            "result",
            self.run_id,
            {
                "status": self.status,
                "stopReason": self.stop_reason,
                "exitCode": self.exit_code,
                "errorCode": self.error_code,
                "message": self.message,
                "sessionId": self.session_id,
                "providerSessionId": self.provider_session_id,
                "toolCalls": self.tool_calls,
                "permissions": len(self.permissions),
                "durationMs": self.duration_ms,
                "bound": self.bound,
                "retryable": self.retryable,
                "skippedFrames": self.skipped_frames,
                "violations": self.violations,
                "usage": self.usage,
                "workspace": self.workspace,
                "workspaceChanges": self.workspace_changes,
                "warnings": [dict(w) for w in self.warnings],
            },
        )

    @classmethod
    def from_event(
        cls,
        event: RunEvent,
        *,
        text: str = "",
        permissions: Sequence[dict[str, Any]] = (),
    ) -> RunResult:
        """The result a ``result`` event describes (the inverse of :meth:`to_event`), with
        the turn's ``text`` and ``permissions`` decisions, which the event only counts: a
        caller reads them from the run's other events.

        A missing or non-integer ``exitCode`` (a sender that predates it) is derived from the
        status, as the run's own ending would be: an absent field never reads as success. A
        status this Baton does not know (a newer sender) reads as FAILED, with the exit code
        as sent."""
        data = event.data
        sent_status = data.get("status")
        status: RunStatus = sent_status if sent_status in RUN_STATUSES else "FAILED"
        error_code, bound = data.get("errorCode"), data.get("bound")
        sent = data.get("exitCode")
        derived = run_outcome_of(status, error_code=error_code, bound=bound)
        exit_code = sent if type(sent) is int else exit_code_of(derived)
        usage = data.get("usage")
        return cls(
            event.run_id,
            status,
            data.get("stopReason"),
            exit_code,
            error_code=error_code,
            message=data.get("message"),
            session_id=data.get("sessionId"),
            provider_session_id=data.get("providerSessionId"),
            tool_calls=int(data.get("toolCalls") or 0),
            duration_ms=int(data.get("durationMs") or 0),
            text=text,
            permissions=list(permissions),
            bound=bound,
            retryable=bool(data.get("retryable")),
            skipped_frames=int(data.get("skippedFrames") or 0),
            violations=int(data.get("violations") or 0),
            outcome=_OUTCOME_OF_EXIT_CODE.get(exit_code, derived),
            usage=usage if isinstance(usage, dict) else None,
            warnings=[
                {"code": str(w.get("code")), "message": str(w.get("message"))}
                for w in data.get("warnings") or ()
                if isinstance(w, dict)
            ],
        )


#: Each exit code's outcome (:data:`EXIT_CODES` is one-to-one), for a result read back.
_OUTCOME_OF_EXIT_CODE: Final = {code: outcome for outcome, code in EXIT_CODES.items()}


def permission_counts(permissions: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """A run's permission decisions (:attr:`RunResult.permissions`) counted: ``granted`` (an
    allow option chosen), ``denied`` (a reject option chosen) and ``cancelled`` (answered
    cancelled: nobody chose). The CLI's summary and a batch's results count alike."""
    counts = {"granted": 0, "denied": 0, "cancelled": 0}
    for view in permissions:
        if view.get("outcome") != "selected":
            counts["cancelled"] += 1
            continue
        kinds = {o.get("optionId"): o.get("kind") for o in view.get("options") or []}
        kind = str(kinds.get(view.get("optionId")) or "")
        counts["granted" if kind.startswith("allow") else "denied"] += 1
    return counts


def result_of_outcome(run_id: str, outcome: TurnOutcome, session: LaneSession | None) -> RunResult:
    """The run's result: the outcome, with its exit code from the one table."""
    return RunResult(
        run_id,
        outcome.status,
        outcome.stop_reason,
        EXIT_CODES[outcome.run_outcome],
        error_code=outcome.error_code,
        message=outcome.message or outcome.recovery_reason,
        session_id=session.session_id if session is not None else None,
        provider_session_id=session.provider_id if session is not None else None,
        tool_calls=outcome.tool_calls,
        text=outcome.text,
        permissions=outcome.permissions,
        bound=outcome.bound,
        retryable=outcome.retryable,
        skipped_frames=outcome.skipped_frames,
        violations=outcome.violations,
        outcome=outcome.run_outcome,
        usage=outcome.usage,
        workspace_changes=outcome.workspace_changes,
    )
