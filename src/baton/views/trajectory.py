"""Runs and sessions as trajectories for evaluation (docs/trajectories.md): the Agent
Trajectory Interchange Format (ATIF, Harbor's) and the normalized events one per line
(``acp-jsonl``), for `baton export`, ``GET /api/v1/runs/{run}/trajectory`` and
``GET /api/v1/sessions/{name}/trajectory``.

A trajectory holds the turns of one run or of one session, oldest first: per turn a ``user``
step (the prompt as recorded, redacted), the agent steps (:mod:`baton.views.trajectory_steps`)
with the turn's metrics on its last agent step, and a ``system`` step when the run did not
complete. :func:`run_trajectories` gives one trajectory per run of any list of runs (a batch's
cells). Metrics say only what the agent reported: a count or a cost it did not send is absent,
never 0 (docs/usage.md); a total is given only when every turn reported its part.

Reads the store only (every host of a shared store exports every run), whose text is redacted.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from baton._version import __version__
from baton.errors import RunNotFound
from baton.store import Store
from baton.store.batches import BatchRecords
from baton.store.models import Run
from baton.views.run_ids import resolve_run
from baton.views.run_record_events import EventSource, run_events
from baton.views.runs import run_context
from baton.views.trajectory_steps import AgentStep, RunSteps, atif_step, fold_events

#: The ATIF version written: the newest the format's documentation describes, which the
#: published models (harbor 0.26's ``harbor.models.trajectories``, ATIF-v1.0 to v1.8) validate.
ATIF_SCHEMA_VERSION: Final = "ATIF-v1.7"
#: The export formats.
ExportFormat = Literal["atif", "acp-jsonl"]
EXPORT_FORMATS: Final[tuple[ExportFormat, ...]] = ("atif", "acp-jsonl")
#: Runs of a session exported at most (its newest), like `baton session show`.
MAX_SESSION_TURNS: Final = 1000
#: Runs of each stored session of one provider session looked at to find the cost reported
#: before a run (ACP's cost is the session's running total).
MAX_COST_LOOKBACK_RUNS: Final = 1000
#: Decimal digits a computed cost (a difference or a sum of reported costs) is rounded to:
#: keeps float noise (0.30000000000000004) out of the totals, far below any currency's unit.
COST_DIGITS: Final = 10
#: The agent version when nothing recorded it (ATIF requires one).
UNKNOWN_VERSION: Final = "unknown"
#: Statuses whose turn ended as the agent meant: any other gets a ``system`` step saying so.
_COMPLETED: Final = "COMPLETED"


@dataclass(frozen=True)
class ExportTarget:
    """What `baton export` names: one run, a session's runs (oldest first), or a batch's runs
    (its cells in matrix order, each cell's attempts in order)."""

    kind: Literal["run", "session", "batch"]
    name: str
    runs: tuple[Run, ...]


def resolve_export_target(store: Store, target: str) -> ExportTarget:
    """The session named ``target``, else the run it names (an id or a unique prefix).
    RUN_NOT_FOUND when it names neither."""
    if store.find_conversation(target) is not None:
        runs = store.conversation_runs(target, limit=MAX_SESSION_TURNS)
        return ExportTarget("session", target, tuple(runs))
    batch = BatchRecords(store).find_batch(target)
    if batch is not None:
        run_ids = [
            run_id for cell in BatchRecords(store).batch_cells(batch.id) for run_id in cell.runs
        ]
        return ExportTarget("batch", batch.id, tuple(_runs_of(store, run_ids)))
    try:
        run = resolve_run(store, target)
    except RunNotFound as exc:
        raise RunNotFound(
            f"no run, session or batch {target!r}; `baton runs`, `baton sessions` and "
            "`baton batch list` list them"
        ) from exc
    return ExportTarget("run", run.id, (run,))


def export_trajectory(store: Store, target: ExportTarget) -> dict[str, Any]:
    """The ATIF trajectory of an export target (one run, or a session's turns); a batch has
    one trajectory per run (:func:`run_trajectories`), not one document."""
    if target.kind == "batch":
        raise ValueError("a batch exports one trajectory per run: use run_trajectories")
    if target.kind == "session":
        return trajectory_of(
            store, target.runs, trajectory_id=f"session:{target.name}", session_name=target.name
        )
    return trajectory_of(store, target.runs, trajectory_id=target.name)


def run_trajectories(store: Store, run_ids: Sequence[str]) -> list[dict[str, Any]]:
    """One ATIF trajectory per run id (a batch's cells), in order. RUN_NOT_FOUND for an id
    the store does not have."""
    return [trajectory_of(store, (run,), trajectory_id=run.id) for run in _runs_of(store, run_ids)]


def _runs_of(store: Store, run_ids: Sequence[str]) -> list[Run]:
    """The runs of ``run_ids``, in order; RUN_NOT_FOUND for an id the store does not have."""
    found = []
    for run_id in run_ids:
        run = store.find_run(run_id)
        if run is None:
            raise RunNotFound(f"no run {run_id!r}")
        found.append(run)
    return found


def acp_jsonl_lines(store: Store, runs: Sequence[Run]) -> Iterator[bytes]:
    """The runs' normalized events, one JSON object per line (``\\n``-terminated), each run's
    in order, the runs in the order given."""
    for run in runs:
        events, _source = run_events(store, run)
        for event in events:
            yield orjson.dumps(event) + b"\n"


def trajectory_of(
    store: Store,
    runs: Sequence[Run],
    *,
    trajectory_id: str,
    session_name: str | None = None,
) -> dict[str, Any]:
    """The trajectory of ``runs`` as turns of one conversation, oldest first."""
    steps: list[dict[str, Any]] = []
    subagents: list[dict[str, Any]] = []
    turns: list[dict[str, Any]] = []
    sources: set[EventSource] = set()
    agent_name, model_name, provider_session, command = None, None, None, None
    # Each provider session's running cost at the end of its last turn exported so far (its
    # next turn's starting point, without asking the store again).
    chain: dict[str, tuple[float, str] | None] = {}
    for run in runs:
        context = run_context(store, run)
        agent_name = agent_name or context["agent"]
        command = command or _launch_command(store, run)
        stored = store.find_session(run.session_id) if run.session_id else None
        if stored is not None:
            provider_session = provider_session or stored.provider_session_id
            model_name = model_name or _model_of(stored.native_state)
        events, source = run_events(store, run)
        sources.add(source)
        folded = fold_events(events, split=source == "stream")
        provider = stored.provider_session_id if stored is not None else None
        turn = _turn_metrics(store, run, folded, chain, provider)
        turns.append(turn)
        _link_subagents(folded, run.id)
        steps.append(
            {
                "step_id": len(steps) + 1,
                "timestamp": run.created_at,
                "source": "user",
                "message": run.prompt_text,
                "extra": {"run_id": run.id},
            }
        )
        agent_steps = [
            atif_step(step, len(steps) + 1 + index, model_name=None)
            for index, step in enumerate(folded.steps)
        ]
        if agent_steps:
            last = agent_steps[-1]
            if turn["metrics"] is not None:
                last["metrics"] = turn["metrics"]
            last.setdefault("extra", {}).update(_turn_extra(run, folded))
        steps.extend(agent_steps)
        failure = _failure_step(run, len(steps) + 1, attach_outcome=not agent_steps, folded=folded)
        if failure is not None:
            steps.append(failure)
        subagents.extend(
            _subagent_trajectory(run, parent, sub, context["agent"])
            for parent, sub in folded.subagents.items()
        )
    trajectory: dict[str, Any] = {
        "schema_version": ATIF_SCHEMA_VERSION,
        "trajectory_id": trajectory_id,
        "agent": _agent(agent_name, model_name, command),
        "steps": steps or [_empty_step()],
        "notes": _notes(sources),
        "final_metrics": _final_metrics(turns, len(steps) or 1),
        "extra": {
            "baton": {
                "version": __version__,
                "runs": [run.id for run in runs],
                "session": session_name,
                "eventSource": sorted(sources),
            }
        },
    }
    if provider_session is not None:
        trajectory["session_id"] = provider_session
    elif runs and runs[0].session_id:
        trajectory["session_id"] = runs[0].session_id
    if subagents:
        trajectory["subagent_trajectories"] = subagents
    return trajectory


def _agent(name: str | None, model_name: str | None, command: str | None) -> dict[str, Any]:
    agent: dict[str, Any] = {"name": name or "custom", "version": UNKNOWN_VERSION}
    if model_name is not None:
        agent["model_name"] = model_name
    agent["extra"] = {"client": "baton", "clientVersion": __version__}
    if command is not None:
        agent["extra"]["command"] = command
    return agent


def _launch_command(store: Store, run: Run) -> str | None:
    """An ad-hoc agent's launch form as its run recorded it (redacted), or None."""
    for observation in store.list_observations(run_id=run.id):
        payload = observation.payload
        launch = payload.get("launch") if isinstance(payload, dict) else None
        if isinstance(launch, dict) and isinstance(launch.get("command"), str):
            return str(launch["command"])
    return None


def _model_of(native_state: Any) -> str | None:
    """The session's current model as its config options (category ``model``) or legacy
    ``models`` state last recorded it."""
    if not isinstance(native_state, dict):
        return None
    for option in native_state.get("configOptions") or ():
        if isinstance(option, dict) and option.get("category") == "model":
            value = option.get("currentValue")
            if isinstance(value, str) and value:
                return value
    models = native_state.get("models")
    if isinstance(models, dict) and isinstance(models.get("currentModelId"), str):
        return str(models["currentModelId"])
    return None


def _empty_step() -> dict[str, Any]:
    return {"step_id": 1, "source": "system", "message": "no turns were recorded"}


def _notes(sources: set[EventSource]) -> str:
    notes = (
        f"Exported by Baton {__version__} from its run store (redacted text). Tool call "
        "arguments are what Baton records of a call's input (command, paths); the raw input "
        "and output stay in Baton's protected journal. Metrics are what the agent reported; "
        "absent means not reported."
    )
    if "record" in sources:
        notes += (
            " Rebuilt from the runs' records: a turn's text, thoughts and tool calls are kept, "
            "not how they interleaved."
        )
    return notes


def _link_subagents(folded: RunSteps, run_id: str) -> None:
    """Name each subagent's trajectory in the observation of the call it ran under."""
    for parent in folded.subagents:
        ref = _subagent_id(run_id, parent)
        holders = [s for s in folded.steps if parent in s.calls]
        holders += [s for p, s in folded.subagents.items() if p != parent and parent in s.calls]
        if holders:
            holders[0].subagent_refs[parent] = ref
        else:
            # The parent call itself was never reported: an observation without a call names it.
            orphan = AgentStep()
            orphan.extra["subagentOfUnreportedCall"] = parent
            orphan.subagent_refs[parent] = ref
            folded.steps.append(orphan)


def _subagent_id(run_id: str, parent: str) -> str:
    return f"{run_id}:{parent}"


def _subagent_trajectory(
    run: Run, parent: str, sub: AgentStep, agent: str | None
) -> dict[str, Any]:
    """The embedded trajectory of the tool calls reported under ``parent``."""
    step = atif_step(sub, 1, model_name=None)
    return {
        "schema_version": ATIF_SCHEMA_VERSION,
        "trajectory_id": _subagent_id(run.id, parent),
        "agent": {
            "name": f"{agent or 'custom'} subagent",
            "version": UNKNOWN_VERSION,
            "extra": {"parentToolCallId": parent, "runId": run.id},
        },
        "steps": [step],
        "notes": (
            "The tool calls the agent reported under its tool call "
            f"{parent} (ACP carries a subagent's tool calls, not its text)."
        ),
    }


def _turn_extra(run: Run, folded: RunSteps) -> dict[str, Any]:
    extra: dict[str, Any] = {"run_id": run.id, "status": run.status, "stop_reason": run.stop_reason}
    if folded.plan is not None:
        extra["plan"] = folded.plan
    if folded.workspace_changes is not None:
        extra["workspace_changes"] = folded.workspace_changes
    return extra


def _failure_step(
    run: Run, step_id: int, *, attach_outcome: bool, folded: RunSteps
) -> dict[str, Any] | None:
    """A ``system`` step saying how a turn that did not complete ended (with the turn's
    outcome when it has no agent step to carry it)."""
    if run.status == _COMPLETED and run.error_code is None:
        return None
    words = f"The turn ended {run.status}"
    if run.error_code:
        words += f" ({run.error_code})"
    if run.diagnostic:
        words += f": {run.diagnostic}"
    extra: dict[str, Any] = {
        "run_id": run.id,
        "status": run.status,
        "stop_reason": run.stop_reason,
        "error_code": run.error_code,
    }
    if run.recovery_reason:
        extra["recovery_reason"] = run.recovery_reason
    if attach_outcome:
        extra.update({k: v for k, v in _turn_extra(run, folded).items() if k not in extra})
    return {
        "step_id": step_id,
        "timestamp": run.ended_at or run.updated_at,
        "source": "system",
        "message": words,
        "extra": extra,
    }


# --- metrics ------------------------------------------------------------------------------


class _Unseen:
    """A provider session none of whose turns the export has met yet."""


_UNSEEN: Final = _Unseen()


def _turn_metrics(
    store: Store,
    run: Run,
    folded: RunSteps,
    chain: dict[str, tuple[float, str] | None],
    provider: str | None,
) -> dict[str, Any]:
    """The turn's reported counts and cost: ``metrics`` (an ATIF Metrics object or None)
    and each known total's part (None: not reported). ``chain``: the running cost each
    provider session ended its previous exported turn with (updated here)."""
    usage = folded.usage or {}
    sent = usage.get("turn")
    counts: dict[str, Any] = sent if isinstance(sent, dict) else {}
    prompt = _count(counts.get("inputTokens"))
    completion = _count(counts.get("outputTokens"))
    cached = _count(counts.get("cachedReadTokens"))
    previous = chain.get(provider, _UNSEEN) if provider is not None else _UNSEEN
    cost, currency, running = _turn_cost(store, run, usage, previous)
    if provider is not None:
        chain[provider] = _cost_of(usage)
    extra = {
        "total_tokens": _count(counts.get("totalTokens")),
        "thought_tokens": _count(counts.get("thoughtTokens")),
        "cached_write_tokens": _count(counts.get("cachedWriteTokens")),
        "context_used": _count(usage.get("used")),
        "context_size": _count(usage.get("size")),
        "session_cost": running,
    }
    if currency is not None and currency != "USD" and cost is not None:
        extra["cost"] = {"amount": cost, "currency": currency}
    metrics: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cached_tokens": cached,
        "cost_usd": cost if currency == "USD" else None,
        "extra": {k: v for k, v in extra.items() if v is not None} or None,
    }
    metrics = {k: v for k, v in metrics.items() if v is not None}
    return {
        "metrics": metrics or None,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "cached_tokens": cached,
        "cost_usd": metrics.get("cost_usd"),
    }


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value)


def _cost_of(usage: Any) -> tuple[float, str] | None:
    cost = usage.get("cost") if isinstance(usage, dict) else None
    if not isinstance(cost, dict):
        return None
    amount = cost.get("amount")
    if isinstance(amount, bool) or not isinstance(amount, int | float):
        return None
    return float(amount), str(cost.get("currency") or "USD").upper()


def _turn_cost(
    store: Store,
    run: Run,
    usage: dict[str, Any],
    previous: tuple[float, str] | _Unseen | None,
) -> tuple[float | None, str | None, dict[str, Any] | None]:
    """The turn's own cost (ACP reports the session's running total: this turn's minus the
    one the session's previous turn ended with: ``previous`` when the export holds that
    turn, else the store's), its currency, and the running total."""
    reported = _cost_of(usage)
    if reported is None:
        return None, None, None
    total, currency = reported
    running = {"amount": total, "currency": currency}
    if isinstance(previous, _Unseen):
        before = _cost_before(store, run, currency)
    elif previous is None or previous[1] != currency:
        before = None
    else:
        before = previous[0]
    if before is None:
        return None, currency, running
    return round(total - before, COST_DIGITS), currency, running


def _cost_before(store: Store, run: Run, currency: str) -> float | None:
    """The running cost the run's provider session reported before this run (over every
    process that attached it): 0 when this is its first turn; None when the previous turn
    reported none (unknown)."""
    if run.session_id is None:
        return 0.0
    stored = store.find_session(run.session_id)
    sessions = [run.session_id]
    if stored is not None and stored.provider_session_id:
        sessions = [
            s.id for s in store.sessions_by_provider_id(stored.profile, stored.provider_session_id)
        ] or sessions
    earlier = [
        r
        for session_id in sessions
        for r in store.list_runs(session_id=session_id, limit=MAX_COST_LOOKBACK_RUNS)
        if r.created_at < run.created_at and r.id != run.id
    ]
    if not earlier:
        return 0.0
    previous = max(earlier, key=lambda r: r.created_at)
    usage = next(
        (i.content for i in reversed(store.list_items(previous.id)) if i.kind == "usage"), None
    )
    reported = _cost_of(usage)
    if reported is None or reported[1] != currency:
        return None
    return reported[0]


def _final_metrics(turns: list[dict[str, Any]], total_steps: int) -> dict[str, Any]:
    """Totals of what every turn reported (a total some turn did not report is absent)."""

    def total(key: str) -> int | float | None:
        parts: list[int | float | None] = [t[key] for t in turns]
        known = [p for p in parts if p is not None]
        if not parts or len(known) < len(parts):
            return None
        # Costs are floats: a sum keeps the precision of its parts (no 4.000000000000002).
        return round(sum(known), COST_DIGITS) if key == "cost_usd" else sum(known)

    final: dict[str, Any] = {
        "total_prompt_tokens": total("prompt_tokens"),
        "total_completion_tokens": total("completion_tokens"),
        "total_cached_tokens": total("cached_tokens"),
        "total_cost_usd": total("cost_usd"),
        "total_steps": total_steps,
    }
    return {k: v for k, v in final.items() if v is not None}
