"""Permissions under ``--policy ask``: the pending requests and their answers."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import ApiRequestInvalid
from baton.service.bodies import json_object, optional_bool, optional_str
from baton.service.context import service_of


async def list_permissions(request: Request) -> Response:
    """``GET /api/v1/permissions?runId=ID``: pending requests, oldest first."""
    asker = service_of(request).asker
    run_id = request.query_params.get("runId")
    return JSONResponse({"permissions": [p.to_json() for p in asker.list(run_id)]})


async def answer_permission(request: Request) -> Response:
    """``POST /api/v1/permissions/{id}/answer`` with ``{"optionId": ID}`` or ``{"cancel": true}``."""
    asker = service_of(request).asker
    body = await json_object(request)
    option_id = optional_str(body, "optionId")
    cancel = optional_bool(body, "cancel")
    if (option_id is None) == (not cancel):
        raise ApiRequestInvalid('answer with exactly one of {"optionId": ID} and {"cancel": true}')
    pending = asker.answer(request.path_params["permission"], option_id)
    return JSONResponse(
        {
            "id": pending.id,
            "runId": pending.run_id,
            "outcome": "cancelled" if option_id is None else "selected",
            "optionId": option_id,
        }
    )


ROUTES: Final = [
    Route("/api/v1/permissions", list_permissions, methods=["GET"]),
    Route("/api/v1/permissions/{permission}/answer", answer_permission, methods=["POST"]),
]
