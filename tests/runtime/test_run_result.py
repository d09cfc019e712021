"""`RunResult.to_event()` and `RunResult.from_event()`: one result, read back the same by the
CLI (through a service) and the fleet (from a worker's event)."""

from __future__ import annotations

import pytest

from baton.runtime.runtime import RunResult
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.outcome import RunOutcome


def _full() -> RunResult:
    return RunResult(
        "run-1",
        "INTERRUPTED",
        "cancelled",
        3,
        error_code="BUDGET_EXPIRED",
        message="the idle bound elapsed",
        session_id="ses-1",
        provider_session_id="prov-1",
        tool_calls=2,
        duration_ms=1500,
        text="partial",
        permissions=[{"choice": "allow"}],
        bound="idle",
        retryable=True,
        skipped_frames=1,
        violations=4,
        outcome=RunOutcome.BUDGET_EXPIRED,
        usage={"used": 10, "size": 100},
    )


def test_from_event_reads_back_what_to_event_wrote() -> None:
    result = _full()
    back = RunResult.from_event(result.to_event(), text="partial", permissions=result.permissions)
    assert back == result


@pytest.mark.parametrize(
    ("data", "code", "outcome"),
    [
        ({"status": "COMPLETED"}, 0, RunOutcome.COMPLETED),
        ({"status": "FAILED", "exitCode": None}, 1, RunOutcome.FAILED),
        ({"status": "INTERRUPTED", "bound": "absolute"}, 3, RunOutcome.BUDGET_EXPIRED),
        ({"status": "RECOVERY_REQUIRED", "exitCode": "0"}, 6, RunOutcome.RECOVERY_REQUIRED),
        ({"status": "COMPLETED", "exitCode": 130}, 130, RunOutcome.INTERRUPTED),
    ],
)
def test_a_missing_exit_code_is_derived_from_the_status_never_success(
    data: dict[str, object], code: int, outcome: RunOutcome
) -> None:
    result = RunResult.from_event(RunEvent("result", "run-2", data))
    assert (result.exit_code, result.outcome) == (code, outcome)
    assert result.text == "" and result.permissions == [] and result.usage is None
