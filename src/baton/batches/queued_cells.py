"""A batch's cells queued on the fleet (``baton batch run --fleet``, docs/fleet.md): each cell
is a submission (:func:`baton.fleet.submit`) that the workers run, each in its worktree on its
host; the batch process only submits, follows and records.

Exactly once. Each submission carries the idempotency key ``BATCH:CELL:ATTEMPT``: a batch
process killed between the submission and the write of its run on the cell submits the same
key again on resume, which is the same run (the fleet's own guarantee that a queued turn runs
at most once does the rest). A resumed batch follows its cells whose runs are still queued or
running on a worker instead of leaving them.

A queued cell is cancelled while no worker took it; one a worker started runs to its end (the
fleet cannot interrupt another host's turn).
"""

from __future__ import annotations

import time
from typing import Any, Final

from baton.batches.spec import BatchSpec, Cell
from baton.errors import BatchError
from baton.runtime.runtime import RunResult

#: The fleet queue cells go to unless ``--queue`` names another.
DEFAULT_BATCH_QUEUE: Final = "default"
#: Spec fields a queued turn cannot carry (a worker's request has no field for them).
_UNSUPPORTED_AGENT_FIELDS: Final = ("options", "protocol")


def idempotency_key(batch_id: str, cell: int, attempt: int) -> str:
    """The key of a cell's submission (the same on a resume, so never submitted twice)."""
    return f"{batch_id}:{cell}:{attempt}"


def submission_for(spec: BatchSpec, cell: Cell, *, queue: str, key: str) -> Any:
    """The :class:`~baton.fleet.TurnSubmission` of one cell (the spec passed
    :func:`check_fleet_spec`)."""
    from baton.fleet.queued import TurnSubmission

    task = spec.task(cell.task)
    agent = spec.agent(cell.agent)
    worktree = task.workspace == "worktree"
    settings = spec.run
    return TurnSubmission(
        prompt=task.prompt,
        agent=agent.profile,
        agent_command=agent.command,
        queue=queue,
        cwd=task.repo if worktree else task.cwd,
        policy=agent.policy or settings.policy,
        allow_unattended=settings.allow_unattended,
        mode=agent.mode,
        model=agent.model,
        effort=agent.effort,
        idle_timeout=settings.idle_timeout,
        timeout=settings.timeout,
        idempotency_key=key,
        env_keys=tuple(agent.env),
        workspace="worktree" if worktree else None,
        base=task.base if worktree else None,
        require_clean=settings.require_clean if worktree else False,
    )


def check_fleet_spec(spec: BatchSpec) -> None:
    """Refuse, before anything is submitted, a spec a fleet batch cannot run."""
    for task in spec.tasks:
        if task.attachments:
            raise BatchError(f"task {task.id}: a fleet batch cannot attach files (no worker field)")
    for agent in spec.agents:
        for name in _UNSUPPORTED_AGENT_FIELDS:
            if getattr(agent, name):
                raise BatchError(f"agent {agent.id}: a fleet batch cannot set {name}")


async def follow_queued(handle: Any) -> tuple[RunResult, float | None]:
    """Follow a queued run to its result: the result (with the reply and the permission
    decisions its events carried) and when its first output was seen (monotonic), if any.

    Cancellation: safe at any await; nothing is written (the queued run goes on)."""
    first_output: float | None = None
    text: list[str] = []
    permissions: list[dict[str, Any]] = []
    async for event in handle.events():
        if first_output is None and event.type in ("text", "thought", "tool_call", "plan"):
            first_output = time.monotonic()
        if event.type == "text" and isinstance(event.data.get("text"), str):
            text.append(event.data["text"])
        elif event.type == "permission":
            permissions.append(dict(event.data))
        elif event.type == "result":
            result = RunResult.from_event(event, text="".join(text), permissions=permissions)
            return result, first_output
    raise AssertionError("a queued run's events end with its result")  # pragma: no cover
