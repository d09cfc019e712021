"""Elicitations of runs under ``ask``: the pending questions and their answers."""

from __future__ import annotations

from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import ApiRequestInvalid
from baton.service.bodies import json_object, required_str
from baton.service.context import service_of
from baton.service.eliciting import require_action


async def list_elicitations(request: Request) -> Response:
    """``GET /api/v1/elicitations?runId=ID``: pending questions, oldest first."""
    elicitor = service_of(request).elicitor
    run_id = request.query_params.get("runId")
    return JSONResponse({"elicitations": [p.to_json() for p in elicitor.list(run_id)]})


async def answer_elicitation(request: Request) -> Response:
    """``POST /api/v1/elicitations/{id}/answer`` with ``{"action": "accept"|"decline"|"cancel",
    "content": {...}}`` (content: a form's answer, with accept only)."""
    elicitor = service_of(request).elicitor
    body = await json_object(request)
    action = required_str(body, "action")
    require_action(action)  # a malformed body is refused before the question is looked up
    raw = body.get("content")
    if raw is not None and not isinstance(raw, dict):
        raise ApiRequestInvalid("content must be an object of the form's fields")
    content: dict[str, Any] | None = raw
    pending = elicitor.answer(request.path_params["elicitation"], action, content)
    return JSONResponse({"id": pending.id, "runId": pending.run_id, "action": action})


ROUTES: Final = [
    Route("/api/v1/elicitations", list_elicitations, methods=["GET"]),
    Route("/api/v1/elicitations/{elicitation}/answer", answer_elicitation, methods=["POST"]),
]
