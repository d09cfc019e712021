"""What a lane needs of its agent child, and the factory that makes the real one.

A lane talks to its child through :class:`LaneChild` only, and gets one from a :data:`Spawn`
factory (``Lane(spawn=...)``): production spawns an :class:`AgentProcess`; unit tests hand the
lane a child over in-memory pipes, so lane phases, fencing and quarantine ordering are tested
without a subprocess.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from baton.connection.streams import ByteReader, ByteWriter
from baton.runtime.agents.launch import LaunchSpec
from baton.runtime.processes.process import AgentProcess, ShutdownResult


class LaneChild(Protocol):
    """One generation's agent child: its ACP pipes, its pid, its end."""

    @property
    def pid(self) -> int:
        """The child's pid (and process group id)."""
        ...

    @property
    def stdout(self) -> ByteReader:
        """The child's ACP output (the connection's reader)."""
        ...

    @property
    def stdin(self) -> ByteWriter:
        """The child's ACP input (the connection's writer)."""
        ...

    @property
    def returncode(self) -> int | None:
        """The exit status once the child exited (negative: the signal), else None."""
        ...

    async def wait(self) -> int:
        """Wait for the child to exit; its exit status."""
        ...

    def stderr_tail(self) -> str:
        """The child's redacted stderr tail."""
        ...

    async def shutdown(self, *, term_grace: float = ...) -> ShutdownResult:
        """End the child and everything it started; idempotent."""
        ...


#: Makes a lane's child from its launch spec and the lane's redaction function.
Spawn = Callable[[LaunchSpec, Callable[[str], str]], Awaitable[LaneChild]]


async def spawn_agent_process(spec: LaunchSpec, redact: Callable[[str], str]) -> LaneChild:
    """The production :data:`Spawn`: the spec's argv with exactly its environment, in a process
    group of its own (:meth:`AgentProcess.spawn`)."""
    return await AgentProcess.spawn(spec.argv, env=spec.env, redact=redact)
