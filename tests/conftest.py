"""Suite-wide test setup.

- Puts ``tests/`` on ``sys.path`` (the suite imports modules with ``--import-mode=importlib``,
  which adds nothing there) so any test can ``import acp_schemas``, the pinned ACP schemas.
- Validates every outbound message of every in-process :class:`~baton.connection.Connection`
  of the suite (Baton's requests, notifications and answers to the agent) against both pinned
  stable schemas, and ``systemPrompt`` against the unstable one; a test fails at teardown when
  one does not validate. Methods the schemas do not define (extensions, legacy
  ``session/set_model``, a connection test's made-up methods) are not checked. A test that
  sends off-schema frames on purpose opts out with ``@pytest.mark.off_schema_outbound``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from acp_schemas import validate_in, validate_stable  # noqa: E402
from baton.connection.core import Connection  # noqa: E402

#: The definition each client-to-agent method's params must satisfy.
REQUEST_PARAMS: dict[str, str] = {
    "initialize": "InitializeRequest",
    "authenticate": "AuthenticateRequest",
    "logout": "LogoutRequest",
    "session/new": "NewSessionRequest",
    "session/load": "LoadSessionRequest",
    "session/resume": "ResumeSessionRequest",
    "session/list": "ListSessionsRequest",
    "session/close": "CloseSessionRequest",
    "session/delete": "DeleteSessionRequest",
    "session/set_mode": "SetSessionModeRequest",
    "session/set_config_option": "SetSessionConfigOptionRequest",
    "session/prompt": "PromptRequest",
}
NOTIFICATION_PARAMS: dict[str, str] = {
    "session/cancel": "CancelNotification",
    "$/cancel_request": "CancelRequestNotification",
}
#: The definition of Baton's answer to each agent-to-client request it serves.
ANSWER_RESULTS: dict[str, str] = {
    "session/request_permission": "RequestPermissionResponse",
    "elicitation/create": "CreateElicitationResponse",
}
_SERVE_PREFIX = "baton-serve-"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "off_schema_outbound: the test sends off-schema frames to the agent on purpose"
    )


def _answered_method(connection: Connection, request_id: object) -> str | None:
    task = getattr(connection, "_inbound", {}).get(request_id)
    name = task.get_name() if task is not None else ""
    return name[len(_SERVE_PREFIX) :] if name.startswith(_SERVE_PREFIX) else None


def _check(connection: Connection, message: dict[str, Any]) -> None:
    method = message.get("method")
    params = message.get("params")
    if isinstance(method, str):
        table = REQUEST_PARAMS if "id" in message else NOTIFICATION_PARAMS
        definition = table.get(method)
        if definition is None:
            return
        validate_stable(definition, params)
        validate_stable("ClientRequest" if "id" in message else "ClientNotification", message)
        if isinstance(params, dict) and "systemPrompt" in params:
            validate_in("unstable", definition, params)
        return
    if "result" in message:
        answered = _answered_method(connection, message.get("id"))
        definition = ANSWER_RESULTS.get(answered or "")
        if definition is not None:
            validate_stable(definition, message["result"])
    elif "error" in message:
        validate_stable("ClientResponse", message)


@pytest.fixture(autouse=True)
def outbound_schema_check(request: pytest.FixtureRequest) -> Iterator[list[str]]:
    """Validate every outbound message (see the module docstring); fail at teardown."""
    if request.node.get_closest_marker("off_schema_outbound") is not None:
        yield []
        return
    errors: list[str] = []
    original = Connection._write

    async def checked(self: Connection, message: dict[str, Any]) -> object:
        try:
            _check(self, message)
        except jsonschema.ValidationError as exc:
            errors.append(f"{message.get('method') or 'answer'}: {exc.message}")
        return await original(self, message)

    Connection._write = checked  # type: ignore[method-assign]
    try:
        yield errors
    finally:
        Connection._write = original  # type: ignore[method-assign]
    assert not errors, errors
