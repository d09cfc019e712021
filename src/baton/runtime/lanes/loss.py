"""Why a lane lost its generation: typed causes, carried on :class:`LaneLost`.

Every quarantine and every loss of the agent names its cause, so a run's diagnosis says what
happened ("the agent broke the protocol: an answer to an id never sent", "the journal could not
record the agent's traffic: the disk is full", "the agent process exited with status 3")
instead of one "the agent process was lost" for everything. :func:`cause_of` classifies any
error a turn sees (the lane's :class:`LaneLost`, or the connection's own close reason) and
:func:`describe_loss` is the sentence a run's recovery reason uses.

Each cause has a stable ``code`` (what a program matches) and :meth:`LossCause.describe` (what
a person reads). Descriptions hold no agent text beyond a violation's kind, which is Baton's.
"""

from __future__ import annotations

import errno
import signal
from dataclasses import dataclass
from typing import Final

from baton.errors import (
    BatonError,
    FrameTooLarge,
    InternalError,
    LaneLost,
    ProtocolViolation,
    TapFailed,
    TransportClosed,
)

#: Links of an exception's ``__cause__``/``__context__`` chain read to classify a tap failure
#: (a chain is short; the bound keeps a cyclic one from looping).
MAX_CAUSE_CHAIN: Final = 8


@dataclass(frozen=True, slots=True)
class LossCause:
    """Why a lane lost its generation. ``code`` is stable; :meth:`describe` is for people."""

    code = "LANE_LOST"

    def describe(self) -> str:
        """One sentence, no trailing period."""
        return "the agent's lane was lost"


@dataclass(frozen=True, slots=True)
class ProtocolBroken(LossCause):
    """The agent broke the protocol (``kind``: the violation's kind, Baton's word)."""

    kind: str
    code = "PROTOCOL_VIOLATION"

    def describe(self) -> str:
        """``the agent broke the protocol (unknown_response_id)``."""
        return f"the agent broke the protocol ({self.kind})"


@dataclass(frozen=True, slots=True)
class ForeignSession(LossCause):
    """The agent sent traffic (an update or a request) for a session the lane does not own."""

    what: str = "an update"
    code = "FOREIGN_SESSION"

    def describe(self) -> str:
        """``the agent sent an update for a session this lane does not own``."""
        return f"the agent sent {self.what} for a session this lane does not own"


@dataclass(frozen=True, slots=True)
class TapFailure(LossCause):
    """The journal could not record the agent's traffic (``storage``: the storage condition's
    code when known, e.g. STORAGE_FULL)."""

    storage: str | None = None
    code = "TAP_FAILED"

    def describe(self) -> str:
        """``the journal could not record the agent's traffic (the disk is full)``."""
        detail = {
            "STORAGE_FULL": " (the disk is full)",
            "STORAGE_READ_ONLY": " (the data directory is read-only)",
            "JOURNAL_ENTRY_TOO_LARGE": " (a frame was over the journal's entry bound)",
        }.get(self.storage or "", f" ({self.storage})" if self.storage else "")
        return f"the journal could not record the agent's traffic{detail}"


@dataclass(frozen=True, slots=True)
class TransportEnded(LossCause):
    """The agent closed its output (or a pipe failed) while its process had not exited."""

    code = "TRANSPORT_CLOSED"

    def describe(self) -> str:
        """``the agent closed its connection``."""
        return "the agent closed its connection"


@dataclass(frozen=True, slots=True)
class ProcessExited(LossCause):
    """The agent process ended on its own (``returncode``: negative is the signal)."""

    returncode: int | None
    code = "AGENT_EXITED"

    def describe(self) -> str:
        """``the agent process exited with status 3`` / ``... was killed by SIGKILL``."""
        code = self.returncode
        if code is None:
            return "the agent process ended"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the agent process was killed by {name}"
        return f"the agent process exited with status {code}"


@dataclass(frozen=True, slots=True)
class BatonFault(LossCause):
    """Baton broke one of its own invariants while handling the agent's traffic."""

    code = "BATON_BUG"

    def describe(self) -> str:
        """``Baton failed while handling the agent's traffic``."""
        return "Baton failed while handling the agent's traffic (please report it)"


@dataclass(frozen=True, slots=True)
class Quarantined(LossCause):
    """Baton quarantined the lane for ``reason`` (Baton's words: a bound, an ambiguous
    mutation, strict mode, a shutdown with a prompt outstanding)."""

    reason: str
    code = "QUARANTINED"

    def describe(self) -> str:
        """``the lane was quarantined: <reason>``."""
        return f"the lane was quarantined: {self.reason}"


def _storage_code(error: BaseException) -> str | None:
    """The storage condition at the root of a tap failure, if one is recognizable."""
    seen: BaseException | None = error
    for _ in range(MAX_CAUSE_CHAIN):
        if seen is None:
            return None
        code = getattr(seen, "code", None)
        if code in ("STORAGE_FULL", "STORAGE_READ_ONLY", "JOURNAL_ENTRY_TOO_LARGE"):
            return str(code)
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return "STORAGE_FULL"
        if isinstance(seen, OSError) and seen.errno == errno.EROFS:
            return "STORAGE_READ_ONLY"
        seen = seen.__cause__ or seen.__context__
    return None


def cause_of(error: BaseException | None, returncode: int | None = None) -> LossCause:
    """The cause a lost generation's error stands for. ``returncode``: the agent's exit status
    when it is known to have exited (a closed transport is then the process's end)."""
    if isinstance(error, LaneLost):
        cause: LossCause = error.cause  # the errors home types it loosely
        return cause
    if isinstance(error, TapFailed):
        return TapFailure(_storage_code(error))
    if isinstance(error, FrameTooLarge):
        return ProtocolBroken("frame_too_large")
    if isinstance(error, ProtocolViolation):
        return ProtocolBroken(error.kind)
    if isinstance(error, InternalError):
        return BatonFault()
    if returncode is not None:
        return ProcessExited(returncode)
    if isinstance(error, TransportClosed) or error is None:
        return TransportEnded()
    if isinstance(error, BatonError):
        return Quarantined(error.code)
    return BatonFault()


def describe_loss(error: BaseException | None) -> str:
    """The sentence naming why a run lost its agent (see :func:`cause_of`)."""
    return cause_of(error).describe()
