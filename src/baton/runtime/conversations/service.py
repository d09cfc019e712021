"""Conversations: named, persistent sessions over the Runtime's public API (issue 17).

:class:`Conversations` is the small typed API every surface calls (the CLI today, `baton
serve` later): :meth:`~Conversations.create`, :meth:`~Conversations.list`,
:meth:`~Conversations.show`, :meth:`~Conversations.history`, :meth:`~Conversations.start`
(a :class:`~baton.runtime.conversations.session_run.SessionRun` handle once the turn's run
exists; :meth:`~Conversations.prompt` and :meth:`~Conversations.events` are built on it),
:meth:`~Conversations.cancel`,
:meth:`~Conversations.close` and :meth:`~Conversations.remove`. :class:`Session` is one
conversation's handle for library users::

    async with Runtime(data_dir=...) as runtime:
        conversations = Conversations(runtime)
        session = await conversations.session("fix-login", agent="claude", cwd=".")
        first = await session.prompt("Find the failing test")
        second = await session.prompt("Now fix it")        # same provider session

A prompt: the in-process turn queue (FIFO, bounded), then the store's claim (IDLE -> ACTIVE,
naming this process; another live process's claim is waited for, bounded, or SESSION_BUSY),
then one :meth:`Runtime.run` on the provider session (attached here as it is, else resumed,
else loaded, else SESSION_NOT_RESUMABLE), kept attached for the next prompt. The run is linked
to the conversation as soon as it exists, so a crash leaves a record that names it. The turn
ends IDLE, or RECOVERY_REQUIRED when its run is, which refuses prompts until `baton recover`
settles the run: the ambiguous prompt is never replayed.

On a shared store (docs/fleet.md) a conversation is held by the host of the Baton process
that last ran it (:meth:`Conversations.holding_host`): reading it works from anywhere, and a
write from another host (prompt, close, remove, a control change) is refused with
SESSION_ON_OTHER_HOST naming the holder, before anything is claimed or sent.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Final

from baton.errors import (
    BatonError,
    ConfigurationError,
    InternalError,
    SessionOnOtherHost,
    SessionSetupFailed,
    StoreConflict,
)
from baton.redaction import redact_json
from baton.runtime.agents.launch import CUSTOM_PROFILE_ID
from baton.runtime.conversations.decisions import (
    AttachPlan,
    busy_error,
    plan_attach,
    recorded_capabilities,
    refuse_over_cost,
    refuse_unless_promptable,
)
from baton.runtime.conversations.fork import fork_conversation
from baton.runtime.conversations.history import HistoryTurn, conversation_history
from baton.runtime.conversations.names import check_session_name, generate_session_name
from baton.runtime.conversations.remote import (
    RemoteListing,
    delete_remote_session,
    list_remote_sessions,
)

# The store's ``Run`` is a run's record; the runtime's is the handle of one running here.
from baton.runtime.conversations.requests import (
    QUEUED,
    ConversationView,
    NewConversation,
    PromptOptions,
    SteerResult,
)
from baton.runtime.conversations.session import Session
from baton.runtime.conversations.session_run import SessionRun
from baton.runtime.conversations.turn_queue import TurnQueue
from baton.runtime.lanes.lane import LaneSession
from baton.runtime.run import Run as RunningRun
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.controls import ControlSet
from baton.runtime.turns.events import RunEvent
from baton.runtime.workspaces.lifecycle import remove_workspace
from baton.store import FINAL_RUN_STATUSES, Conversation, ConversationStatus, Store
from baton.store.models import WorkspaceRecord
from baton.store.owner import current_host, owner_alive, owner_host
from baton.wire.capabilities import AgentCapabilities
from baton.wire.extensions import steering

#: Seconds between two looks at the store while another process holds the turn.
CLAIM_POLL_SECONDS: Final = 0.2
#: The prompt text recorded on the run that creates a conversation's provider session
#: (session/new; no prompt is sent).
SETUP_PROMPT: Final = "(baton session new {name}: session/new, no prompt is sent)"


class Conversations:
    """The conversations of one :class:`Runtime`'s data directory (see the module docstring).

    Every coroutine opens the runtime when needed. One instance per runtime: the turn queue
    that orders this process's prompts lives here."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.queue = TurnQueue()

    # --- reading ---------------------------------------------------------------------------

    async def _store(self) -> Store:
        await self.runtime.open()
        return self.runtime.store

    async def get(self, name: str) -> Conversation:
        """The conversation ``name``, reconciled (a dead owner's turn settled, a settled
        recovery released). SESSION_NOT_FOUND when there is none."""
        store = await self._store()
        return store.reconcile_conversation(name, owner_alive)

    async def list(
        self, *, status: ConversationStatus | None = None, agent: str | None = None
    ) -> list[Conversation]:
        """Conversations, most recently used first, reconciled, optionally filtered by status
        and agent profile (``custom`` for ad-hoc commands)."""
        store = await self._store()
        found = [
            store.reconcile_conversation(c.name, owner_alive)
            for c in store.list_conversations(profile=agent)
        ]
        return [c for c in found if status is None or c.status == status]

    async def holding_hosts(self) -> dict[str, str | None]:
        """The host holding each conversation, by name (see :meth:`holding_host`)."""
        store = await self._store()
        return {name: owner_host(owner) for name, owner in store.conversation_holders().items()}

    async def holding_host(self, name: str) -> str | None:
        """The host holding conversation ``name``: the host of the Baton process of its
        ACTIVE turn, else of its newest run (where its agent process and provider session
        are); None when no run of it names a host."""
        store = await self._store()
        store.get_conversation(name)  # SESSION_NOT_FOUND first
        return owner_host(store.conversation_holders(name).get(name))

    async def refuse_other_host(self, name: str) -> None:
        """SESSION_ON_OTHER_HOST when the store is shared and another host holds ``name``
        (every write of a conversation checks this first; a surface that queues a prompt
        checks it before queueing)."""
        if not self.runtime.store_location.shared:
            return
        holder = await self.holding_host(name)
        if holder is not None and holder != current_host():
            raise SessionOnOtherHost(
                f"session {name} is held by host {holder} (its agent and provider session are "
                f"there; this is {current_host()}): run this on {holder}"
            )

    async def show(self, name: str) -> ConversationView:
        """The conversation, its runs and its last known native state."""
        record = await self.get(name)
        store = await self._store()
        native = None
        if record.provider_session_id is not None:
            stored = store.find_session_by_provider_id(record.profile, record.provider_session_id)
            native = stored.native_state if stored is not None else None
        return ConversationView(
            record,
            store.conversation_runs(name),
            native,
            self._attached(record) is not None,
        )

    async def history(self, name: str, limit: int | None = None) -> builtins.list[HistoryTurn]:
        """The conversation's turns, oldest first (the last ``limit`` of them)."""
        await self.get(name)
        return conversation_history(await self._store(), name, limit)

    async def latest(
        self,
        cwd: str | None,
        *,
        agent: str | None = None,
        agent_command: str | Sequence[str] | None = None,
    ) -> Conversation | None:
        """The most recently used conversation of ``cwd`` (default: the current directory)
        and this agent that is not CLOSED (`baton run --continue`), or None."""
        store = await self._store()
        where = os.path.realpath(cwd or os.getcwd())
        profile = agent or CUSTOM_PROFILE_ID
        command = None if agent_command is None else _stored_command(agent_command)
        for record in store.list_conversations(cwd=where, profile=profile):
            record = store.reconcile_conversation(record.name, owner_alive)
            if record.status == "CLOSED":
                continue
            if agent is None and record.agent_command != command:
                continue
            return record
        return None

    async def remote(
        self,
        *,
        agent: str | None = None,
        agent_command: str | Sequence[str] | None = None,
        env_keys: Sequence[str] = (),
        cwd: str | None = None,
    ) -> RemoteListing:
        """The agent's own sessions through ``session/list`` (bounded), each marked with the
        conversation Baton knows it as (see :mod:`baton.runtime.conversations.remote`)."""
        store = await self._store()
        where = None if cwd is None else os.path.realpath(cwd)
        return await list_remote_sessions(
            self.runtime,
            store,
            agent=agent,
            agent_command=agent_command,
            env_keys=env_keys,
            cwd=where,
        )

    async def delete_remote(
        self,
        session_id: str,
        *,
        agent: str | None = None,
        agent_command: str | Sequence[str] | None = None,
        env_keys: Sequence[str] = (),
    ) -> None:
        """``session/delete`` of one of the agent's own sessions, asked for explicitly (see
        :func:`baton.runtime.conversations.remote.delete_remote_session`, which states the
        refusals and the cancellation rules)."""
        store = await self._store()
        await delete_remote_session(
            self.runtime,
            store,
            session_id,
            agent=agent,
            agent_command=agent_command,
            env_keys=env_keys,
        )

    # --- creating --------------------------------------------------------------------------

    async def create(self, new: NewConversation) -> Conversation:
        """Record a conversation and create its provider session (session/new), kept attached
        in this process. SESSION_NAME_INVALID or SESSION_NAME_TAKEN for a bad name;
        SessionSetupFailed (no record left) when the provider session could not be created.

        Cancellation: a cancel during session/new leaves no IDLE record; the half-made record
        is closed by reconciliation (its creator is gone) or right here."""
        store = await self._store()
        if (new.agent is None) == (new.agent_command is None):
            raise ConfigurationError("name exactly one of agent (a profile) and agent_command")
        name = (
            check_session_name(new.name)
            if new.name is not None
            else generate_session_name(lambda n: store.find_conversation(n) is not None)
        )
        cwd = os.path.realpath(new.cwd or os.getcwd())
        workspace = await self._session_workspace(store, name, new, cwd)
        if workspace is not None:
            cwd = (
                os.path.join(workspace.path, workspace.subdirectory)
                if workspace.subdirectory
                else workspace.path
            )
        settings: dict[str, Any] = {
            "mode": new.mode,
            "model": new.model,
            "effort": new.effort,
            "config": dict(new.config),
        }
        if new.max_cost is not None:
            settings["maxCost"] = new.max_cost
        store.create_conversation(
            name,
            new.agent or CUSTOM_PROFILE_ID,
            cwd,
            agent_command=new.agent_command,
            env_keys=new.env_keys,
            settings=settings,
        )
        request = RunRequest(
            prompt=SETUP_PROMPT.format(name=name),
            agent=new.agent,
            agent_command=new.agent_command,
            env_keys=tuple(new.env_keys),
            cwd=cwd,
            allow_unattended=new.allow_unattended,
            tools_file=new.tools_file,
            inspect_only=True,
            keep_session=True,
            session=name,
        )
        result, capabilities = await self._setup_run(store, name, request, workspace)
        if result.status != "COMPLETED" or result.provider_session_id is None:
            store.delete_conversation_claimed(name)
            await self._drop_workspace(store, workspace)
            raise SessionSetupFailed(
                f"session {name} was not created: {result.error_code}: {result.message}", result
            )
        return store.release_conversation(
            name,
            "IDLE",
            provider_session_id=result.provider_session_id,
            capabilities=recorded_capabilities(capabilities) if capabilities is not None else None,
        )

    async def _setup_run(
        self,
        store: Store,
        name: str,
        request: RunRequest,
        workspace: WorkspaceRecord | None,
    ) -> tuple[RunResult, AgentCapabilities | None]:
        """Run the setup run that opens the claimed conversation ``name``'s provider session
        (``session/new``, or ``session/fork`` for a fork) and attach it to the record; its
        result and the agent's capabilities.

        Cancellation: the run is abandoned, the claimed record and its workspace dropped."""
        try:
            run = await self.runtime.start(request, on_event=lambda _event: None)
            store.attach_conversation_run(name, run.id, setup=True)
            result = await run.result_or_abandon()
            return result, run.capabilities
        except BaseException:
            with contextlib.suppress(BatonError):
                store.delete_conversation_claimed(name)
            await self._drop_workspace(store, workspace)
            raise

    async def _session_workspace(
        self, store: Store, name: str, new: NewConversation, cwd: str
    ) -> WorkspaceRecord | None:
        """The session's workspace, created (and checked, before any agent starts) as
        ``new`` asks: a worktree ``session-<name>``, a directory, or None."""
        tracker = self.runtime.workspaces
        asked = new.workspace if new.workspace not in (None, "none") else None
        if asked is None:
            await tracker.plan(None, cwd, new.base, new.require_clean)  # --base alone: refused
            return None
        if asked != "worktree":
            directory = os.path.realpath(asked)
            if not os.path.isdir(directory):
                raise ConfigurationError(f"the workspace {directory} is not a directory")
            record = await tracker.record_directory(
                store, directory, f"session-{name}", created_by=None
            )
            store.set_workspace_session(record.name, name)
            return store.get_workspace(record.name)
        plan = await tracker.plan("worktree", cwd, new.base, new.require_clean)
        assert plan is not None
        return await tracker.create(
            store, plan, f"session-{name}", created_by=None, session_name=name
        )

    async def _drop_workspace(self, store: Store, workspace: WorkspaceRecord | None) -> None:
        """A session that was not created leaves no workspace behind (it held nothing yet)."""
        if workspace is None:
            return
        with contextlib.suppress(BatonError, OSError):
            await asyncio.to_thread(
                remove_workspace, store, workspace.name, self.runtime.environ, force=True
            )

    async def fork(self, name: str, new_name: str, *, at_turn: int | None = None) -> Conversation:
        """Fork conversation ``name`` as ``new_name``: a conversation of its own whose
        provider session the agent opened by ``session/fork`` (unstable ACP) of ``name``'s,
        holding its context (only its first ``at_turn`` turns where the agent advertises
        Baton's fork extension), with its own worktree branched from ``name``'s workspace as
        it is now when ``name`` has one. Refusals (SESSION_FORK_NOT_ADVERTISED,
        SESSION_FORK_AT_TURN_UNSUPPORTED...) and cancellation: see
        :mod:`baton.runtime.conversations.fork`."""
        return await fork_conversation(self, name, new_name, at_turn)

    async def session(self, name: str | None = None, **new: Any) -> Session:
        """The handle of conversation ``name``: created first when agent settings are given
        (``agent=`` or ``agent_command=``, and the other :class:`NewConversation` fields),
        else the existing one (SESSION_NOT_FOUND when there is none)."""
        if new:
            record = await self.create(NewConversation(name=name, **new))
        elif name is None:
            raise ConfigurationError("name a session, or give agent= to create one")
        else:
            record = await self.get(name)
        return Session(self, record.name)

    # --- prompting -------------------------------------------------------------------------

    async def start(
        self,
        name: str,
        text: str,
        options: PromptOptions | None = None,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
        on_run: Callable[[str], None] | None = None,
    ) -> SessionRun:
        """Start the next turn of conversation ``name``; its
        :class:`~baton.runtime.conversations.session_run.SessionRun` handle (a
        :class:`~baton.runtime.run.RunHandle`) as soon as the turn's run exists, after the
        turn's wait in the session's queue and its claim. Every surface gets ``run.id`` from
        the handle at once. ``on_event``: every event goes to it as it happens (the handle's
        ``events()`` stream is then not kept), as for :meth:`Runtime.start
        <baton.runtime.runtime.Runtime.start>`. ``on_run``: called with the run's id the
        moment the run exists, before its task has run a step (for a surface that must know
        the run before anything of its turn happens; the handle follows a moment later).

        Refused before anything is sent (raised here): SESSION_NOT_FOUND, SESSION_CLOSED,
        SESSION_RECOVERY_REQUIRED (naming the run to settle), SESSION_NOT_RESUMABLE, or
        SESSION_BUSY (``wait=False`` while a turn runs, a full queue, or the wait bound),
        SESSION_MAX_COST_REACHED (the session's reported cost reached its ``max_cost``), and
        the runtime's own refusals.

        Cancellation: cancelled while waiting for its turn (or before the run exists),
        nothing was claimed or sent: the prompt is withdrawn. Cancelled as the run comes to
        exist, the run is abandoned as :meth:`prompt`'s would be. The turn goes on once this
        returned: :meth:`SessionRun.interrupt` stops it."""
        options = options or PromptOptions()
        store = await self._store()
        store.get_conversation(name)
        await self.refuse_other_host(name)
        created: asyncio.Future[RunningRun] = asyncio.get_running_loop().create_future()
        turn = asyncio.ensure_future(
            self._turn(store, name, text, options, on_event, created, on_run)
        )
        try:
            waited: set[asyncio.Future[Any]] = {created, turn}
            await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            if created.done():
                with contextlib.suppress(asyncio.CancelledError):
                    await created.result().abandon()
            turn.cancel()
            with contextlib.suppress(BaseException):
                await turn
            raise
        if not created.done():
            turn.result()  # refused before its run existed: the stable error
            raise InternalError(f"session {name}'s turn ended without a run")  # pragma: no cover
        return SessionRun(name, created.result(), turn)

    async def prompt(
        self,
        name: str,
        text: str,
        options: PromptOptions | None = None,
        *,
        on_event: Callable[[RunEvent], None] | None = None,
    ) -> RunResult:
        """The next turn of conversation ``name`` to its end (:meth:`start`, then the
        handle's result); events go to ``on_event`` as they happen. Refused as
        :meth:`start` is.

        Cancellation: cancelled while waiting, nothing was claimed or sent. Cancelled during
        the turn, the turn's run is abandoned (RECOVERY_REQUIRED when its prompt was
        outstanding, :meth:`Run.abandon <baton.runtime.run.Run.abandon>`) and the
        conversation is left RECOVERY_REQUIRED with it; cancelled after the outcome was
        recorded, the conversation is IDLE."""
        run = await self.start(name, text, options, on_event=on_event or _drop)
        return await run.result_or_abandon()

    async def _turn(
        self,
        store: Store,
        name: str,
        text: str,
        options: PromptOptions,
        on_event: Callable[[RunEvent], None] | None,
        created: asyncio.Future[RunningRun],
        on_run: Callable[[str], None] | None = None,
    ) -> RunResult:
        """The turn, in a task of its own: its wait in the queue, the claim, the run (handed
        to ``created`` as soon as it exists), the release of the record."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        async with self.queue.turn(name, wait=options.wait, timeout=options.wait_timeout):
            remaining = None
            if options.wait_timeout is not None:
                remaining = max(0.0, options.wait_timeout - (loop.time() - started))
            refuse_over_cost(store, name)
            record, plan = await self._claim(store, name, options.wait, remaining)
            try:
                result, capabilities = await self._run_turn(
                    store, record, plan, text, options, on_event, created, on_run
                )
            except BaseException:
                self._end_turn_after_abort(store, name)
                raise
            status: ConversationStatus = (
                "RECOVERY_REQUIRED" if result.status == "RECOVERY_REQUIRED" else "IDLE"
            )
            store.release_conversation(
                name,
                status,
                provider_session_id=result.provider_session_id,
                capabilities=capabilities,
            )
            return result

    async def events(
        self, name: str, text: str, options: PromptOptions | None = None
    ) -> AsyncIterator[RunEvent]:
        """:meth:`start`, then the handle's events; the last is ``result``. A refusal before
        the turn (busy, closed...) is raised from the iterator.

        Cancellation: closing the iterator early interrupts the turn as closing
        :meth:`SessionRun.events` does (session/cancel and the interrupt deadline) and waits
        for it to settle; a prompt still waiting for its turn is withdrawn (nothing was sent
        for it)."""
        run = await self.start(name, text, options)
        async with run.events() as events:
            async for event in events:
                yield event

    def cancel(self, name: str, reason: str = "user") -> bool:
        """Interrupt the running turn of ``name`` in this process (session/cancel, then the
        interrupt deadline; see :meth:`Run.interrupt <baton.runtime.run.Run.interrupt>`);
        False when no run of it runs here. Not a coroutine: it only asks, and the prompt's
        caller sees the outcome."""
        run = self.running(name)
        return run is not None and run.interrupt_nowait(reason)

    def running(self, name: str) -> RunningRun | None:
        """The run of ``name``'s turn while it runs in this process (from the runtime's run
        table: the conversation's record names its active run)."""
        if not self.runtime.opened:
            return None
        with contextlib.suppress(BatonError):
            run_id = self.runtime.store.get_conversation(name).active_run_id
            if run_id is not None:
                return self.runtime.runs.get(run_id)
        return None

    async def steer(self, name: str, text: str) -> SteerResult:
        """Add ``text`` to the running turn of ``name`` (issue 29), never by cancelling it.

        Where this process runs the session's turn and its agent supports steering (the
        profile's steering extension and the agent's advertisement), ``_session/steering`` is
        sent and the agent's outcome returned (``injected``, ``failed``...; the running turn
        shows it as a ``steer`` event, the frames are journaled). Otherwise the outcome is
        :data:`QUEUED` with the reason: the text was not steered and is the caller's to run as
        the session's next turn (the CLI and the API do). Raises SESSION_NOT_FOUND,
        SESSION_ON_OTHER_HOST, INVALID_ARGUMENT (empty or oversized text). Cancellation-safe
        like any bounded request: a cancelled steer is cancelled at the agent."""
        steering.steer_params("check", text)  # the text's bounds, before anything else
        record = await self.get(name)
        await self.refuse_other_host(name)
        kept = self._attached(record)
        if kept is None or kept.active is None:
            return SteerResult(QUEUED, "no turn of this session is running in this process")
        answer = await self.runtime.steer_kept_session(kept.provider_id, text)
        if answer is None:
            return SteerResult(QUEUED, "the agent does not advertise steering")
        if answer.outcome == steering.PROMPT_REQUIRED:
            return SteerResult(QUEUED, "the turn ended before the text reached it")
        return SteerResult(answer.outcome, answer.reason or "")

    # --- closing -------------------------------------------------------------------------

    async def close(self, name: str) -> Conversation:
        """Close the conversation: session/close when its provider session is attached in
        this process and the agent advertises it, then CLOSED. Never starts a process only to
        close: otherwise the record is closed locally and its note says the provider keeps
        the session. Refused (SESSION_BUSY, SESSION_RECOVERY_REQUIRED) while a turn runs or a
        run is ambiguous; closing a CLOSED conversation returns it unchanged.

        Cancellation: cancelled while session/close is outstanding, the conversation is
        CLOSED locally (its note says so) and the provider session released."""
        store = await self._store()
        record = store.reconcile_conversation(name, owner_alive)
        if record.status == "CLOSED":
            return record
        await self.refuse_other_host(name)
        if record.status == "ACTIVE":
            raise busy_error(record, None)
        refuse_unless_promptable(record, self._recovery_run(store, name))
        attached = self._attached(record)
        if attached is None:
            note = "closed locally; the agent does not advertise session/close, so it keeps it"
            if record.capabilities.get("close"):
                note = (
                    "closed locally; no agent process of this session runs here and Baton never "
                    "starts one only to close, so the provider keeps the session"
                )
            try:
                return store.close_conversation(name, note)
            except StoreConflict:
                raise busy_error(store.get_conversation(name), None) from None
        try:
            store.claim_conversation(name)
        except StoreConflict:
            raise busy_error(store.get_conversation(name), None) from None
        note = "closed locally; session/close was not confirmed"
        try:
            note = await self.runtime.close_kept_session(attached.provider_id)
        finally:
            record = store.release_conversation(name, "CLOSED", note=note)
        return record

    async def remove(self, name: str) -> None:
        """Delete Baton's record of the conversation (its runs stay); SESSION_BUSY while a
        turn runs. The provider session is left as it is."""
        store = await self._store()
        store.reconcile_conversation(name, owner_alive)
        await self.refuse_other_host(name)
        attached = self._attached(store.get_conversation(name))
        if attached is not None:
            self.runtime.release_kept_session(attached.provider_id)
        store.delete_conversation(name)

    # --- controls ------------------------------------------------------------------------

    def controls(self, name: str) -> ControlSet:
        """The safe controls of the conversation's provider session, attached in this
        process (after a prompt or create here); CONFIG_ERROR otherwise."""
        return self.runtime.controls(self._kept_id(name))

    async def apply_control(
        self, name: str, control_id: object, value: object, revision: object
    ) -> ControlSet:
        """Apply ``{controlId, value, revision}`` (see :meth:`Runtime.apply_control`) to the
        conversation's attached provider session. Cancellation: as the runtime's."""
        await self.refuse_other_host(name)
        return await self.runtime.apply_control(self._kept_id(name), control_id, value, revision)

    # --- internals -----------------------------------------------------------------------

    async def _claim(
        self, store: Store, name: str, wait: bool, timeout: float | None
    ) -> tuple[Conversation, AttachPlan]:
        """Claim the turn in the store, polling while another live process holds it."""
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            record = store.reconcile_conversation(name, owner_alive)
            refuse_unless_promptable(record, self._recovery_run(store, name))
            if record.status == "IDLE":
                plan = plan_attach(
                    record,
                    attached_here=self._attached(record) is not None,
                    prompted=store.conversation_prompted(name),
                )
                try:
                    return store.claim_conversation(name), plan
                except StoreConflict:
                    continue  # another process claimed it first: look again
            if not wait:
                raise busy_error(record, None)
            if deadline is not None and loop.time() >= deadline:
                raise busy_error(record, timeout)
            await asyncio.sleep(CLAIM_POLL_SECONDS)

    async def _run_turn(
        self,
        store: Store,
        record: Conversation,
        plan: AttachPlan,
        text: str,
        options: PromptOptions,
        on_event: Callable[[RunEvent], None] | None,
        created: asyncio.Future[RunningRun],
        on_run: Callable[[str], None] | None = None,
    ) -> tuple[RunResult, dict[str, bool] | None]:
        """The turn's run, from its start (handed to ``created``) to its result; with the
        session capabilities its agent advertised (None when its process no longer runs)."""
        settings = record.settings
        command = record.agent_command
        request = RunRequest(
            prompt=text,
            agent=record.profile if command is None else None,
            agent_command=command,
            env_keys=tuple(record.env_keys),
            cwd=record.cwd,
            policy=options.policy,
            allow_unattended=options.allow_unattended,
            mode=settings.get("mode"),
            model=settings.get("model"),
            effort=settings.get("effort"),
            config=dict(settings.get("config") or {}),
            tools_file=options.tools_file,
            budget=options.budget,
            attachments=tuple(options.attachments),
            attach_session=None if plan.method == "session/new" else plan.provider_session_id,
            keep_session=True,
            session=record.name,
        )
        run = await self.runtime.start(request, on_event=on_event)
        if on_run is not None:
            on_run(run.id)  # nothing of the run's task has run yet
        store.attach_conversation_run(record.name, run.id)
        if not created.done():
            created.set_result(run)
        result = await run.result_or_abandon()
        capabilities = run.capabilities
        return result, recorded_capabilities(capabilities) if capabilities is not None else None

    def _end_turn_after_abort(self, store: Store, name: str) -> None:
        """End this process's claim after the turn raised or was cancelled: RECOVERY_REQUIRED
        when its run's outcome is not known, else IDLE."""
        with contextlib.suppress(BatonError):
            record = store.get_conversation(name)
            run = store.find_run(record.active_run_id) if record.active_run_id else None
            unsettled = run is not None and run.status not in FINAL_RUN_STATUSES
            store.release_conversation(name, "RECOVERY_REQUIRED" if unsettled else "IDLE")

    def _recovery_run(self, store: Store, name: str) -> str | None:
        for run in reversed(store.conversation_runs(name)):
            if run.status == "RECOVERY_REQUIRED":
                return run.id
        return None

    def _attached(self, record: Conversation) -> LaneSession | None:
        """The kept session of ``record``'s provider session in this process."""
        provider_id = record.provider_session_id
        return self.runtime.kept_session(provider_id) if provider_id is not None else None

    def _kept_id(self, name: str) -> str:
        record = self.runtime.store.get_conversation(name) if self.runtime.opened else None
        attached = self._attached(record) if record is not None else None
        if attached is None:
            raise ConfigurationError(
                f"session {name} is not attached in this process; prompt it here first"
            )
        return attached.session_id


def _drop(_event: RunEvent) -> None:
    """An event nobody reads."""


def _stored_command(command: str | Sequence[str]) -> Any:
    """An ad-hoc command as the store keeps it (redacted), for comparison with a record."""
    return redact_json(command if isinstance(command, str) else list(command))
