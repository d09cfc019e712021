"""Forking a conversation (`baton session fork NAME NEW [--at-turn N]`, issue 29).

A fork is a conversation of its own: its own record (naming its parent and how many of the
parent's turns it holds), its own provider session opened by ``session/fork`` of the parent's
(unstable ACP, baton.wire.fork), its own runs, and, when the parent has a workspace, its own
worktree ``session-NEW`` branched from the parent's workspace as it is now (uncommitted
changes included). Its history starts with the parent's turns up to the fork point.

Refusals, before any agent process starts where the record already says so:
SESSION_FORK_NOT_ADVERTISED when the parent's agent did not advertise
``sessionCapabilities.fork``; SESSION_FORK_AT_TURN_UNSUPPORTED for ``--at-turn`` without
Baton's fork extension; INVALID_ARGUMENT for a turn the parent does not have; the parent's
own refusals (SESSION_CLOSED, SESSION_RECOVERY_REQUIRED, SESSION_BUSY while a turn runs,
SESSION_ON_OTHER_HOST); SESSION_NAME_TAKEN / SESSION_NAME_INVALID for NEW. A record made by
an older Baton has no ``fork`` entry: the agent's live advertisement decides then.

Cancellation: as :meth:`Conversations.create`: a cancel during session/fork leaves no IDLE
record (the half-made one is removed, or closed by reconciliation) and no worktree.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING, Final

from baton.errors import (
    InvalidArgument,
    SessionForkAtTurnUnsupported,
    SessionForkNotAdvertised,
    SessionNameTaken,
    SessionNotResumable,
    SessionSetupFailed,
)
from baton.runtime.conversations.decisions import (
    busy_error,
    recorded_capabilities,
    refuse_unless_promptable,
)
from baton.runtime.conversations.history import conversation_history
from baton.runtime.conversations.names import check_session_name
from baton.runtime.runtime import RunRequest
from baton.runtime.workspaces.lifecycle import current_state_commit
from baton.runtime.workspaces.worktrees import WorktreePlan
from baton.store import Conversation, Store
from baton.store.models import WorkspaceRecord
from baton.store.owner import owner_alive
from baton.wire import fork as fork_wire

if TYPE_CHECKING:
    from baton.runtime.conversations.service import Conversations

#: The prompt text recorded on the run that opens a fork's provider session (session/fork;
#: no prompt is sent).
FORK_PROMPT: Final = "(baton session fork {parent} {name}: session/fork, no prompt is sent)"


def _refuse_from_record(parent: Conversation, at_turn: int | None) -> None:
    """The refusals the parent's recorded advertisement already decides (nothing starts)."""
    caps = parent.capabilities
    if "fork" not in caps:
        return  # recorded by an older Baton: the live advertisement decides
    if not caps["fork"]:
        raise SessionForkNotAdvertised(f"the agent of session {parent.name}")
    if at_turn is not None and not caps.get("forkAtTurn"):
        raise SessionForkAtTurnUnsupported(_at_turn_refusal(parent.name))


def _at_turn_refusal(name: str) -> str:
    return (
        f"forking session {name} at an earlier turn needs Baton's fork extension "
        f'(sessionCapabilities.fork._meta["{fork_wire.AT_TURN_META_KEY}"]), which its agent '
        "did not advertise (ACP's session/fork has no fork point; no published adapter has it); "
        "nothing was sent. Next: fork the whole session (leave out --at-turn)"
    )


def _agent_turns(store: Store, parent: Conversation, at_turn: int | None) -> tuple[int, int | None]:
    """The turns the fork holds (Baton's count, as `session history` numbers them) and the
    count the agent is asked for (the prompts among them that reached it; None: all)."""
    turns = conversation_history(store, parent.name)
    if at_turn is None:
        return len(turns), None
    fork_wire.check_at_turn(at_turn)
    if at_turn > len(turns):
        raise InvalidArgument(
            f"session {parent.name} has {len(turns)} turns; --at-turn must be 1 to {len(turns)} "
            "(`baton session history` numbers them)"
        )
    sent = sum(1 for turn in turns[:at_turn] if turn.sent)
    if sent == 0:
        raise InvalidArgument(
            f"no prompt of the first {at_turn} turns of session {parent.name} reached its agent; "
            "nothing to fork (fork at a later turn, or start a new session)"
        )
    return at_turn, sent


async def _fork_workspace(
    conversations: Conversations, store: Store, parent: Conversation, name: str
) -> tuple[WorkspaceRecord | None, str]:
    """The fork's worktree (``session-NAME``, branched from the parent's workspace as it is
    now) and the fork's cwd; no workspace and the parent's cwd when the parent has none."""
    runtime = conversations.runtime
    workspace = store.session_workspace(parent.name)
    if workspace is None or workspace.state != "ACTIVE":
        return None, parent.cwd
    if workspace.repository is None:
        raise InvalidArgument(
            f"session {parent.name} works in the directory {workspace.path}, which is not in a "
            "git repository: a fork cannot have its own copy of it. Next: give the parent a "
            "worktree (`baton session new NAME --workspace worktree`) or start a new session"
        )
    commit = await asyncio.to_thread(current_state_commit, workspace, runtime.environ)
    # A worktree shares its repository's objects, so the state commit is there for the fork.
    plan = WorktreePlan(
        workspace.repository,
        f"session {parent.name} ({workspace.branch or workspace.path}, as it was at the fork)",
        commit,
        workspace.subdirectory,
    )
    record = await runtime.workspaces.create(
        store, plan, f"session-{name}", created_by=None, session_name=name
    )
    cwd = os.path.join(record.path, record.subdirectory) if record.subdirectory else record.path
    return record, cwd


async def fork_conversation(
    conversations: Conversations, parent_name: str, name: str, at_turn: int | None = None
) -> Conversation:
    """Fork conversation ``parent_name`` as ``name`` (see the module docstring, refusals and
    cancellation included); the fork's record, IDLE, its provider session kept attached."""
    store = await conversations._store()
    name = check_session_name(name)
    parent = store.reconcile_conversation(parent_name, owner_alive)
    await conversations.refuse_other_host(parent_name)
    refuse_unless_promptable(parent, conversations._recovery_run(store, parent_name))
    if parent.status == "ACTIVE":
        raise busy_error(parent, None)
    if parent.provider_session_id is None:
        raise SessionNotResumable(
            f"session {parent_name} has no provider session (its creation did not finish)"
        )
    _refuse_from_record(parent, at_turn)
    fork_turns, agent_turns = _agent_turns(store, parent, at_turn)
    if store.find_conversation(name) is not None:
        raise SessionNameTaken(
            f"a session named {name!r} already exists; pick another name for the fork"
        )
    workspace, cwd = await _fork_workspace(conversations, store, parent, name)
    try:
        store.create_conversation(
            name,
            parent.profile,
            cwd,
            agent_command=parent.agent_command,
            env_keys=parent.env_keys,
            settings=parent.settings,
            forked_from=parent_name,
            fork_turns=fork_turns,
        )
    except BaseException:
        await conversations._drop_workspace(store, workspace)
        raise
    command = parent.agent_command
    request = RunRequest(
        prompt=FORK_PROMPT.format(parent=parent_name, name=name),
        agent=parent.profile if command is None else None,
        agent_command=command,
        env_keys=tuple(parent.env_keys),
        cwd=cwd,
        inspect_only=True,
        keep_session=True,
        session=name,
        fork_session=parent.provider_session_id,
        fork_at_turn=agent_turns,
    )
    result, capabilities = await conversations._setup_run(store, name, request, workspace)
    if result.status != "COMPLETED" or result.provider_session_id is None:
        store.delete_conversation_claimed(name)
        await conversations._drop_workspace(store, workspace)
        if result.error_code == SessionForkNotAdvertised.code:
            raise SessionForkNotAdvertised(f"the agent of session {parent_name}")
        if result.error_code == SessionForkAtTurnUnsupported.code:
            raise SessionForkAtTurnUnsupported(_at_turn_refusal(parent_name))
        if result.error_code == SessionNotResumable.code:
            raise SessionNotResumable(result.message or "the agent no longer has the session")
        raise SessionSetupFailed(
            f"session {name} was not forked from {parent_name}: {result.error_code}: "
            f"{result.message}",
            result,
        )
    return store.release_conversation(
        name,
        "IDLE",
        provider_session_id=result.provider_session_id,
        capabilities=recorded_capabilities(capabilities) if capabilities is not None else None,
    )
