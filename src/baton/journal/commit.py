"""The group commit of a server journal: one sync in flight at a time, in a worker thread,
covering every record appended before it started and shared by every caller waiting for it;
the background task that syncs a batch within its interval; a failed sync is sticky.

:class:`GroupCommit` is the part of :class:`~baton.journal.writer.ServerJournal` that syncs
(see the writer's module docstring for the durability guarantees).
"""

from __future__ import annotations

import asyncio
import contextlib
import os

from baton.errors import JournalSyncFailed
from baton.journal.segments import SegmentFiles, sync_all


class GroupCommit(SegmentFiles):
    """Syncing a server journal's segments (attributes set by
    :class:`~baton.journal.writer.ServerJournal`)."""

    _loop: asyncio.AbstractEventLoop
    _sync: asyncio.Future[None] | None
    _synced_sequence: int
    _synced: int
    _sync_target: int
    _dirty: asyncio.Event
    _armed: bool
    _first_unsynced_at: float

    async def flush(self) -> None:
        """Write and sync every record appended so far. Raises the sticky failure if there is
        one."""
        self._raise_if_failed()
        await self._sync_through(self._written_sequence)

    async def _sync_through(self, sequence: int) -> None:
        while self._synced_sequence < sequence:
            self._raise_if_failed()
            sync = self._kick_sync()
            try:
                await asyncio.shield(sync)
            except OSError:
                self._raise_if_failed()
                raise

    def _kick_sync(self) -> asyncio.Future[None]:
        """The sync in flight, or a new one. Never blocks."""
        if self._sync is None:
            self._sync = self._start_sync()
        return self._sync

    def _start_sync(self) -> asyncio.Future[None]:
        # One sync in flight at a time, in a worker thread. Its bookkeeping runs in a done
        # callback on the loop (before any waiter resumes), so it completes even when every
        # waiter was cancelled; waiters await it through shield() for the same reason. It is
        # "in flight" until that callback ran (not merely until the future is done), so a new
        # sync never starts before the previous one's accounting.
        #
        # Waiters get ``settled``, not the executor's future: that one is done a moment before
        # its callbacks run, and awaiting a done future does not yield, so a waiter looping on
        # it would spin forever without letting the bookkeeping run.
        self._write_buffer()  # a sync covers what is in the file: write the buffer first
        target = self._written_sequence
        target_bytes = self._sync_target = self._appended
        retired = list(self._retired)
        dir_fd = self._dir_fd if self._dir_dirty else None
        self._dir_dirty = False
        settled: asyncio.Future[None] = self._loop.create_future()
        future = self._loop.run_in_executor(None, sync_all, retired, self._fd, dir_fd)

        def finished(done: asyncio.Future[None]) -> None:
            self._sync = None
            failure = done.exception()
            if failure is not None:
                if isinstance(failure, OSError):
                    self._fail("syncing", failure)
                else:  # pragma: no cover - the sync only raises OSError
                    self._failure = JournalSyncFailed(f"syncing failed: {failure!r}")
                settled.set_exception(failure)
                settled.exception()  # waiters are optional: nobody awaiting is no leak
                return
            for fd in retired:
                self._retired.remove(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._synced_sequence = max(self._synced_sequence, target)
            self._synced = max(self._synced, target_bytes)
            self._check_at = 0  # the next inbound append works out the bounds again
            settled.set_result(None)

        future.add_done_callback(finished)
        return settled

    async def _sync_loop(self) -> None:
        interval = self._limits.sync_interval_seconds
        with contextlib.suppress(JournalSyncFailed):
            while True:
                await self._dirty.wait()
                delay = self._first_unsynced_at + interval - self._loop.time()
                if delay > 0:
                    await asyncio.sleep(delay)
                self._dirty.clear()
                self._armed = False
                await self._sync_through(self._written_sequence)
