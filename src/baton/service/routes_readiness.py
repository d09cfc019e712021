"""Readiness: `baton doctor`'s results per profile, and a live check on request."""

from __future__ import annotations

from typing import Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.runtime.agents.config_file import load_config
from baton.runtime.agents.live_check import LIVE_ABSOLUTE_SECONDS, LIVE_IDLE_SECONDS
from baton.service.bodies import json_object, optional_seconds
from baton.service.context import service_of
from baton.views.readiness import check_profiles, select_profiles
from baton.wire.budget import TurnBudget


async def readiness(request: Request) -> Response:
    """``GET /api/v1/readiness?profile=P``: each profile's (or the named ones') readiness:
    state, checks, stable codes, next action, the selected executable and launch form, the
    rejected discovery probes (the records of `baton doctor --json`)."""
    service = service_of(request)
    config = load_config(None, service.runtime.environ)
    profiles = select_profiles(config, request.query_params.getlist("profile"))
    results = await check_profiles(profiles, config, parent_env=service.runtime.environ)
    return JSONResponse({"profiles": [r.to_json() for r in results]})


async def live_readiness(request: Request) -> Response:
    """``POST /api/v1/readiness/{profile}/live`` (``{"timeout": SECONDS}`` optional): start
    the agent in a temporary directory and create a session (`baton doctor P --live`)."""
    service = service_of(request)
    body = await json_object(request)
    limit = optional_seconds(body, "timeout") or LIVE_ABSOLUTE_SECONDS
    config = load_config(None, service.runtime.environ)
    profiles = select_profiles(config, [request.path_params["profile"]])
    budget = TurnBudget(idle=min(LIVE_IDLE_SECONDS, limit), absolute=limit)
    [result] = await check_profiles(
        profiles, config, parent_env=service.runtime.environ, live=True, budget=budget
    )
    return JSONResponse(result.to_json())


ROUTES: Final = [
    Route("/api/v1/readiness", readiness, methods=["GET"]),
    Route("/api/v1/readiness/{profile}/live", live_readiness, methods=["POST"]),
]
