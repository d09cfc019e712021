"""A TCP proxy on 127.0.0.1 that a test can pause (hold every byte both ways, connections
open, as a network partition does) or slow down (a delay before each chunk it forwards): the
network between a worker and PostgreSQL, under the test's control. It runs its own event loop
on a thread, so the test's blocking waits do not stall it."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Final
from urllib.parse import urlsplit, urlunsplit

#: Bytes one read takes from a side of a connection.
CHUNK_BYTES: Final = 64 * 1024


class PausableProxy:
    """Forwards 127.0.0.1:``port`` to ``target_host``:``target_port``."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.delay = 0.0
        self._loop = asyncio.new_event_loop()
        self._open: asyncio.Event | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        started = threading.Event()
        self._thread = threading.Thread(target=self._main, args=(started,), daemon=True)
        self._thread.start()
        started.wait(10)

    @classmethod
    def for_url(cls, url: str) -> tuple[PausableProxy, str]:
        """A proxy in front of the server ``url`` names, and the URL through it."""
        parts = urlsplit(url)
        assert parts.hostname is not None and parts.port is not None
        proxy = cls(parts.hostname, parts.port)
        user = f"{parts.username}@" if parts.username else ""
        through = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{proxy.port}"))
        return proxy, through

    def _main(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self._loop)

        async def serve() -> None:
            self._open = asyncio.Event()
            self._open.set()
            self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
            self.port = self._server.sockets[0].getsockname()[1]
            started.set()

        self._loop.run_until_complete(serve())
        self._loop.run_forever()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.close()
            return
        self._writers.update((writer, up_writer))
        await asyncio.gather(
            self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True
        )
        for side in (writer, up_writer):
            self._writers.discard(side)
            side.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._open is not None
        try:
            while data := await reader.read(CHUNK_BYTES):
                await self._open.wait()
                if self.delay:
                    await asyncio.sleep(self.delay)
                await self._open.wait()
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            return  # a side went away: the connection ends
        finally:
            with contextlib.suppress(OSError, RuntimeError):
                writer.write_eof()

    def pause(self) -> None:
        """Hold every byte from now on, both ways (the connections stay open)."""
        assert self._open is not None
        self._loop.call_soon_threadsafe(self._open.clear)

    def resume(self) -> None:
        """Forward again, the held bytes first."""
        assert self._open is not None
        self._loop.call_soon_threadsafe(self._open.set)

    def close(self) -> None:
        """Stop the proxy and cut its connections."""

        async def stop() -> None:
            assert self._server is not None and self._open is not None
            self._open.set()
            self._server.close()
            for writer in list(self._writers):
                writer.close()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
