"""Runs started through the API: their tasks, their turns, their feeds, and the service's
graceful stop.

:meth:`RunLauncher.start` hands a :class:`~baton.runtime.runtime.RunRequest` to the
service's runtime and returns the run id as soon as the runtime has created the run (its
``run_started`` event), while the turn goes on in a task whose every event is published on
the run's feed. A request refused before a run exists (an unknown profile, a policy the agent
does not allow) raises its stable error instead.

:meth:`RunLauncher.stop` is the graceful shutdown: no new run is accepted, running turns get
``grace`` seconds to finish, then each is interrupted (session/cancel and the interrupt
deadline, exactly as Ctrl-C in the CLI: a ``cancelled`` answer makes the run INTERRUPTED, none
in time RECOVERY_REQUIRED); what still runs after that is cancelled, and closing the runtime
shuts every lane down, which makes runs still ambiguous RECOVERY_REQUIRED.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import orjson

from baton.errors import BatonError, InternalError, ServiceError, ServiceStopping
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.turn import Turn
from baton.service.feeds import FeedBoard, RunFeed
from baton.views.recovery import LAUNCH_KEY

#: Seconds added to the runtime's interrupt deadline when waiting for interrupted turns to
#: settle during a stop (their answer is recorded and the session released after it).
STOP_SETTLE_MARGIN_SECONDS: Final = 2.0


class RunNotActive(ServiceError):
    """The run is not running in this service (it ended, or another process ran it)."""

    code = "RUN_NOT_ACTIVE"


#: A run to launch: called with the service's event and turn hooks.
Runner = Callable[[Callable[[RunEvent], None], Callable[[Turn], None]], Awaitable[object]]


@dataclass
class Launch:
    """One launched run: its task, its run id once the run exists, its feed then."""

    task: asyncio.Task[object]
    created: asyncio.Future[str]
    holder: list[RunFeed] = field(default_factory=list)

    def feed(self) -> RunFeed:
        """The run's feed (once :attr:`created` is done)."""
        return self.holder[0]


class RunLauncher:
    """The runs of one service."""

    def __init__(self, runtime: Runtime, feeds: FeedBoard) -> None:
        self.runtime = runtime
        self.feeds = feeds
        #: Runs that exist, by id (a task whose run is not created yet is only in pending).
        self.tasks: dict[str, asyncio.Task[object]] = {}
        #: Every launched task still going (queued session prompts included).
        self.pending: set[asyncio.Task[object]] = set()
        self.turns: dict[str, Turn] = {}
        #: Provider session id -> the run whose turn uses it (for permission requests).
        self.provider_sessions: dict[str, str] = {}
        self.stopping = False
        #: Called with each run's final ``result`` event (sessions' queues listen here).
        self.on_result: list[Callable[[RunEvent], None]] = []

    def run_of(self, provider_session_id: str) -> str | None:
        """The run whose turn uses ``provider_session_id`` now."""
        return self.provider_sessions.get(provider_session_id)

    async def start(self, request: RunRequest) -> str:
        """Start ``request``; return its run id once the run exists (cancellation-safe: a
        cancelled caller leaves the run going, as a client that hung up after POSTing)."""
        launch = self.begin(
            lambda on_event, on_turn: self.runtime.run(request, on_event=on_event, on_turn=on_turn)
        )
        run_id = await self.run_id_of(launch)
        await self._record_launch(run_id, request, launch.feed())
        return run_id

    def begin(self, runner: Runner) -> Launch:
        """Start ``runner`` (a runtime run, or a conversation's prompt) with this service's
        event and turn hooks; its run id comes later (:meth:`run_id_of`)."""
        if self.stopping:
            raise ServiceStopping("the service is stopping and accepts no new prompt")
        loop = asyncio.get_running_loop()
        created: asyncio.Future[str] = loop.create_future()
        early: list[RunEvent] = []
        holder: list[RunFeed] = []

        def on_event(event: RunEvent) -> None:
            if not holder:
                if not event.run_id:
                    early.append(event)  # a lane warning before the run exists
                    return
                holder.append(self.feeds.open(event.run_id))
                for waiting in early:
                    holder[0].publish(RunEvent(waiting.type, event.run_id, waiting.data))
                created.set_result(event.run_id)
                self.tasks[event.run_id] = task
            holder[0].publish(event)
            if event.type == "result":
                for listener in list(self.on_result):
                    listener(event)

        def on_turn(turn: Turn) -> None:
            self.turns[turn.run_id] = turn
            self.provider_sessions[turn.session.provider_id] = turn.run_id
            if self.stopping:
                turn.interrupt("the service is stopping")

        task: asyncio.Task[object] = asyncio.ensure_future(runner(on_event, on_turn))
        self.pending.add(task)

        def finished(_task: asyncio.Task[object]) -> None:
            self.pending.discard(task)
            if holder:
                run_id = holder[0].run_id
                self.tasks.pop(run_id, None)
                turn = self.turns.pop(run_id, None)
                if turn is not None:
                    self.provider_sessions.pop(turn.session.provider_id, None)
                self.feeds.close(holder[0])

        task.add_done_callback(finished)
        return Launch(task, created, holder)

    async def run_id_of(self, launch: Launch) -> str:
        """The launch's run id once the run exists, or the error that refused it before."""
        waited: set[asyncio.Future[object]] = {launch.created, launch.task}  # type: ignore[arg-type]
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if launch.created.done():
            return launch.created.result()
        launch.task.result()  # the run was refused before it existed: its stable error
        raise InternalError("a run ended without any event")

    async def _record_launch(self, run_id: str, request: RunRequest, feed: RunFeed) -> None:
        """An ad-hoc agent's command, recorded on its run as `baton run` records it, so
        attaching later (recovery) can start the same agent again (redacted as the lane
        redacts; the launch form is the one the ``run_started`` event published)."""
        store = self.runtime.store
        if request.agent_command is None or store is None or not feed.frames:
            return
        started = orjson.loads(feed.frames[0][1].split(b"data: ", 1)[1])
        command = started.get("command")
        if started.get("type") != "run_started" or not isinstance(command, str):
            return
        with contextlib.suppress(BatonError):
            await store.record_observation(
                "BATON_RESOLUTION",
                {LAUNCH_KEY: {"command": command, "envKeys": list(request.env_keys)}},
                run_id=run_id,
            )

    def cancel(self, run_id: str) -> None:
        """Interrupt the run's turn (session/cancel, then the interrupt deadline)."""
        turn = self.turns.get(run_id)
        if turn is None:
            if run_id in self.tasks:
                raise RunNotActive(f"run {run_id} is still being set up; cancel it again soon")
            raise RunNotActive(f"run {run_id} is not running in this service")
        turn.interrupt("cancelled through the API")

    async def stop(self, grace: float) -> None:
        """The graceful stop (see the module docstring); prompts queued behind a session's
        running turn are dropped (cancelled before anything was sent for them). Idempotent."""
        self.stopping = True
        # Prompts still waiting in a session's queue never start: nothing was sent for them.
        started = set(self.tasks.values())
        for task in list(self.pending):
            if task not in started:
                task.cancel()
        if self.pending:
            await asyncio.wait(set(self.pending), timeout=grace)
        for turn in list(self.turns.values()):
            turn.interrupt("the service is stopping")
        if self.pending:
            await asyncio.wait(
                set(self.pending),
                timeout=self.runtime.interrupt_timeout + STOP_SETTLE_MARGIN_SECONDS,
            )
        for task in list(self.pending):
            task.cancel()
        for task in list(self.pending):
            with contextlib.suppress(BaseException):
                await task
