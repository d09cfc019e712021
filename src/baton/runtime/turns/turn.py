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
from baton.errors import (
    AgentRequestError,
    AuthenticationRequired,
    BatonError,
    BudgetExpired,
    ProtocolError,
    StoreUnavailable,
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
from baton.runtime.permissions.records import TURN_CANCELLED
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.live_updates import LiveUpdates
from baton.runtime.turns.outcome import TurnOutcome
from baton.runtime.turns.phase import (
    LOSABLE_PHASES,
    REFUSING_PHASES,
    STREAMING_PHASES,
    TurnPhase,
    TurnPhases,
)
from baton.runtime.turns.questions import OpenQuestions
from baton.runtime.turns.streaming import (
    STREAM_OUTPUT_FLUSH_SECONDS,
    TEXT_UPDATES,
    Item,
    OutputGroup,
    RunBuffer,
    StreamMemory,
)
from baton.store import NewItem
from baton.store.outage import until_stored
from baton.wire.bounded import bounded, bounded_text
from baton.wire.budget import BudgetClock
from baton.wire.codec import PromptAck, SessionActivity, parse_state_update
from baton.wire.extensions import claude as claude_extension
from baton.wire.jsonrpc import AUTH_REQUIRED
from baton.wire.session_state import parse_config_options
from baton.wire.stop import PromptResult, StopReason
from baton.wire.toolcalls import tool_command, tool_diff_stats, tool_name, tool_paths

#: How long Baton waits for a ``cancelled`` answer after session/cancel (seconds).
INTERRUPT_COMPLETION_TIMEOUT_SECONDS: Final = 15.0

#: Attempts at writing materialized output after an ordinary failure (an ambiguous one is
#: never retried).
MAX_STREAM_OUTPUT_APPEND_ATTEMPTS: Final = 3
#: Most materialized items a turn holds while a shared store is unreachable (the append is
#: repeated once it answers, skipping what a cut-off try stored): bounds the memory an
#: outage costs a streaming turn; past it the output counts as not recorded (as today).
MAX_ITEMS_HELD_FOR_STORE: Final = 1_000

#: Agent-provided diagnostic text kept on a failed run.
MAX_PROVIDER_DIAGNOSTIC_CHARS: Final = 512

#: The run's text kept in memory for the result (the full text is in the store's items).
MAX_RESULT_TEXT_CHARS: Final = 64 * 1024

#: Diff items of one tool call whose text a tool-call view carries (``diff.changes``), so an
#: event or item stays small however many files one call edits.
MAX_VIEW_DIFF_FILES: Final = 8
#: Characters of one side (old or new) of a diff a view carries. A longer side is left out
#: whole (``truncated``), never cut: a cut could leave the head of a credential too short for
#: any redaction rule. The full content stays in the protected journal.
MAX_VIEW_DIFF_TEXT_CHARS: Final = 64 * 1024

#: The run error code of a turn whose caller cancelled it while the prompt was outstanding.
CALLER_CANCELLED: Final = "CALLER_CANCELLED"

FAILED_STOP_REASONS: Final = frozenset({"refusal", "max_tokens", "max_turn_requests"})

#: The v2 stop reason of a turn that ended in a failure (its JSON-RPC error alongside).
ERROR_STOP_REASON: Final = "error"

#: How a prompt ended on the wire: v1's answer, or v2's ``idle`` state.
PromptEnd = PromptResult | SessionActivity

#: Characters of the agent's unknown stop reason quoted in the run's message.
MAX_STOP_REASON_QUOTE_CHARS: Final = 80

# What the compact views of agent data keep (every view is also within the projection bounds
# of baton.wire.bounded): enough to show and to search, never the whole payload (that is in
# the protected journal).
#: Characters of a tool call's title.
MAX_TOOL_TITLE_CHARS: Final = 512
#: Characters of a tool call's command line.
MAX_TOOL_COMMAND_CHARS: Final = 1024
#: Paths of one tool call.
MAX_TOOL_PATHS: Final = 16
#: Characters of a diff item's path.
MAX_TOOL_PATH_CHARS: Final = 1024
#: Entries of a plan.
MAX_PLAN_ENTRIES: Final = 64
#: Command names of an available_commands_update.
MAX_COMMAND_NAMES: Final = 64
#: Characters of a mode id, a session title or a command name.
MAX_NAME_CHARS: Final = 1024

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
        self._items: list[Item] = []
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
        self.tool_calls: dict[str, dict[str, Any]] = {}
        #: toolCallId -> its parent tool call (claude profile only: the subagent link).
        self.tool_parents: dict[str, str] = {}
        self._reads_parents = claude_extension.EXTENSION in lane.spec.extensions
        self.plan: list[Any] | None = None
        #: Usage, notices and compactions (events as they arrive, items at the end).
        self.live = LiveUpdates(
            run_id, self.emit, lane.redact, lambda: self.buffer.flush_output(release=True)
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
        self._append_failed: str | None = None
        #: Items of this run the store holds (this turn is their one writer): what makes an
        #: append cut off by a shared store's outage safe to repeat.
        self._items_stored = 0
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
        self._items.extend(items)
        for item in items:
            self.emit(
                RunEvent(
                    "item",
                    self.run_id,
                    {"kind": item.kind, "coalescedEvents": item.coalesced_events},
                )
            )
        if self._items and self.phases.current in STREAMING_PHASES:
            # A memory bound evicted a part mid-turn: write it now (at the end, FINISHING
            # writes every item in one batch).
            self._write_items()

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
        """A session/update that is not a text delta."""
        if kind == "state_update":
            self._on_state(update)
            return
        if kind in ("tool_call", "tool_call_update"):
            tool_call_id = update.get("toolCallId")
            if not isinstance(tool_call_id, str):
                return
            tool_state = self.session.tracker.get(tool_call_id) or dict(update)
            self.tool_calls[tool_call_id] = tool_state
            if self._reads_parents and tool_call_id not in self.tool_parents:
                parent = claude_extension.parent_tool_use_id(update)
                if parent is not None and parent != tool_call_id:
                    self.tool_parents[tool_call_id] = parent
            self.buffer.flush_output(release=True)
            self.emit(RunEvent("tool_call", self.run_id, self._tool_view(tool_state)))
            return
        if kind == "plan":
            entries = update.get("entries")
            self.plan = entries if isinstance(entries, list) else []
            self.buffer.flush_output(release=True)
            self.emit(RunEvent("plan", self.run_id, {"entries": plan_view(self.plan)}))
            return
        if self.live.handle(kind, update):
            return
        if kind == "current_mode_update":
            mode_id = update.get("currentModeId")
            if isinstance(mode_id, str):
                with contextlib.suppress(BatonError):
                    state = self.client.session_state(self.session.provider_id)
                    if state.modes is not None and mode_id in state.modes.ids():
                        self.client.update_session_state(
                            self.session.provider_id, state.with_current_mode(mode_id)
                        )
                self.emit(
                    RunEvent("mode", self.run_id, {"modeId": bounded_text(mode_id, MAX_NAME_CHARS)})
                )
            return
        if kind == "config_option_update":
            options, _ignored = parse_config_options(update.get("configOptions"))
            if options:
                with contextlib.suppress(BatonError):
                    state = self.client.session_state(self.session.provider_id)
                    self.client.update_session_state(
                        self.session.provider_id, state.with_config_options(options)
                    )
            self.emit(
                RunEvent(
                    "config",
                    self.run_id,
                    {
                        "configOptions": bounded(
                            [{"id": o.id, "currentValue": o.current_value} for o in options]
                        )
                    },
                )
            )
            return
        if kind == "session_info_update":
            title = update.get("title")
            if isinstance(title, str):
                # Redacted whole, then cut (as every view: see tool_call_view).
                shown = bounded_text(self.lane.redact(title), MAX_NAME_CHARS)
                self.emit(RunEvent("session_info", self.run_id, {"title": shown}))
            return
        if kind == "available_commands_update":
            commands = update.get("availableCommands")
            names = _command_names(commands)
            self.emit(RunEvent("commands", self.run_id, {"commands": names}))
            return
        # Everything else is journal-only telemetry.

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
            self.live.on_turn_usage(activity.usage)
            self._answered()

    # --- permissions -----------------------------------------------------------------------

    async def on_permission(self, request: InboundRequest) -> Resolution:
        """Decide one permission request, record it durably, then hand the answer back."""
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
                )
            )
            self._pending.add(task)
            try:
                resolution = await task
            except asyncio.CancelledError:
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
        record = resolution.record.to_json(self.lane.secrets)
        view = bounded(
            {
                "toolCallId": record.get("toolCallId"),
                "toolName": record.get("toolName"),
                "options": [
                    {"optionId": o.get("optionId"), "name": o.get("name"), "kind": o.get("kind")}
                    for o in record.get("options", [])
                ],
                "outcome": "selected" if record.get("choice") is not None else "cancelled",
                "optionId": record.get("choice"),
                "chosenBy": record.get("chosenBy"),
                "reasonCode": record.get("reasonCode"),
                "reason": self.lane.redact(str(record.get("reason") or "")),
            }
        )
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
            )
        )
        self._pending.add(task)
        outcome: ElicitationOutcome
        try:
            outcome = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not task.cancelled() or (current is not None and current.cancelling()):
                raise  # this handler itself was cancelled, not the question
            outcome = withdraw_elicitation(request.params)
        finally:
            self._pending.discard(task)
        self.live.elicitation(redact_json(outcome.record, self.lane.secrets))
        return outcome.answer

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
        if not self._write_items():
            await self._write_items_after_outage()
        self._mark_output_unrecorded(outcome)
        outcome.tool_calls = len(self.tool_calls)
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
        self._finish_items(outcome)
        outcome.tool_calls = len(self.tool_calls)
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
                return outcome
            return await self._lost_outcome(self._lost)
        finally:
            for future in (waiter, lost):
                if not future.done():
                    future.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(waiter, lost, return_exceptions=True)

    # --- items -----------------------------------------------------------------------------

    def _finish_items(self, outcome: TurnOutcome) -> None:
        """The turn's last items, written now (the abandoned turn's path: no waiting)."""
        self._collect_items()
        if not self._write_items():
            self._output_not_recorded("the store could not be reached")
        self._mark_output_unrecorded(outcome)

    def _collect_items(self) -> None:
        self.buffer.close()
        for tool_state in self.tool_calls.values():
            self._items.append(Item("tool_call", self._tool_view(tool_state)))
        if self.plan is not None:
            self._items.append(Item("plan", {"entries": plan_view(self.plan)}))
        self._items.extend(self.live.items())

    def _mark_output_unrecorded(self, outcome: TurnOutcome) -> None:
        if self._append_failed is not None and outcome.status != "RECOVERY_REQUIRED":
            outcome.status = "RECOVERY_REQUIRED"
            outcome.error_code = "OUTPUT_APPEND_FAILED"
            outcome.recovery_reason = self._append_failed

    async def _write_items_after_outage(self) -> None:
        """The store went away while the last items were written: try again once it answers
        (bounded, :func:`baton.store.outage.until_stored`); the append skips what a cut-off
        try stored."""

        async def write() -> None:
            if not self._write_items():
                raise StoreUnavailable("the run's output could not be written")

        try:
            await until_stored(write)
        except StoreUnavailable:
            self._output_not_recorded("the store could not be reached")

    def _tool_view(self, tool_state: dict[str, Any]) -> dict[str, Any]:
        view = tool_call_view(tool_state, self.lane.redact)
        parent = self.tool_parents.get(str(tool_state.get("toolCallId")))
        if parent is not None:
            view["parentToolCallId"] = parent
        return view

    def _write_items(self) -> bool:
        """Write the items not yet stored. False when a shared store could not be reached:
        they stay held (up to MAX_ITEMS_HELD_FOR_STORE) for a later try, which skips those a
        cut-off try stored. Any other failure is final (see ``_output_not_recorded``)."""
        if not self._items or self._append_failed is not None:
            return True
        batch = [NewItem(i.kind, i.content, i.coalesced_events) for i in self._items]
        for attempt in range(1, MAX_STREAM_OUTPUT_APPEND_ATTEMPTS + 1):
            try:
                self.recorder.items(self.run_id, batch, after=self._items_stored)
            except StoreUnavailable as exc:
                if len(self._items) <= MAX_ITEMS_HELD_FOR_STORE:
                    return False
                self._output_not_recorded(f"writing output had an unknown outcome: {exc.code}")
                return True
            except sqlite3.OperationalError as exc:
                # Rolled back: an ordinary failure, retried.
                if attempt == MAX_STREAM_OUTPUT_APPEND_ATTEMPTS:
                    self._output_not_recorded(f"writing output failed {attempt} times: {exc}")
                    return True
                continue
            except Exception as exc:  # the outcome of the write is unknown: never retried
                self._output_not_recorded(
                    f"writing output had an unknown outcome: {type(exc).__name__}"
                )
                return True
            self._items_stored += len(batch)
            self._items = []
            return True
        return True  # pragma: no cover - every attempt returns

    def _output_not_recorded(self, reason: str) -> None:
        """The output cannot be recorded: the retained items are discarded and the
        generation quarantined; the turn's outcome becomes RECOVERY_REQUIRED."""
        self._append_failed = reason
        self._items = []
        self._spawn_quarantine()

    def _spawn_quarantine(self) -> None:
        self._loop.create_task(
            self.lane.quarantine("materialized output could not be recorded", self.generation)
        )


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


def tool_call_view(state: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """The compact, bounded, redacted view of a tool call for events and items (no raw input
    or output: those stay in the protected journal)."""
    title = state.get("title")
    view: dict[str, Any] = {
        "toolCallId": state.get("toolCallId"),
        "kind": state.get("kind"),
        # Redacted whole, then cut: cutting first could leave the head of a credential
        # too short for any rule to recognise.
        "title": redact(title)[:MAX_TOOL_TITLE_CHARS] if isinstance(title, str) else None,
        "status": state.get("status"),
        "paths": [redact(p) for p in tool_paths(state)[:MAX_TOOL_PATHS]],
    }
    name = tool_name(state)
    if name is not None:
        view["name"] = redact(name)
    command = tool_command(state)
    if command is not None:
        view["command"] = redact(command)[:MAX_TOOL_COMMAND_CHARS]
    content = state.get("content")
    diffs = [
        c
        for c in (content if isinstance(content, list) else [])
        if isinstance(c, dict) and c.get("type") == "diff"
    ]
    if diffs:
        added = removed = files = 0
        for diff in diffs:
            if isinstance(diff.get("changes"), list):
                # A v2 diff: its changes, counted from its git patch.
                stats = tool_diff_stats({"content": [diff]})
                files += len(stats)
                added += sum(s.added for s in stats)
                removed += sum(s.removed for s in stats)
                continue
            files += 1
            old = _lines(diff.get("oldText"))
            new = _lines(diff.get("newText"))
            added += max(len(new) - len(old), 0) if old else len(new)
            removed += max(len(old) - len(new), 0)
        # The diff's texts are the inspector's, bounded by their own rule (a side over
        # MAX_VIEW_DIFF_TEXT_CHARS is left out whole, never cut); everything else of the view
        # is a bounded projection.
        bounded_view: dict[str, Any] = bounded(view)
        bounded_view["diff"] = {
            "files": files,
            "added": added,
            "removed": removed,
            "changes": [_diff_change(d, redact) for d in diffs[:MAX_VIEW_DIFF_FILES]],
        }
        return bounded_view
    view_only: dict[str, Any] = bounded(view)
    return view_only


def _command_names(commands: object) -> list[str]:
    """The first :data:`MAX_COMMAND_NAMES` command names of an available_commands_update."""
    names: list[str] = []
    for command in commands if isinstance(commands, list) else []:
        if len(names) >= MAX_COMMAND_NAMES:
            break
        if isinstance(command, dict) and isinstance(command.get("name"), str):
            names.append(bounded_text(command["name"], MAX_NAME_CHARS))
    return names


def _lines(text: object) -> list[str]:
    """The lines of a diff side (nothing when the agent sent no text there)."""
    return text.splitlines() if isinstance(text, str) else []


def _diff_change(diff: dict[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """One diff item's path and texts, redacted, for the inspector's rendered diff; a side
    over :data:`MAX_VIEW_DIFF_TEXT_CHARS` (or not a string) is left out and marked."""
    changes = diff.get("changes")
    if isinstance(changes, list):
        # ACP v2: the first changed path, and the git patch (when sent) instead of the texts.
        first = next((c for c in changes if isinstance(c, dict)), {})
        path = first.get("path")
        patch = diff.get("patch")
        text = patch.get("text") if isinstance(patch, dict) else None
        fits = not isinstance(text, str) or len(text) <= MAX_VIEW_DIFF_TEXT_CHARS
        return {
            "path": redact(path)[:1024] if isinstance(path, str) else None,
            "oldText": None,
            "newText": None,
            "patch": redact(text) if fits and isinstance(text, str) else None,
            "truncated": not fits,
        }
    path = diff.get("path")
    old, new = diff.get("oldText"), diff.get("newText")
    sides = [side for side in (old, new) if side is not None]
    fits = all(isinstance(s, str) and len(s) <= MAX_VIEW_DIFF_TEXT_CHARS for s in sides)
    return {
        "path": redact(path)[:MAX_TOOL_PATH_CHARS] if isinstance(path, str) else None,
        "oldText": redact(old) if fits and isinstance(old, str) else None,
        "newText": redact(new) if fits and isinstance(new, str) else None,
        "truncated": not fits,
    }


def plan_view(entries: list[Any]) -> list[dict[str, Any]]:
    """The plan's entries as events and items show them, bounded."""
    view: list[dict[str, Any]] = bounded(
        [
            {k: e.get(k) for k in ("content", "status", "priority")}
            for e in entries[:MAX_PLAN_ENTRIES]
            if isinstance(e, dict)
        ]
    )
    return view
