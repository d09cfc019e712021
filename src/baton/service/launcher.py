"""Runs started through the API: their feeds, the session prompts' tasks, and the service's
graceful stop.

:meth:`RunLauncher.start` hands a :class:`~baton.runtime.runtime.RunRequest` to the
service's runtime (:meth:`~baton.runtime.runtime.Runtime.start`) and returns the run id as
soon as the run exists, while the turn goes on and every event is published on the run's
feed. A request refused before a run exists (an unknown profile, a policy the agent does not
allow) raises its stable error instead. The runs themselves are the runtime's run table's
(``runtime.runs``): cancelling and stopping look them up there.

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

from baton.errors import InternalError, RunNotActive, ServiceStopping
from baton.runtime.runtime import RunRequest, Runtime
from baton.runtime.turns.events import RunEvent
from baton.service.feeds import FeedBoard, RunFeed

#: Seconds added to the runtime's interrupt deadline when waiting for interrupted turns to
#: settle during a stop (their answer is recorded and the session released after it).
STOP_SETTLE_MARGIN_SECONDS: Final = 2.0
#: The interrupt reason of a run stopped with the service.
STOPPING_REASON: Final = "the service is stopping"


#: A session prompt to launch (a conversation's next turn): called with the service's event
#: hook; its run exists once the conversation's queue lets it start.
Runner = Callable[[Callable[[RunEvent], None]], Awaitable[object]]


@dataclass
class Launch:
    """One launched session prompt: its task, its run id once the run exists, its feed then."""

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
        feed: list[RunFeed] = []

        def publish(event: RunEvent) -> None:
            if not feed:
                feed.append(self.feeds.open(event.run_id))
            self._publish(feed[0], event)

        run = await self.runtime.start(request, on_event=publish)
        self._follow(run.id, asyncio.ensure_future(run.result()), feed)
        return run.id

    def begin(self, runner: Runner) -> Launch:
        """Start ``runner`` (a conversation's prompt) with this service's event hook; its run
        id comes once its run exists (:meth:`run_id_of`)."""
        if self.stopping:
            raise ServiceStopping("the service is stopping and accepts no new prompt")
        loop = asyncio.get_running_loop()
        created: asyncio.Future[str] = loop.create_future()
        holder: list[RunFeed] = []

        def on_event(event: RunEvent) -> None:
            # Every event of a run carries its id (the runtime stamps the early ones).
            if not holder:
                holder.append(self.feeds.open(event.run_id))
                created.set_result(event.run_id)
                self.tasks[event.run_id] = task
            self._publish(holder[0], event)

        task: asyncio.Task[object] = asyncio.ensure_future(runner(on_event))
        self._follow(None, task, holder)
        return Launch(task, created, holder)

    def _publish(self, feed: RunFeed, event: RunEvent) -> None:
        feed.publish(event)
        if event.type == "result":
            for listener in list(self.on_result):
                listener(event)

    def _follow(self, run_id: str | None, task: asyncio.Task[object], feed: list[RunFeed]) -> None:
        """Keep ``task`` (the run's, or its prompt's) until it ends, then close the feed."""
        self.pending.add(task)
        if run_id is not None:
            self.tasks[run_id] = task

        def finished(_task: asyncio.Task[object]) -> None:
            self.pending.discard(task)
            if feed:
                self.tasks.pop(feed[0].run_id, None)
                self.feeds.close(feed[0])

        task.add_done_callback(finished)

    async def run_id_of(self, launch: Launch) -> str:
        """The launch's run id once the run exists, or the error that refused it before."""
        waited: set[asyncio.Future[object]] = {launch.created, launch.task}  # type: ignore[arg-type]
        await asyncio.wait(waited, return_when=asyncio.FIRST_COMPLETED)
        if launch.created.done():
            return launch.created.result()
        launch.task.result()  # the run was refused before it existed: its stable error
        raise InternalError("a run ended without any event")

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
