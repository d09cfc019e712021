"""Loss causes: every way a lane loses its generation has a code and a sentence that names it."""

from __future__ import annotations

import errno

import pytest

from baton.errors import (
    FrameTooLarge,
    InternalError,
    JournalEntryTooLarge,
    ProtocolViolation,
    StorageFull,
    TapFailed,
    TransportClosed,
)
from baton.runtime.lanes.loss import (
    BatonFault,
    ForeignSession,
    LaneLost,
    LossCause,
    ProcessExited,
    ProtocolBroken,
    Quarantined,
    TapFailure,
    TransportEnded,
    cause_of,
    describe_loss,
)


def _tap_failed(root: BaseException) -> TapFailed:
    try:
        try:
            raise root
        except BaseException as exc:
            raise TapFailed(f"the durability tap failed: {exc}") from exc
    except TapFailed as failed:
        return failed


@pytest.mark.parametrize(
    ("cause", "code", "sentence"),
    [
        (ProtocolBroken("unknown_response_id"), "PROTOCOL_VIOLATION", "broke the protocol"),
        (ForeignSession(), "FOREIGN_SESSION", "an update for a session this lane does not own"),
        (TapFailure("STORAGE_FULL"), "TAP_FAILED", "the disk is full"),
        (TapFailure(), "TAP_FAILED", "could not record"),
        (TransportEnded(), "TRANSPORT_CLOSED", "closed its connection"),
        (ProcessExited(3), "AGENT_EXITED", "exited with status 3"),
        (ProcessExited(-9), "AGENT_EXITED", "killed by SIGKILL"),
        (ProcessExited(None), "AGENT_EXITED", "ended"),
        (BatonFault(), "BATON_BUG", "please report"),
        (Quarantined("the interrupt deadline expired"), "QUARANTINED", "deadline expired"),
    ],
)
def test_each_cause_has_a_code_and_names_itself(cause: LossCause, code: str, sentence: str) -> None:
    assert cause.code == code
    assert sentence in cause.describe()


def test_a_lane_lost_is_a_closed_transport_carrying_its_cause() -> None:
    lost = LaneLost(ForeignSession("a permission request"))
    assert isinstance(lost, TransportClosed)
    assert lost.code == "TRANSPORT_CLOSED"  # every closed-transport path still handles it
    assert cause_of(lost) == ForeignSession("a permission request")
    assert "a permission request" in str(lost)


def test_errors_are_classified_by_what_they_are() -> None:
    assert cause_of(_tap_failed(StorageFull("no space"))) == TapFailure("STORAGE_FULL")
    assert cause_of(_tap_failed(OSError(errno.ENOSPC, "full"))) == TapFailure("STORAGE_FULL")
    assert cause_of(_tap_failed(OSError(errno.EROFS, "ro"))) == TapFailure("STORAGE_READ_ONLY")
    too_large = _tap_failed(JournalEntryTooLarge(10, 20))
    assert cause_of(too_large) == TapFailure("JOURNAL_ENTRY_TOO_LARGE")
    assert cause_of(_tap_failed(ValueError("x"))) == TapFailure(None)
    assert cause_of(FrameTooLarge(10, 20)) == ProtocolBroken("frame_too_large")
    assert cause_of(ProtocolViolation("duplicate_request_id", "m")) == ProtocolBroken(
        "duplicate_request_id"
    )
    assert cause_of(InternalError("bug")) == BatonFault()
    assert cause_of(TransportClosed("eof")) == TransportEnded()
    assert cause_of(TransportClosed("eof"), returncode=3) == ProcessExited(3)
    assert cause_of(None) == TransportEnded()
    assert "exited with status 2" in describe_loss(LaneLost(ProcessExited(2)))
