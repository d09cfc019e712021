"""The HTTP status of each stable error code, and the JSON body of an error.

An error body is ``{"error": {"code", "message", "fault"}, "schemaVersion": 1}``: the same
code and fault the CLI prints and the store records (docs/errors.md). Codes not in
:data:`STATUS_BY_CODE` take their fault's status (:data:`STATUS_BY_FAULT`). docs/api.md repeats
both tables; a test keeps them equal.
"""

from __future__ import annotations

from typing import Any, Final

from baton.errors import BatonError, Fault
from baton.views.contract import SCHEMA_VERSION

#: Codes whose status is not their fault's.
STATUS_BY_CODE: Final[dict[str, int]] = {
    "API_UNAUTHORIZED": 401,
    "API_ORIGIN_REFUSED": 403,
    # 421 Misdirected Request: the Host names another server (DNS rebinding).
    "API_HOST_REFUSED": 421,
    "API_NOT_FOUND": 404,
    "API_METHOD_NOT_ALLOWED": 405,
    "API_BODY_TOO_LARGE": 413,
    "API_REQUEST_INVALID": 400,
    "RUN_NOT_FOUND": 404,
    "RECORD_NOT_FOUND": 404,
    "SESSION_NOT_FOUND": 404,
    "PERMISSION_NOT_FOUND": 404,
    "RUN_ID_AMBIGUOUS": 409,
    "PERMISSION_NOT_PENDING": 409,
    "PERMISSION_OPTION_NOT_OFFERED": 422,
    "ELICITATION_NOT_FOUND": 404,
    "ELICITATION_NOT_PENDING": 409,
    "ELICITATION_ANSWER_INVALID": 422,
    "RUN_NOT_RECOVERABLE": 409,
    "RUN_NOT_ACTIVE": 409,
    "CONTROL_REVISION_STALE": 409,
    "CONTROL_BUSY": 409,
    "CONTROL_UNKNOWN": 404,
    "CONTROL_WRONG_TYPE": 422,
    "CONTROL_CHOICE_NOT_ADVERTISED": 422,
    "CONTROL_NOT_MUTABLE": 422,
    "SESSION_QUEUE_FULL": 429,
    "SESSION_BUSY": 409,
    "SESSION_CLOSED": 409,
    "SESSION_RECOVERY_REQUIRED": 409,
    "SESSION_NAME_TAKEN": 409,
    "SESSION_NOT_RESUMABLE": 409,
    "SESSION_FORK_NOT_ADVERTISED": 422,
    "SESSION_FORK_AT_TURN_UNSUPPORTED": 422,
    "SESSION_ON_OTHER_HOST": 409,
    "JOURNAL_ON_OTHER_HOST": 404,
    "WORKSPACE_NOT_FOUND": 404,
    "BATCH_NOT_FOUND": 404,
    "WORKSPACE_IN_USE": 409,
    "WORKSPACE_DIFF_INCOMPLETE": 409,
    "PROMPT_NOT_FOUND": 404,
    "SERVICE_STOPPING": 503,
    "AGENT_NOT_INSTALLED": 424,
    "STORAGE_FULL": 507,
    "STORAGE_READ_ONLY": 500,
}

#: The status of every other code, by whose fault it is.
STATUS_BY_FAULT: Final[dict[Fault, int]] = {
    "caller": 400,
    "agent": 502,
    "transport": 502,
    "budget": 504,
    "baton": 500,
}


def status_of(code: str, fault: Fault) -> int:
    """The HTTP status an error with ``code`` and ``fault`` is answered with."""
    return STATUS_BY_CODE.get(code, STATUS_BY_FAULT[fault])


def error_body(code: str, message: str, fault: Fault) -> dict[str, Any]:
    """The JSON body of an error answer."""
    return {
        "error": {"code": code, "message": message, "fault": fault},
        "schemaVersion": SCHEMA_VERSION,
    }


def error_of(exc: BatonError) -> tuple[int, dict[str, Any]]:
    """The status and body an error raised by a route is answered with."""
    return status_of(exc.code, exc.fault), error_body(exc.code, exc.message, exc.fault)
