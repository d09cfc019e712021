"""The idle stop of a service (``baton serve --idle-stop SECONDS``; issue 30, item 2).

A service started in the background by `baton run --session`/`session new` stops by itself
once it has had nothing to do for its idle bound: no prompt queued or running (the launcher's
tasks, the runtime's runs), no question waiting for an answer, no event stream open and no
HTTP request. Any of these makes it busy again and restarts the count, so the idle stop never
ends work: when it fires, the service's ordinary graceful stop finds nothing to interrupt.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from baton.service.context import Service
from baton.service.limits import IDLE_CHECK_SECONDS

#: An ASGI application (Starlette's, wrapped by :meth:`IdleWatch.wrap`).
Asgi = Callable[[Any, Any, Any], Awaitable[None]]


class IdleWatch:
    """Whether a service has been idle for its bound."""

    def __init__(
        self, service: Service, bound: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.service = service
        self.bound = bound
        self.clock = clock
        self.last_busy = clock()

    def touch(self) -> None:
        """Something happened (an HTTP request): the idle count starts again."""
        self.last_busy = self.clock()

    def busy(self) -> bool:
        """True while the service has work: a prompt queued or running, a question waiting,
        or an event stream open."""
        service = self.service
        return bool(
            service.launcher.pending
            or list(service.runtime.runs)
            or service.asker.pending
            or service.elicitor.pending
            or any(feed.subscribers for feed in service.feeds.live.values())
        )

    def expired(self) -> bool:
        """True once the service has been idle for its bound (a busy service touches it)."""
        if self.busy():
            self.touch()
            return False
        return self.clock() - self.last_busy >= self.bound

    async def wait(self) -> None:
        """Return once the service has been idle for its bound. Cancellation-safe (it only
        looks)."""
        while True:  # a poll: busy-ness has no single event to wait on
            if self.expired():
                return
            await asyncio.sleep(IDLE_CHECK_SECONDS)

    def wrap(self, app: Asgi) -> Asgi:
        """``app`` with every request counted as activity."""

        async def counted(scope: Any, receive: Any, send: Any) -> None:
            self.touch()
            try:
                await app(scope, receive, send)
            finally:
                self.touch()

        return counted
