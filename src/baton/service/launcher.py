"""Runs started through the API: their feeds, the session prompts' tasks, and the service's
graceful stop.

:meth:`RunLauncher.start` hands a :class:`~baton.runtime.runtime.RunRequest` to the
service's runtime (:meth:`~baton.runtime.runtime.Runtime.start`) and returns the run id as
soon as the run exists, while the turn goes on and every event is published on the run's
feed. A request refused before a run exists (an unknown profile, a policy the agent does not
allow) raises its stable error instead. The runs themselves are the runtime's run table's
(``runtime.runs``): cancelling and stopping look them up there.

:meth:`RunLauncher.start_session_prompt` does the same for a session's next turn through
:meth:`Conversations.start <baton.runtime.conversations.service.Conversations.start>`: the
turn may wait in the session's queue first, and its run id comes from the turn's handle as
soon as its run exists (:meth:`RunLauncher.started`). A run's feed is opened with the id its
handle names; events the runtime publishes before the handle is returned are held until then
(:class:`FeedSink`).

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
from dataclasses import dataclass
from typing import Final

from baton.errors import InternalError, RunNotActive, ServiceStopping
from baton.runtime.conversations.session_run import SessionRun
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent
from baton.service.feeds import FeedBoard, RunFeed

#: Seconds added to the runtime's interrupt deadline when waiting for interrupted turns to
#: settle during a stop (their answer is recorded and the session released after it).
STOP_SETTLE_MARGIN_SECONDS: Final = 2.0
#: The interrupt reason of a run stopped with the service.
STOPPING_REASON: Final = "the service is stopping"


#: A session prompt to start (a conversation's next turn): called with the service's event
#: hook, it returns the turn's handle once its run exists (after its wait in the session's
#: queue), or raises the refusal.
Starter = Callable[[Callable[[RunEvent], None]], Awaitable[SessionRun]]


class FeedSink:
    """A run's events on their way to its feed: held until the run's handle names the run
    (:meth:`bind`; the runtime may publish its first events before the handle is returned),
    then published as they come. The feed is opened with the handle's id, never guessed from
    an event."""

    def __init__(self, launcher: RunLauncher) -> None:
        self._launcher = launcher
        self.feed: RunFeed | None = None
        self._held: list[RunEvent] = []

    def __call__(self, event: RunEvent) -> None:
        if self.feed is None:
            self._held.append(event)
        else:
            self._launcher.publish(self.feed, event)

    def bind(self, feed: RunFeed) -> None:
        """The run exists: its feed; the events held so far go there first, in order."""
        self.feed = feed
        held, self._held = self._held, []
        for event in held:
            self._launcher.publish(feed, event)


@dataclass
class Launch:
    """One launched session prompt: its task (the turn's start, then its result) and its run
    id once the turn's handle exists."""

    task: asyncio.Task[object]
    created: asyncio.Future[str]


class RunLauncher:
    """The runs of one service."""

    def __init__(self, runtime: Runtime, feeds: FeedBoard) -> None:
        self.runtime = runtime
        self.feeds = feeds
        #: The task following each run that exists, by run id, until its feed is closed.
        self.tasks: dict[str, asyncio.Task[object]] = {}
        #: Every launched task still going (queued session prompts included).
        self.pending: set[asyncio.Task[object]] = set()
        self.stopping = False
        #: Called with each run's final ``result`` event (sessions' queues listen here).
        self.on_result: list[Callable[[RunEvent], None]] = []

    async def start(self, request: RunRequest) -> str:
        """Start ``request``; return its run id once the run exists (cancellation-safe: a
        cancelled caller leaves the run going, as a client that hung up after POSTing)."""
        if self.stopping:
            raise ServiceStopping("the service is stopping and accepts no new prompt")
        sink = FeedSink(self)
        run = await self.runtime.start(request, on_event=sink)
        sink.bind(self.feeds.open(run.id))
        task: asyncio.Task[object] = asyncio.ensure_future(run.result())
        self.tasks[run.id] = task
        self._follow(task, sink)
        return run.id

    def start_session_prompt(self, starter: Starter) -> Launch:
        """Start ``starter`` (a conversation's prompt) with this service's event hook, in a
        task that follows the turn to its end; its run id comes from the turn's handle once
        its run exists (:meth:`started`)."""
        if self.stopping:
            raise ServiceStopping("the service is stopping and accepts no new prompt")
        created: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        sink = FeedSink(self)

        async def turn() -> object:
            run = await starter(sink)
            sink.bind(self.feeds.open(run.id))
            self.tasks[run.id] = task
            created.set_result(run.id)
            return await run.result_or_abandon()

        task: asyncio.Task[object] = asyncio.ensure_future(turn())
        self._follow(task, sink)
        return Launch(task, created)

    def publish(self, feed: RunFeed, event: RunEvent) -> None:
        """Publish one event of a run on its feed (and a ``result`` to the listeners)."""
        feed.publish(event)
        if event.type == "result":
            for listener in list(self.on_result):
                listener(event)

    def _follow(self, task: asyncio.Task[object], sink: FeedSink) -> None:
        """Keep ``task`` (the run's, or its prompt's) until it ends, then close the feed."""
        self.pending.add(task)

        def finished(_task: asyncio.Task[object]) -> None:
            self.pending.discard(task)
            if sink.feed is not None:
                self.tasks.pop(sink.feed.run_id, None)
                self.feeds.close(sink.feed)

        task.add_done_callback(finished)

    async def started(self, launch: Launch) -> str:
        """The launch's run id once its run exists, or the error that refused it before."""
        waited: set[asyncio.Future[object]] = {launch.created, launch.task}  # type: ignore[arg-type]
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if launch.created.done():
            return launch.created.result()
        launch.task.result()  # the run was refused before it existed: its stable error
        raise InternalError("a session prompt ended without a run")

    def active_runs(self) -> list[str]:
        """The ids of the runs this service's runtime drives now, sorted."""
        return sorted(run.id for run in self.runtime.runs)

    def cancel(self, run_id: str) -> None:
        """Interrupt the run (during setup: no prompt is sent; with the prompt outstanding:
        session/cancel, then the interrupt deadline)."""
        run = self.runtime.runs.get(run_id)
        if run is None or not run.interrupt_nowait("cancelled through the API"):
            raise RunNotActive(f"run {run_id} is not running in this service")

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
        for run in self.runtime.runs:
            run.interrupt_nowait(STOPPING_REASON)
        if self.pending:
            await asyncio.wait(
                set(self.pending),
                timeout=self.runtime.interrupt_timeout + STOP_SETTLE_MARGIN_SECONDS,
            )
        for run in self.runtime.runs:
            with contextlib.suppress(BaseException):
                await run.abandon()
        for task in list(self.pending):
            task.cancel()
        for task in list(self.pending):
            with contextlib.suppress(BaseException):
                await task
