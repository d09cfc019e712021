"""One prompt turn: submit, stream, answer permissions, and settle the outcome.

session/prompt has no RPC completion deadline: a healthy turn may run for hours. An optional
turn budget (idle and absolute bounds) applies instead; when a bound elapses, or the user
interrupts, Baton sends session/cancel, answers pending permission requests cancelled and starts
the interrupt deadline (15 s by default): a ``cancelled`` answer makes the run INTERRUPTED; no
answer in time makes it RECOVERY_REQUIRED and quarantines the lane. Only ``end_turn`` completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, Final

from baton.connection import InboundRequest
from baton.connection.client import AcpClient
from baton.connection.core import cancelled_by_agent
from baton.errors import (
    AgentRequestError,
    AuthenticationRequired,
    BatonError,
    BudgetExpired,
    ProtocolError,
    TransportClosed,
)
from baton.redaction import redact_json
from baton.runtime.lanes.lane import Lane, LaneSession
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.permissions.ask import Asker
from baton.runtime.permissions.elicitations import (
    ElicitationOutcome,
    Elicitor,
    settle_elicitation,
    withdraw_elicitation,
)
from baton.runtime.permissions.engine import PermissionSettings, Resolution, refuse, settle
from baton.runtime.permissions.records import AGENT_CANCELLED, TURN_CANCELLED
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.item_writes import ItemWrites
from baton.runtime.turns.live_updates import LiveUpdates
from baton.runtime.turns.outcome import TurnOutcome
from baton.runtime.turns.phase import (
    LOSABLE_PHASES,
    REFUSING_PHASES,
    STREAMING_PHASES,
    TurnPhase,
    TurnPhases,
)
from baton.runtime.turns.projection import UpdateProjection, permission_view
from baton.runtime.turns.questions import OpenQuestions
from baton.runtime.turns.streaming import (
    STREAM_OUTPUT_FLUSH_SECONDS,
    TEXT_UPDATES,
    Item,
    OutputGroup,
    RunBuffer,
    StreamMemory,
)
from baton.wire.bounded import bounded
from baton.wire.budget import BudgetClock
from baton.wire.codec import PromptAck, SessionActivity, parse_state_update
from baton.wire.extensions import claude as claude_extension
from baton.wire.jsonrpc import AUTH_REQUIRED
from baton.wire.stop import PromptResult, StopReason

#: How long Baton waits for a ``cancelled`` answer after session/cancel (seconds).
INTERRUPT_COMPLETION_TIMEOUT_SECONDS: Final = 15.0

#: Agent-provided diagnostic text kept on a failed run.
MAX_PROVIDER_DIAGNOSTIC_CHARS: Final = 512

#: The run's text kept in memory for the result (the full text is in the store's items).
MAX_RESULT_TEXT_CHARS: Final = 64 * 1024

#: The run error code of a turn whose caller cancelled it while the prompt was outstanding.
CALLER_CANCELLED: Final = "CALLER_CANCELLED"

FAILED_STOP_REASONS: Final = frozenset({"refusal", "max_tokens", "max_turn_requests"})

#: The v2 stop reason of a turn that ended in a failure (its JSON-RPC error alongside).
ERROR_STOP_REASON: Final = "error"

#: How a prompt ended on the wire: v1's answer, or v2's ``idle`` state.
PromptEnd = PromptResult | SessionActivity

#: Characters of the agent's unknown stop reason quoted in the run's message.
MAX_STOP_REASON_QUOTE_CHARS: Final = 80

Emit = Callable[[RunEvent], None]


class Turn:
    """The active run of one session (implements the lane's TurnHandler)."""

    def __init__(
        self,
        *,
        run_id: str,
        lane: Lane,
        session: LaneSession,
        client: AcpClient,
        recorder: Recorder,
        permissions: PermissionSettings,
        asker: Asker,
        clock: BudgetClock | None,
        memory: StreamMemory,
        emit: Emit,
        interrupt_timeout: float = INTERRUPT_COMPLETION_TIMEOUT_SECONDS,
        elicitor: Elicitor | None = None,
    ) -> None:
        loop = asyncio.get_running_loop()
        self.run_id = run_id
        self.lane = lane
        self.session = session
        self.client = client
        self.recorder = recorder
        self.permissions = permissions
        #: The questions this turn has open with a person (AWAITING_APPROVAL while any is).
        self.questions = OpenQuestions(run_id, recorder.pending_questions)
        self.asker = self.questions.asker(asker)
        #: Who answers this run's elicitations (None: nobody, each is declined).
        self.elicitor = self.questions.elicitor(elicitor)
        self.clock = clock
        self.emit = emit
        self.interrupt_timeout = interrupt_timeout
        self.generation = lane.generation
        self._loop = loop
        self._text_parts: list[str] = []
        self._text_len = 0
        self.buffer = RunBuffer(
            run_id,
            items=self._materialized,
            output=self._published,
            now=loop.time,
            memory=memory,
            secrets=lane.secrets,
        )
        #: Usage, notices and compactions (events as they arrive, items at the end).
        self.live = LiveUpdates(
            run_id, self.emit, lane.redact, lambda: self.buffer.flush_output(release=True)
        )
        #: What the other updates show: tool calls, plan, modes, config... (events and items).
        self.projection = UpdateProjection(
            run_id=run_id,
            tracker=session.tracker,
            client=client,
            provider_id=session.provider_id,
            emit=self.emit,
            redact=lane.redact,
            flush=lambda: self.buffer.flush_output(release=True),
            live=self.live,
            reads_parents=claude_extension.EXTENSION in lane.spec.extensions,
        )
        self.permission_log: list[dict[str, Any]] = []
        #: Open permission and elicitation questions: an interrupt (after session/cancel), the
        #: turn budget or a lost lane cancels them, and each is answered cancelled.
        self._pending: set[asyncio.Task[Any]] = set()
        #: The turn's state machine (see baton.runtime.turns.phase).
        self.phases = TurnPhases()
        # Why the lane generation was lost (set when the turn enters LOST).
        self._lost: BatonError | None = None
        self._lost_event = asyncio.Event()
        self._interrupt_event = asyncio.Event()
        self._interrupt_reason: str | None = None
        # The prompt's request id once it is written.
        self._request_id: int | None = None
        #: The outcome of a turn whose caller cancelled :meth:`execute`, else None.
        self.abandoned: TurnOutcome | None = None
        #: The run's items on their way to the store (this turn is their one writer).
        self.writes = ItemWrites(
            run_id,
            recorder,
            on_failure=lambda: self._loop.create_task(
                lane.quarantine("materialized output could not be recorded", self.generation)
            ),
        )
        #: v2: the prompt's acknowledgement, and the ``idle`` state that ends the turn.
        self._ack: PromptAck | None = None
        self._prompt_sent = False
        self._idle: SessionActivity | None = None
        self._idle_event = asyncio.Event()

    # --- streaming -------------------------------------------------------------------------

    def _published(self, groups: list[OutputGroup]) -> None:
        for group in groups:
            if group.kind == "text" and self._text_len < MAX_RESULT_TEXT_CHARS:
                self._text_parts.append(group.text)
                self._text_len += len(group.text)
            self.emit(
                RunEvent(
                    group.kind, self.run_id, {"text": group.text, "coalescedEvents": group.events}
                )
            )

    def _materialized(self, items: list[Item]) -> None:
        self.writes.hold(items)
        for item in items:
            self.emit(
                RunEvent(
                    "item",
                    self.run_id,
                    {"kind": item.kind, "coalescedEvents": item.coalesced_events},
                )
            )
        if self.phases.current in STREAMING_PHASES:
            # A memory bound evicted a part mid-turn: write it now (at the end, FINISHING
            # writes every item in one batch).
            self.writes.write()

    @property
    def phase(self) -> TurnPhase:
        """Where the turn is in its life."""
        return self.phases.current

    def on_updates(self, updates: list[dict[str, Any]]) -> None:
        """Consecutive session/updates of this session while the turn is active (a plain call:
        it never waits, so a streaming turn costs no coroutine per delta). Consecutive text
        deltas of one part go to the buffer together."""
        if self.lane.generation != self.generation or self.phases.current not in STREAMING_PHASES:
            return
        add_texts = self.buffer.add_texts
        texts: list[str] = []
        text_kind = ""
        text_message: str | None = None
        for update in updates:
            kind = update.get("sessionUpdate")
            if kind in TEXT_UPDATES:
                content = update.get("content")
                if type(content) is dict and content.get("type") == "text":
                    text = content.get("text")
                    if type(text) is str:
                        message_id = update.get("messageId")
                        if type(message_id) is not str:
                            message_id = None
                        if kind != text_kind or message_id != text_message:
                            if texts:
                                add_texts(text_kind, texts, text_message)
                                texts = []
                            text_kind = kind
                            text_message = message_id
                        texts.append(text)
                continue
            if texts:
                add_texts(text_kind, texts, text_message)
                texts = []
            self._on_other_update(kind, update)
        if texts:
            add_texts(text_kind, texts, text_message)

    def _on_other_update(self, kind: object, update: dict[str, Any]) -> None:
        """A session/update that is not a text delta: v2's state here, the rest projected."""
        if kind == "state_update":
            self._on_state(update)
            return
        self.projection.project(kind, update)

    def _on_state(self, update: dict[str, Any]) -> None:
        """v2: a session state. ``running`` and ``requires_action`` are shown; the first
        ``idle`` after the prompt was sent ends the turn (later updates are the session's)."""
        activity = parse_state_update(update)
        if activity is None:
            return
        self.emit(RunEvent("state", self.run_id, {"state": activity.state.value}))
        if activity.idle and self._prompt_sent and self._idle is None:
            self._idle = activity
            self._idle_event.set()
            self.buffer.flush_output()
            # Only the idle that ends this turn counts: a repeated snapshot is not more usage.
            self.live.record_turn_usage(activity.usage)
            self._answered()

    # --- permissions -----------------------------------------------------------------------

    async def on_permission(self, request: InboundRequest) -> Resolution:
        """Decide one permission request, record it durably, then hand the answer back.

        When the agent cancels the request itself (``$/cancel_request``) while it is pending,
        the question is withdrawn wherever it is shown (the asker's wait is cancelled), the
        request is recorded as ``agent_cancelled``, and the cancellation propagates (the agent
        is answered -32800)."""
        if self.phases.current in REFUSING_PHASES:
            resolution = refuse(
                request.id,
                request.params,
                reason_code=TURN_CANCELLED,
                reason="the turn is being cancelled",
                policy=self.permissions.policy,
            )
        else:
            task = asyncio.ensure_future(
                settle(
                    request.id,
                    request.params,
                    tracker=self.session.tracker,
                    settings=self.permissions,
                    asker=self.asker,
                    clock=self.clock,
                    run_id=self.run_id,
                )
            )
            self._pending.add(task)
            try:
                resolution = await task
            except asyncio.CancelledError as exc:
                if cancelled_by_agent(exc):
                    await self._settled_permission(
                        request,
                        refuse(
                            request.id,
                            request.params,
                            reason_code=AGENT_CANCELLED,
                            reason="the agent cancelled its request while it was pending",
                            policy=self.permissions.policy,
                        ),
                    )
                    raise
                if not task.cancelled():
                    raise
                resolution = refuse(
                    request.id,
                    request.params,
                    reason_code=TURN_CANCELLED,
                    reason="the turn was cancelled while the request was pending",
                    policy=self.permissions.policy,
                )
            finally:
                self._pending.discard(task)
        return await self._settled_permission(request, resolution)

    async def _settled_permission(
        self, request: InboundRequest, resolution: Resolution
    ) -> Resolution:
        """Record a permission request's resolution durably and show it (the event)."""
        record = resolution.record.to_json(self.lane.secrets)
        view = permission_view(record, self.lane.redact)
        # Written (its request's journal record flushed first) before the answer is sent.
        await self.recorder.interaction(
            self.session.session_id, self.run_id, resolution, request.ref, self.lane.secrets
        )
        self.permission_log.append(view)
        self.buffer.flush_output(release=True)
        self.emit(RunEvent("permission", self.run_id, view))
        return resolution

    async def on_elicitation(self, request: InboundRequest) -> dict[str, Any]:
        """Answer one ``elicitation/create`` of this run's session (the run's elicitor asks,
        see :func:`~baton.runtime.permissions.elicitations.settle_elicitation`); the request,
        the answer and why are kept as an ``elicitation`` event and item, redacted. A question
        still open when the turn is interrupted (cancel, the turn budget, a lost lane) is
        withdrawn: answered ``cancel`` (``turn_cancelled``)."""
        task = asyncio.ensure_future(
            settle_elicitation(
                request.params,
                self.elicitor,
                cancelling=self.phases.current in REFUSING_PHASES,
                advertised=self.lane.advertised,
                run_id=self.run_id,
            )
        )
        self._pending.add(task)
        outcome: ElicitationOutcome
        try:
            outcome = await task
        except asyncio.CancelledError as exc:
            if cancelled_by_agent(exc):
                # The agent withdrew its question ($/cancel_request): recorded, then -32800.
                self.live.elicitation(
                    redact_json(
                        withdraw_elicitation(request.params, by_agent=True).record,
                        self.lane.secrets,
                    )
                )
                raise
            current = asyncio.current_task()
            if not task.cancelled() or (current is not None and current.cancelling()):
                raise  # this handler itself was cancelled, not the question
            outcome = withdraw_elicitation(request.params)
        finally:
            self._pending.discard(task)
        self.live.elicitation(redact_json(outcome.record, self.lane.secrets))
        return outcome.answer

    def on_steered(self, view: dict[str, Any]) -> None:
        """A steering request reached the agent during this turn: what streamed before it is
        published first, then the ``steer`` event (``{text, outcome, reason?}``)."""
        self.buffer.flush_output()
        self.emit(RunEvent("steer", self.run_id, bounded(view)))

    # --- loss and interruption -------------------------------------------------------------

    async def _tick(self) -> None:
        """Publish pending output at the time boundary even when no further delta arrives
        (an agent that streams a line and then works silently)."""
        while True:
            await asyncio.sleep(STREAM_OUTPUT_FLUSH_SECONDS)
            self.buffer.flush_due()

    def _answered(self) -> None:
        if self.session.active is self:
            self.session.active = None

    def on_lost(self, reason: BatonError) -> None:
        """The lane lost (or quarantined) this turn's generation. Once the turn's outcome is
        settled (FINISHING, FINISHED) a loss changes nothing about it."""
        self._enter_lost(reason)
        for task in list(self._pending):
            task.cancel()

    def _is_lost(self) -> bool:
        """Whether the lane lost this turn's generation (read after an await: it can change)."""
        return self.phases.current is TurnPhase.LOST

    def _enter_lost(self, reason: BatonError | None) -> None:
        if self.phases.current in LOSABLE_PHASES:
            self.phases.enter(TurnPhase.LOST)
            self._lost = reason
            self._lost_event.set()

    def interrupt(self, reason: str = "user") -> None:
        """Ask the turn to stop (Ctrl-C, a caller's cancel)."""
        if self._interrupt_reason is None:
            self._interrupt_reason = reason
        self._interrupt_event.set()

    # --- the turn --------------------------------------------------------------------------

    async def execute(
        self, prompt: Sequence[dict[str, Any]], *, profile_mapped: bool = False
    ) -> TurnOutcome:
        """Submit ``prompt`` and follow the turn to its end. ``profile_mapped``: the blocks
        came from a profile-owned attachment mapping (see AcpClient.send_prompt).

        Cancellation: cancelling this coroutine abandons the turn without sending
        session/cancel (``interrupt`` is the clean stop): the prompt's wait is given up (a late
        answer is dropped and counted), what streamed so far is written, the turn ends
        FINISHED, and :attr:`abandoned` holds its outcome: RECOVERY_REQUIRED
        (``CALLER_CANCELLED``) once the prompt may have reached the agent. Then the
        cancellation propagates."""
        self.session.active = self
        outcome: TurnOutcome
        ticker = asyncio.ensure_future(self._tick())
        try:
            if self._is_lost():
                outcome = self._lost_before_submission()
            else:
                self.phases.enter(TurnPhase.SUBMITTING)
                outcome = await self._submit_and_wait(prompt, profile_mapped)
        except asyncio.CancelledError:
            self._abandon()
            raise
        finally:
            ticker.cancel()
            self.session.active = None
        self.phases.enter(TurnPhase.FINISHING)
        self._collect_items()
        await self.writes.write_waiting_out_outage()
        self.writes.mark_unrecorded(outcome)
        outcome.tool_calls = len(self.projection.tool_calls)
        outcome.permissions = self.permission_log
        outcome.text = "".join(self._text_parts)
        outcome.usage = self.live.usage_view()
        gate = self.lane.spec.terminal_failure_text
        if outcome.status == "COMPLETED" and gate is not None and outcome.text.strip() == gate:
            # The profile's exact usage-gate message followed by end_turn (Cursor): a failed,
            # retryable turn; the provider text is kept.
            outcome.status = "FAILED"
            outcome.error_code = "PROVIDER_USAGE_GATE"
            outcome.message = gate
            outcome.retryable = True
        self.phases.enter(TurnPhase.FINISHED)
        return outcome

    def _abandon(self) -> None:
        """The caller cancelled :meth:`execute` (see its docstring)."""
        if self.phases.current in (TurnPhase.FINISHING, TurnPhase.FINISHED):
            return
        if self._request_id is not None:
            self.client.connection.abandon(self._request_id)
        outcome = TurnOutcome(
            "RECOVERY_REQUIRED",
            error_code=CALLER_CANCELLED,
            recovery_reason=(
                "the caller cancelled the run with the prompt outstanding; ACP has no "
                "prompt-status read method, so Baton will not replay it"
            ),
        )
        self.phases.enter(TurnPhase.FINISHING)
        self._collect_items()
        self.writes.write_now()
        self.writes.mark_unrecorded(outcome)
        outcome.tool_calls = len(self.projection.tool_calls)
        outcome.permissions = self.permission_log
        outcome.text = "".join(self._text_parts)
        self.phases.enter(TurnPhase.FINISHED)
        self.abandoned = outcome

    def _lost_before_submission(self) -> TurnOutcome:
        """The lane was lost before the prompt was sent: nothing reached the agent."""
        code = self._lost.code if self._lost is not None else "RUNTIME_LOST"
        return TurnOutcome(
            "FAILED",
            error_code=code,
            message=f"the agent was lost before the prompt was sent ({code})",
        )

    async def _submit_and_wait(
        self, prompt: Sequence[dict[str, Any]], profile_mapped: bool
    ) -> TurnOutcome:
        connection = self.client.connection
        self._prompt_sent = True
        try:
            request_id = await self.client.send_prompt(
                self.session.provider_id, prompt, profile_mapped=profile_mapped
            )
            self._request_id = request_id
        except TransportClosed as exc:
            # The prompt was journaled and may have reached the agent: ambiguous.
            return await self._lost_outcome(exc)
        # Updates read after the prompt's answer belong to the session, not to this run (v2:
        # after its idle state; the answer is only an acknowledgement).
        if not self.client.codec.normalizes:
            connection.on_answer(request_id, self._answered)
        try:
            prompt_ref = connection.request_ref(request_id)
            await self.recorder.prompt_submitted(self.run_id, prompt_ref)
        except (BatonError, sqlite3.Error, OSError) as exc:
            # Baton cannot durably record that the prompt was submitted: ambiguous.
            await self.lane.quarantine(
                "the prompt's submission could not be recorded", self.generation
            )
            return TurnOutcome(
                "RECOVERY_REQUIRED",
                error_code="PROMPT_SUBMISSION_UNRECORDED",
                recovery_reason=f"the submitted prompt could not be recorded: {type(exc).__name__}",
            )
        if self._is_lost():
            return await self._lost_outcome(self._lost)
        self.phases.enter(TurnPhase.STREAMING)
        waiter: asyncio.Future[PromptEnd] = asyncio.ensure_future(
            self._await_end(request_id, budget=self.clock)
        )
        lost: asyncio.Future[Any] = asyncio.ensure_future(self._lost_event.wait())
        interrupted: asyncio.Future[Any] = asyncio.ensure_future(self._interrupt_event.wait())
        try:
            await asyncio.wait({waiter, lost, interrupted}, return_when=asyncio.FIRST_COMPLETED)
            if waiter.done():
                try:
                    return self._settled(waiter.result())
                except BudgetExpired as exc:
                    return await self._interrupt(request_id, bound=exc)
                except (TransportClosed, ProtocolError) as exc:
                    return await self._lost_outcome(exc)
                except AgentRequestError as exc:
                    return self._agent_error(exc)
            if self._is_lost():
                return await self._lost_outcome(self._lost)
            # The user's interrupt: the prompt's own wait is handed over, so an answer that
            # arrives while session/cancel is being sent is read once, by one waiter.
            return await self._interrupt(request_id, bound=None, first=waiter)
        finally:
            for task in (waiter, lost, interrupted):
                if not task.done():
                    task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(waiter, lost, interrupted, return_exceptions=True)

    async def _await_end(
        self,
        request_id: int,
        *,
        budget: BudgetClock | None = None,
        timeout: float | None = None,
        after_cancel: bool = False,
    ) -> PromptEnd:
        """Wait for the prompt's end within ``budget``/``timeout`` (:class:`BudgetExpired`
        otherwise, the request left pending): v1's answer, or v2's acknowledgement followed by
        the ``idle`` state (which may arrive first). After a cancel, v2 waits for ``idle`` only.
        Cancellation-safe: nothing is consumed that a later wait would need."""
        codec = self.client.codec
        if not codec.normalizes or (self._ack is None and not after_cancel):
            result = await self.client.connection.await_response(
                request_id, budget=budget, timeout=timeout
            )
            answer = codec.prompt_answer(result)
            if isinstance(answer, PromptResult):
                self.live.on_prompt_answer(result)
                return answer
            self._ack = answer
        return await self._await_idle(budget=budget, timeout=timeout)

    async def _await_idle(
        self, *, budget: BudgetClock | None, timeout: float | None
    ) -> SessionActivity:
        """v2: wait for the turn's ``idle`` state; the budget's idle bound restarts on every
        frame the connection reads, as while waiting for an answer."""
        connection = self.client.connection
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + max(timeout, 0.0)
        while self._idle is None:
            now = loop.time()
            wait: float | None = None
            if deadline is not None:
                wait = deadline - now
                if wait <= 0:
                    limit = timeout or 0.0
                    raise BudgetExpired("request", limit, limit, "session/prompt")
            if budget is not None:
                budget.touch(connection.last_frame_at)
                expired = budget.expired(now, "session/prompt")
                if expired is not None:
                    raise expired
                left = budget.remaining(now)
                if left is not None and (wait is None or left[0] < wait):
                    wait = left[0]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._idle_event.wait(), wait)
        return self._idle

    def _settled(self, end: PromptEnd) -> TurnOutcome:
        if isinstance(end, SessionActivity):
            return self._settled_idle(end)
        return self._settled_reason(end.stop_reason)

    def _settled_idle(self, activity: SessionActivity) -> TurnOutcome:
        stop = activity.stop_reason
        if stop is None:
            return TurnOutcome(
                "FAILED",
                error_code="STOP_UNREPORTED",
                message="the agent went idle without reporting a stop reason",
            )
        if stop.value == ERROR_STOP_REASON:
            # v2's way of failing a turn it already acknowledged: the same outcome as v1's
            # JSON-RPC error answer (AGENT_ERROR), with the stop reason only v2 reports.
            error = activity.error
            detail = f" {error.code}: {error.message}" if error is not None else ": (no details)"
            # -32000 is a sign-in wanted, as in a v1 error answer (claude-agent-acp signed out).
            signed_out = error is not None and error.code == AUTH_REQUIRED
            return TurnOutcome(
                "FAILED",
                stop_reason=stop.value,
                error_code="AUTHENTICATION_REQUIRED" if signed_out else "AGENT_ERROR",
                message=self.lane.redact(f"agent error{detail}"[:MAX_PROVIDER_DIAGNOSTIC_CHARS]),
            )
        return self._settled_reason(stop)

    def _settled_reason(self, stop_reason: StopReason) -> TurnOutcome:
        reason = stop_reason.value
        if stop_reason.is_end_turn:
            return TurnOutcome("COMPLETED", stop_reason=reason)
        if stop_reason.is_cancelled:
            return TurnOutcome("INTERRUPTED", stop_reason=reason, interrupted_by="agent")
        if reason in FAILED_STOP_REASONS:
            return TurnOutcome(
                "FAILED",
                stop_reason=reason,
                error_code=f"STOP_{reason.upper()}",
                message=f"the agent stopped the turn: {reason}",
            )
        return TurnOutcome(
            "FAILED",
            stop_reason=reason,
            error_code="STOP_UNKNOWN",
            message=(
                "the agent stopped with an unknown reason: "
                f"{self.lane.redact(reason)[:MAX_STOP_REASON_QUOTE_CHARS]}"
            ),
        )

    def _agent_error(self, exc: AgentRequestError) -> TurnOutcome:
        code = (
            "AUTHENTICATION_REQUIRED" if isinstance(exc, AuthenticationRequired) else "AGENT_ERROR"
        )
        return TurnOutcome(
            "FAILED",
            error_code=code,
            message=self.lane.redact(
                f"agent error {exc.rpc_code}: {exc.agent_message}"[:MAX_PROVIDER_DIAGNOSTIC_CHARS]
            ),
        )

    async def _lost_outcome(self, reason: BatonError | None) -> TurnOutcome:
        self._enter_lost(reason)
        code = reason.code if reason is not None else "RUNTIME_LOST"
        cause = await self.lane.loss_cause(self._lost or reason)
        await self.lane.quarantine(cause, self.generation)
        return TurnOutcome(
            "RECOVERY_REQUIRED",
            error_code="AGENT_MUTATION_AMBIGUOUS",
            recovery_reason=(
                f"{cause.describe()}, with the prompt outstanding ({code}); ACP has no "
                "prompt-status read method, so Baton will not replay it"
            ),
        )

    async def _interrupt(
        self,
        request_id: int,
        bound: BudgetExpired | None,
        first: asyncio.Future[Any] | None = None,
    ) -> TurnOutcome:
        """Send session/cancel and wait for the prompt's answer within the interrupt deadline.

        ``first``: the prompt's wait that was running when the user interrupted. It is stopped
        before a new wait starts (the connection hands an answer to one waiter only); when the
        answer reached it first, that answer is the turn's outcome and nothing is cancelled.
        """
        self.phases.enter(TurnPhase.CANCELLING)
        by = bound.bound if bound is not None else (self._interrupt_reason or "user")
        await self.recorder.run_status(self.run_id, "INTERRUPTING")
        connection = self.client.connection
        answered = await _stop_waiting(first)
        if answered is None:
            try:
                await self.client.cancel(self.session.provider_id)
            except BatonError:
                return await self._lost_outcome(connection.close_reason)
            for task in list(self._pending):
                task.cancel()
        waiter: asyncio.Future[Any] = (
            answered
            if answered is not None
            else asyncio.ensure_future(
                self._await_end(request_id, timeout=self.interrupt_timeout, after_cancel=True)
            )
        )
        lost: asyncio.Future[Any] = asyncio.ensure_future(self._lost_event.wait())
        try:
            await asyncio.wait({waiter, lost}, return_when=asyncio.FIRST_COMPLETED)
            if waiter.done():
                try:
                    outcome = self._settled(waiter.result())
                except BudgetExpired:
                    connection.abandon(request_id)
                    await self.lane.quarantine("the interrupt deadline expired", self.generation)
                    return TurnOutcome(
                        "RECOVERY_REQUIRED",
                        error_code="INTERRUPT_DEADLINE_EXPIRED",
                        bound=bound.bound if bound is not None else None,
                        interrupted_by=by,
                        recovery_reason=(
                            # Named as the protocol spoken says it: v1's prompt answer, v2's
                            # idle state.
                            "session/cancel got no "
                            f"{'idle state' if self.client.codec.normalizes else 'prompt answer'}"
                            f" within {self.interrupt_timeout:g}s; the turn's outcome is unknown"
                        ),
                    )
                except (TransportClosed, ProtocolError) as exc:
                    return await self._lost_outcome(exc)
                except AgentRequestError as exc:
                    return self._agent_error(exc)
                if self.client.codec.normalizes:
                    connection.abandon(request_id)  # an acknowledgement still owed is dropped
                if outcome.status == "INTERRUPTED" and answered is None:
                    outcome.interrupted_by = by
                    outcome.bound = bound.bound if bound is not None else None
                    if bound is not None:
                        outcome.error_code = "BUDGET_EXPIRED"
                        outcome.message = bound.message
                    else:
                        outcome.message = (
                            f"interrupted ({by}): the agent answered session/cancel with cancelled"
                        )
                return outcome
            return await self._lost_outcome(self._lost)
        finally:
            for future in (waiter, lost):
                if not future.done():
                    future.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(waiter, lost, return_exceptions=True)

    # --- items -----------------------------------------------------------------------------

    def _collect_items(self) -> None:
        """The turn's last items: the buffer's rest, tool calls, plan, usage and notices."""
        self.buffer.close()
        views = self.projection.item_views()
        self.writes.hold([Item(kind, content) for kind, content in views])
        self.writes.hold(self.live.items())


async def _stop_waiting(first: asyncio.Future[Any] | None) -> asyncio.Future[Any] | None:
    """Stop the prompt's running wait ``first``; return it when it has the answer (a result
    or the agent's error) instead, so the answer is read where it landed.

    Cancelling a wait leaves the request pending on the connection, so a new wait still gets
    an answer that comes later."""
    if first is None:
        return None
    if not first.done():
        first.cancel()
        await asyncio.wait({first})
    if first.cancelled() or isinstance(first.exception(), BudgetExpired):
        return None
    return first
