"""What a conversation's next prompt may do, decided from its record alone (pure functions):
whether it may be prompted at all, and how its provider session is attached.

Refusing to guess. When the provider session is not attached in this process, Baton attaches
it by ``session/resume``, else ``session/load`` (decisions.md item 5), as the agent advertised
them when the session was created or last used. An agent that advertised neither gets
:class:`~baton.errors.SessionNotResumable` naming both capabilities, before any process
starts: Baton never opens a fresh provider session in the conversation's place, which would
silently lose its context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from baton.errors import (
    SessionBusy,
    SessionClosed,
    SessionMaxCostReached,
    SessionNotResumable,
    SessionRecoveryRequired,
)
from baton.store import Conversation, Store
from baton.wire.capabilities import AgentCapabilities

#: How the next prompt reaches the provider session.
AttachMethod = Literal["attached", "session/resume", "session/load", "session/new"]

#: The capability names a record keeps, each with the ACP path it stands for.
CAPABILITY_PATHS: Final[Mapping[str, str]] = {
    "resume": "sessionCapabilities.resume",
    "load": "loadSession",
    "close": "sessionCapabilities.close",
    "list": "sessionCapabilities.list",
    "fork": "sessionCapabilities.fork",
    "forkAtTurn": 'sessionCapabilities.fork._meta["baton.forkAtTurn"]',
}


@dataclass(frozen=True, slots=True)
class AttachPlan:
    """How the next prompt of a conversation reaches its provider session."""

    method: AttachMethod
    provider_session_id: str


def recorded_capabilities(capabilities: AgentCapabilities) -> dict[str, bool]:
    """The session capabilities a conversation records, from an agent's initialize answer."""
    return {
        "resume": capabilities.session_resume,
        "load": capabilities.load_session,
        "close": capabilities.session_close,
        "list": capabilities.session_list,
        "fork": capabilities.session_fork,
        "forkAtTurn": capabilities.session_fork_at_turn,
    }


def refuse_unless_promptable(record: Conversation, recovery_run: str | None = None) -> None:
    """Raise unless ``record`` (already reconciled) can take a prompt now or after a wait:
    :class:`SessionClosed` for CLOSED, :class:`SessionRecoveryRequired` (naming the run and the
    command that settles it) for RECOVERY_REQUIRED. IDLE and ACTIVE pass."""
    if record.status == "CLOSED":
        raise SessionClosed(
            f"session {record.name} is closed; start another with `baton session new`"
        )
    if record.status == "RECOVERY_REQUIRED":
        run = recovery_run or "its id: `baton runs --status recovery_required`"
        settle = (
            f"`baton recover {recovery_run}`"
            if recovery_run
            else "`baton recover` (the run listed by `baton runs --status recovery_required`)"
        )
        raise SessionRecoveryRequired(
            f"session {record.name} has a run whose outcome is unknown ({run}); its prompt is "
            f"never replayed. Settle it with {settle} (e.g. --mark-failed), then "
            "prompt again"
        )


def plan_attach(record: Conversation, *, attached_here: bool, prompted: bool = True) -> AttachPlan:
    """How the next prompt reaches ``record``'s provider session: as it is when attached in
    this process; else, when no prompt ever reached it (``prompted`` false) and it is not a
    fork (which holds its parent's context from the start), a fresh
    session/new (there is no context to lose, and real adapters keep a session only once it
    was prompted); else by resume, else by load, else :class:`SessionNotResumable`."""
    provider_id = record.provider_session_id
    if provider_id is None:
        raise SessionNotResumable(
            f"session {record.name} has no provider session (its creation did not finish)"
        )
    if attached_here:
        return AttachPlan("attached", provider_id)
    if not prompted and record.forked_from is None:
        # (A fork holds its parent's context from the start: never replaced by a fresh one.)
        return AttachPlan("session/new", provider_id)
    if record.capabilities.get("resume"):
        return AttachPlan("session/resume", provider_id)
    if record.capabilities.get("load"):
        return AttachPlan("session/load", provider_id)
    raise SessionNotResumable(
        f"session {record.name} is not attached in this process and its agent advertises "
        f"neither {CAPABILITY_PATHS['resume']} nor {CAPABILITY_PATHS['load']}; Baton will not "
        "start a fresh provider session in its place"
    )


def busy_error(record: Conversation, waited: float | None) -> SessionBusy:
    """The SESSION_BUSY for an ACTIVE ``record`` owned by another live process."""
    owner = record.owner or "another process"
    after = f" after waiting {waited:g}s" if waited else ""
    return SessionBusy(
        f"session {record.name} has a turn running (Baton process {owner}){after}; "
        "wait for it, or run again without --no-wait"
    )


def session_cost(store: Store, name: str) -> tuple[float, str] | None:
    """The session's reported cost: the last ``cost`` its agent sent in a usage update (ACP's
    usage cost is the session's running total), or None when none was sent."""
    for run in reversed(store.conversation_runs(name)):
        for item in reversed(store.list_items(run.id)):
            content = item.content
            if item.kind != "usage" or not isinstance(content, dict):
                continue
            cost = content.get("cost")
            amount = cost.get("amount") if isinstance(cost, dict) else None
            if isinstance(amount, int | float) and not isinstance(amount, bool):
                assert isinstance(cost, dict)
                return float(amount), str(cost.get("currency") or "USD")
    return None


def refuse_over_cost(store: Store, name: str) -> None:
    """Raise SESSION_MAX_COST_REACHED when the session has a ``max_cost`` and its reported
    cost reached it."""
    cap = store.get_conversation(name).settings.get("maxCost")
    if not isinstance(cap, int | float):
        return
    spent = session_cost(store, name)
    if spent is not None and spent[0] >= cap:
        raise SessionMaxCostReached(
            f"session {name} reported {spent[0]:g} {spent[1]}, its cap is {cap:g}: no more "
            "prompts (start a new session, or `baton session new --max-cost` a higher cap)"
        )
