"""Runs: list with filters, start, show, the live event stream, cancel.

The list and the record are the CLI's JSON contract (`baton runs --json`, `baton show
--json`: the same views, camelCase, ``schemaVersion``); the events are the ones `baton run
--json` prints, each with an SSE id.
"""

from __future__ import annotations

from typing import Any, Final, get_args

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import ApiRequestInvalid, UnsupportedExecutionSetting
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.runtime import RunRequest
from baton.runtime.workspaces.tracking import FULL_ACCESS, split_workspace_flag
from baton.service.bodies import (
    json_object,
    optional_bool,
    optional_seconds,
    optional_str,
    query_int,
    required_str,
    string_list,
    string_map,
)
from baton.service.context import Service, check_agent_command, service_of
from baton.service.feeds import sse_frame
from baton.service.limits import MAX_LIST_ROWS
from baton.service.sse import event_stream
from baton.store import Store
from baton.store.models import RUN_STATUSES
from baton.views.contract import document
from baton.views.run_ids import resolve_run
from baton.views.runs import run_rows, run_view
from baton.wire.budget import TurnBudget

#: The event type of the store's record of a run, sent when a stream cannot give the events
#: a client missed one by one.
REPLAY_EVENT: Final = "replay"
#: Rows a listing returns when the client names no limit.
DEFAULT_LIST_ROWS: Final = 100


def store_of(service: Service) -> Store:
    """The runtime's store (open for the service's whole life)."""
    assert service.runtime.store is not None
    return service.runtime.store


async def list_runs(request: Request) -> Response:
    """``GET /api/v1/runs?status=S&sessionId=ID&agent=P&cwd=DIR&limit=N``: runs, newest
    first; ``status`` may repeat; ``agent`` is a profile id (``custom`` for ad-hoc commands)."""
    store = store_of(service_of(request))
    status = request.query_params.getlist("status")
    wanted = {s.upper() for s in status}
    unknown = wanted - set(RUN_STATUSES)
    if unknown:
        raise ApiRequestInvalid(f"unknown status {', '.join(sorted(unknown))}")
    limit = query_int(request, "limit", DEFAULT_LIST_ROWS, low=1, high=MAX_LIST_ROWS)
    agent = request.query_params.get("agent") or None
    cwd = request.query_params.get("cwd") or None
    records = store.list_runs(
        status=sorted(wanted) or None,  # type: ignore[arg-type]
        session_id=request.query_params.get("sessionId") or None,
        agent=agent,
        cwd=cwd,
        limit=limit,
    )
    return JSONResponse({"runs": run_rows(store, records)})


def run_request(body: dict[str, Any], service: Service) -> RunRequest:
    """A :class:`RunRequest` from a ``POST /api/v1/runs`` body (fields in camelCase)."""
    agent = optional_str(body, "agent")
    command = optional_str(body, "agentCommand")
    if (agent is None) == (command is None):
        raise ApiRequestInvalid("name exactly one of agent (a profile) and agentCommand")
    policy = optional_str(body, "policy") or service.settings.policy
    if policy not in get_args(PolicyName):
        raise ApiRequestInvalid(f"policy must be one of {', '.join(get_args(PolicyName))}")
    cwd = optional_str(body, "cwd")
    if cwd is not None and not cwd.startswith("/"):
        raise ApiRequestInvalid("cwd must be an absolute path")
    return RunRequest(
        prompt=required_str(body, "prompt"),
        agent=agent,
        agent_command=command,
        env_keys=tuple(string_list(body, "envKeys")),
        cwd=cwd,
        policy=policy,  # type: ignore[arg-type]
        allow_unattended=optional_bool(body, "allowUnattended"),
        mode=optional_str(body, "mode"),
        model=optional_str(body, "model"),
        effort=optional_str(body, "effort"),
        config=string_map(body, "config"),
        tools_file=optional_str(body, "toolsFile"),
        budget=TurnBudget(
            idle=optional_seconds(body, "idleTimeout"), absolute=optional_seconds(body, "timeout")
        ),
        attachments=tuple(string_list(body, "attachments")),
        **workspace_fields(body),
    )


def workspace_fields(body: dict[str, Any]) -> dict[str, Any]:
    """The workspace fields of a run's or a session's creation: ``workspace`` (``worktree``,
    ``none`` or an absolute directory; a sandbox setting is refused), ``base``,
    ``requireClean``."""
    workspace = optional_str(body, "workspace")
    asked, execution = split_workspace_flag(workspace)
    if execution != FULL_ACCESS:
        raise UnsupportedExecutionSetting(
            "workspace",
            execution,
            f"workspace={execution!r}: ACP attests no sandbox for the "
            "agent process, so Baton refuses a restricted or read-only workspace",
        )
    if asked not in (None, "worktree") and not str(asked).startswith("/"):
        raise ApiRequestInvalid("workspace must be worktree, none or an absolute directory")
    return {
        "workspace": asked,
        "base": optional_str(body, "base"),
        "require_clean": optional_bool(body, "requireClean"),
    }


async def start_run(request: Request) -> Response:
    """``POST /api/v1/runs``: start a run; 202 with its id at once."""
    service = service_of(request)
    body = await json_object(request)
    check_agent_command(request, optional_str(body, "agentCommand"))
    run_id = await service.launcher.start(run_request(body, service))
    return JSONResponse(
        {"runId": run_id, "events": f"/api/v1/runs/{run_id}/events"}, status_code=202
    )


async def show_run(request: Request) -> Response:
    """``GET /api/v1/runs/{run}``: the run's record (`baton show --json`)."""
    service = service_of(request)
    store = store_of(service)
    view = run_view(store, request.path_params["run"])
    return JSONResponse(document(view))


def _last_event_id(request: Request) -> int:
    text = request.headers.get("last-event-id") or request.query_params.get("lastEventId")
    if text is None or text == "":
        return 0
    if not text.isdigit():
        raise ApiRequestInvalid("Last-Event-ID must be an event id this stream sent")
    return int(text)


async def run_events(request: Request) -> Response:
    """``GET /api/v1/runs/{run}/events``: the run's events as Server-Sent Events."""
    service = service_of(request)
    store = store_of(service)
    record = resolve_run(store, request.path_params["run"])
    after = _last_event_id(request)
    feed = service.feeds.get(record.id)
    first: list[bytes] = []
    if feed is None:
        first.append(sse_frame(_replay(store, record.id), event=REPLAY_EVENT))
        return event_stream(first, None, None)
    # ``?answers=none``: this client (a CLI without a terminal) cannot answer the run's
    # questions, so it does not count as someone who could (docs/api.md).
    answers = request.query_params.get("answers") != "none"
    backlog, gap, subscription = feed.subscribe(after, answers=answers)
    if gap:
        first.append(sse_frame(_replay(store, record.id), event=REPLAY_EVENT))
    first.extend(backlog)
    return event_stream(first, feed, subscription)


def _replay(store: Store, run_id: str) -> dict[str, Any]:
    return {"type": REPLAY_EVENT, "runId": run_id, "run": document(run_view(store, run_id))}


async def cancel_run(request: Request) -> Response:
    """``POST /api/v1/runs/{run}/cancel``: interrupt the run's turn (202)."""
    service = service_of(request)
    record = resolve_run(store_of(service), request.path_params["run"])
    service.launcher.cancel(record.id)
    return JSONResponse({"runId": record.id, "cancelling": True}, status_code=202)


ROUTES: Final = [
    Route("/api/v1/runs", list_runs, methods=["GET"]),
    Route("/api/v1/runs", start_run, methods=["POST"]),
    Route("/api/v1/runs/{run}", show_run, methods=["GET"]),
    Route("/api/v1/runs/{run}/events", run_events, methods=["GET"]),
    Route("/api/v1/runs/{run}/cancel", cancel_run, methods=["POST"]),
]
