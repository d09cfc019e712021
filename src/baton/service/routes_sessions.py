"""Sessions (conversations, issue 17) through the API: create, list, show, history, prompt
(the run id at once, or the prompt's place in the session's FIFO queue), cancel, steer, fork,
close, and
the session controls (``{controlId, value, revision}`` only). Nothing else reaches the agent.

Each session's prompts wait in arrival order behind its running turn; at most
:data:`~baton.runtime.conversations.MAX_WAITING_PROMPTS` wait (then 429 SESSION_QUEUE_FULL).
A prompt that can start now answers with its run id as soon as the run exists; a queued one
answers with a ``promptId`` and its ``position`` (how many prompts are ahead of it), and
``GET /api/v1/sessions/{name}/prompts/{promptId}`` tells when it became a run.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Final, get_args

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from baton.errors import (
    ApiRequestInvalid,
    BatonError,
    PromptNotFound,
    RunNotActive,
    ServiceStopping,
    SessionQueueFull,
)
from baton.runtime.conversations import (
    MAX_WAITING_PROMPTS,
    Conversations,
    NewConversation,
    PromptOptions,
)
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.turns.controls import refuse_while
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
from baton.service.launcher import Launch
from baton.service.routes_runs import store_of, workspace_fields
from baton.store.owner import current_host
from baton.views.runs import run_row
from baton.views.sessions import queued_session_rows, record_json
from baton.wire.budget import TurnBudget

#: Finished prompts remembered per session for ``GET .../prompts/{id}`` (the newest).
REMEMBERED_PROMPTS: Final = 64
#: The body of a control change: these fields and no other (no raw ACP).
CONTROL_FIELDS: Final = frozenset({"controlId", "value", "revision"})
#: Turns one history answer holds at most.
MAX_HISTORY_TURNS: Final = 1000


@dataclass
class PromptTicket:
    """One prompt sent to a session through the API."""

    id: str
    launch: Launch

    def to_json(self, position: int) -> dict[str, Any]:
        """Where the prompt is: queued (``position`` ahead of it), running, or ended."""
        run_id = self.launch.created.result() if self.launch.created.done() else None
        error = None
        task = self.launch.task
        if task.done() and not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if isinstance(exc, BatonError):
                error = {"code": exc.code, "message": exc.message, "fault": exc.fault}
        state = "queued" if run_id is None else "running"
        if task.done():
            state = "failed" if run_id is None else "ended"
        return {
            "promptId": self.id,
            "state": state,
            "position": position,
            "runId": run_id,
            "error": error,
        }


class SessionDesk:
    """The service's sessions: one Conversations over the runtime, and each session's tickets."""

    def __init__(self, service: Service) -> None:
        self.conversations = Conversations(service.runtime)
        self.tickets: dict[str, OrderedDict[str, PromptTicket]] = {}

    def ahead(self, name: str) -> list[PromptTicket]:
        """The session's prompts still waiting or running, oldest first."""
        return [t for t in self.tickets.get(name, {}).values() if not t.launch.task.done()]

    def remember(self, name: str, ticket: PromptTicket) -> None:
        """Keep ``ticket``, forgetting the oldest finished ones past the bound."""
        line = self.tickets.setdefault(name, OrderedDict())
        line[ticket.id] = ticket
        finished = [key for key, t in line.items() if t.launch.task.done()]
        for key in finished[: max(0, len(finished) - REMEMBERED_PROMPTS)]:
            del line[key]

    def position(self, name: str, ticket: PromptTicket) -> int:
        """How many of the session's prompts are ahead of ``ticket`` (0: it runs)."""
        if ticket.launch.task.done() or ticket.launch.created.done():
            return 0
        waiting = self.ahead(name)
        return waiting.index(ticket) if ticket in waiting else 0


def desk_of(request: Request) -> SessionDesk:
    """The service's session desk (made on first use)."""
    service = service_of(request)
    desk: SessionDesk | None = getattr(request.app.state, "sessions", None)
    if desk is None:
        desk = SessionDesk(service)
        request.app.state.sessions = desk
    return desk


async def create_session(request: Request) -> Response:
    """``POST /api/v1/sessions``: record a session and create its provider session (201)."""
    service = service_of(request)
    body = await json_object(request)
    agent = optional_str(body, "agent")
    command = optional_str(body, "agentCommand")
    if (agent is None) == (command is None):
        raise ApiRequestInvalid("name exactly one of agent (a profile) and agentCommand")
    check_agent_command(request, command)
    cwd = optional_str(body, "cwd")
    if cwd is not None and not cwd.startswith("/"):
        raise ApiRequestInvalid("cwd must be an absolute path")
    if service.launcher.stopping:
        raise ServiceStopping("the service is stopping and accepts no new session")
    record = await desk_of(request).conversations.create(
        NewConversation(
            name=optional_str(body, "name"),
            agent=agent,
            agent_command=command,
            env_keys=tuple(string_list(body, "envKeys")),
            cwd=cwd,
            mode=optional_str(body, "mode"),
            model=optional_str(body, "model"),
            effort=optional_str(body, "effort"),
            config=string_map(body, "config"),
            allow_unattended=optional_bool(body, "allowUnattended"),
            tools_file=optional_str(body, "toolsFile"),
            **workspace_fields(body),
        )
    )
    return JSONResponse(record_json(record, 0, host=current_host()), status_code=201)


async def list_sessions(request: Request) -> Response:
    """``GET /api/v1/sessions?status=S&agent=P``: sessions, most recently used first."""
    desk = desk_of(request)
    status = request.query_params.get("status")
    records = await desk.conversations.list(
        status=status.upper() if status else None,  # type: ignore[arg-type]
        agent=request.query_params.get("agent") or None,
    )
    hosts = await desk.conversations.holding_hosts()
    return JSONResponse(
        {
            "sessions": [record_json(r, host=hosts.get(r.name)) for r in records],
            # The sessions of queued turns (`baton submit --session`), pinned to a worker.
            "queued": queued_session_rows(store_of(service_of(request))),
        }
    )


async def show_session(request: Request) -> Response:
    """``GET /api/v1/sessions/{name}``: the record, its runs, the last known native state,
    whether its provider session is attached here, and its prompt queue."""
    service = service_of(request)
    desk = desk_of(request)
    name = request.path_params["name"]
    view = await desk.conversations.show(name)
    store = store_of(service)
    return JSONResponse(
        {
            "session": record_json(view.record, host=await desk.conversations.holding_host(name)),
            "runs": [run_row(store, run) for run in view.runs],
            "nativeState": view.native_state,
            "attachedHere": view.attached_here,
            "queue": [ticket.to_json(desk.position(name, ticket)) for ticket in desk.ahead(name)],
            "schemaVersion": 1,
        }
    )


async def session_history(request: Request) -> Response:
    """``GET /api/v1/sessions/{name}/history?limit=N``: its turns, oldest first."""
    desk = desk_of(request)
    limit = query_int(request, "limit", MAX_HISTORY_TURNS, low=1, high=MAX_HISTORY_TURNS)
    turns = await desk.conversations.history(request.path_params["name"], limit)
    return JSONResponse({"turns": [turn.to_json() for turn in turns]})


async def prompt_session(request: Request) -> Response:
    """``POST /api/v1/sessions/{name}/prompt``: the session's next turn (202)."""
    body = await json_object(request)
    text = required_str(body, "prompt")
    options = _prompt_options(request, body)
    answer = await _queue_prompt(request, options, text, _caller_answers(body))
    return JSONResponse(answer, status_code=202)


async def steer_session(request: Request) -> Response:
    """``POST /api/v1/sessions/{name}/steer``: add ``text`` to the session's running turn
    (``_session/steering``, where the agent advertises it): 200 with the agent's outcome; else
    the text is queued as the session's next turn (202, ``outcome: "queued"``, the reason and
    the prompt's ticket). Never a cancel and a new prompt."""
    desk = desk_of(request)
    name = request.path_params["name"]
    body = await json_object(request)
    text = required_str(body, "text")
    options = _prompt_options(request, body)  # the whole body is checked before anything
    caller_answers = _caller_answers(body)
    steered = await desk.conversations.steer(name, text)
    if not steered.queued:
        return JSONResponse({"session": name, **steered.to_json()})
    answer = await _queue_prompt(request, options, text, caller_answers)
    return JSONResponse({"session": name, **steered.to_json(), "prompt": answer}, status_code=202)


def _prompt_options(request: Request, body: dict[str, Any]) -> PromptOptions:
    """The options of a session prompt, read from the body (API_REQUEST_INVALID if bad)."""
    service = service_of(request)
    policy = optional_str(body, "policy") or service.settings.policy
    if policy not in get_args(PolicyName):
        raise ApiRequestInvalid(f"policy must be one of {', '.join(get_args(PolicyName))}")
    return PromptOptions(
        policy=policy,  # type: ignore[arg-type]
        allow_unattended=optional_bool(body, "allowUnattended"),
        tools_file=optional_str(body, "toolsFile"),
        budget=TurnBudget(
            idle=optional_seconds(body, "idleTimeout"), absolute=optional_seconds(body, "timeout")
        ),
        attachments=tuple(string_list(body, "attachments")),
        wait=True,
        wait_timeout=None,
    )


async def _queue_prompt(
    request: Request, options: PromptOptions, text: str, caller_answers: bool | None = None
) -> dict[str, Any]:
    """Queue ``text`` as the session's next turn with ``options``; the ticket's view.
    ``caller_answers`` is the body's ``callerAnswers`` (None: not said)."""
    service = service_of(request)
    desk = desk_of(request)
    name = request.path_params["name"]
    await desk.conversations.get(name)  # SESSION_NOT_FOUND before anything queues
    await desk.conversations.refuse_other_host(name)  # and SESSION_ON_OTHER_HOST
    ahead = len(desk.ahead(name))
    if ahead > MAX_WAITING_PROMPTS:
        raise SessionQueueFull(
            f"session {name}: {ahead - 1} prompts already wait behind its running turn"
        )
    conversations = desk.conversations
    on_run = None
    if caller_answers is not None:
        answers = caller_answers

        def on_run(run_id: str) -> None:
            # Before anything of the turn happens: its questions go where its sender said.
            service.callers.record(run_id, answers)

    launch = service.launcher.start_session_prompt(
        lambda on_event: conversations.start(name, text, options, on_event=on_event, on_run=on_run)
    )
    ticket = PromptTicket("prompt-" + secrets.token_hex(6), launch)
    desk.remember(name, ticket)
    if ahead == 0:
        await service.launcher.started(launch)  # refused before a run: its own code
    answer = ticket.to_json(ahead if not launch.created.done() else 0)
    answer["events"] = f"/api/v1/runs/{answer['runId']}/events" if answer["runId"] else None
    return answer


def _caller_answers(body: dict[str, Any]) -> bool | None:
    """The body's ``callerAnswers`` (None when absent; API_REQUEST_INVALID if not a boolean)."""
    if "callerAnswers" not in body:
        return None
    return optional_bool(body, "callerAnswers")


async def prompt_status(request: Request) -> Response:
    """``GET /api/v1/sessions/{name}/prompts/{prompt}``: where a prompt is now."""
    desk = desk_of(request)
    name = request.path_params["name"]
    ticket = desk.tickets.get(name, OrderedDict()).get(request.path_params["prompt"])
    if ticket is None:
        raise PromptNotFound(f"session {name} has no prompt {request.path_params['prompt']!r}")
    return JSONResponse(ticket.to_json(desk.position(name, ticket)))


async def cancel_session(request: Request) -> Response:
    """``POST /api/v1/sessions/{name}/cancel``: interrupt the session's running turn (202)."""
    desk = desk_of(request)
    name = request.path_params["name"]
    await desk.conversations.get(name)
    if not desk.conversations.cancel(name):
        raise RunNotActive(f"session {name} has no turn running in this service")
    return JSONResponse({"session": name, "cancelling": True}, status_code=202)


async def fork_session(request: Request) -> Response:
    """``POST /api/v1/sessions/{name}/fork`` ``{name, atTurn?}``: a new session holding the
    session's context (the agent's ``session/fork``, unstable ACP; `baton session fork`):
    201 with the fork's record. 422 SESSION_FORK_NOT_ADVERTISED where the agent does not
    advertise it, SESSION_FORK_AT_TURN_UNSUPPORTED for ``atTurn`` without Baton's extension."""
    service = service_of(request)
    body = await json_object(request)
    new_name = required_str(body, "name")
    at_turn = body.get("atTurn")
    if at_turn is not None and (
        isinstance(at_turn, bool) or not isinstance(at_turn, int) or at_turn < 1
    ):
        raise ApiRequestInvalid("atTurn must be a positive whole number of turns")
    if service.launcher.stopping:
        raise ServiceStopping("the service is stopping and accepts no new session")
    conversations = desk_of(request).conversations
    record = await conversations.fork(request.path_params["name"], new_name, at_turn=at_turn)
    return JSONResponse(record_json(record, 0, host=current_host()), status_code=201)


async def close_session(request: Request) -> Response:
    """``POST /api/v1/sessions/{name}/close``: close it (session/close when advertised)."""
    conversations = desk_of(request).conversations
    record = await conversations.close(request.path_params["name"])
    return JSONResponse(record_json(record, host=await conversations.holding_host(record.name)))


async def get_controls(request: Request) -> Response:
    """``GET /api/v1/sessions/{name}/controls``: the safe controls with their revision."""
    desk = desk_of(request)
    name = request.path_params["name"]
    await desk.conversations.get(name)
    return JSONResponse(desk.conversations.controls(name).to_json())


async def set_control(request: Request) -> Response:
    """``POST /api/v1/sessions/{name}/controls`` with ``{controlId, value, revision}``: the
    new controls; 409 for a stale revision or while a turn runs or recovery is required,
    422 for a wrong type or a choice the provider did not advertise."""
    desk = desk_of(request)
    name = request.path_params["name"]
    body = await json_object(request)
    if set(body) != CONTROL_FIELDS:
        raise ApiRequestInvalid("send exactly {controlId, value, revision}")
    for field in ("controlId", "revision"):
        if not isinstance(body[field], str):
            raise ApiRequestInvalid(f"{field} must be a string")
    record = await desk.conversations.get(name)
    if record.status == "ACTIVE" or desk.ahead(name):
        refuse_while("RUNNING", str(body["controlId"]))
    refuse_while(
        "RECOVERY_REQUIRED" if record.status == "RECOVERY_REQUIRED" else None,
        str(body["controlId"]),
    )
    controls = await desk.conversations.apply_control(
        name, body["controlId"], body["value"], body["revision"]
    )
    return JSONResponse(controls.to_json())


ROUTES: Final = [
    Route("/api/v1/sessions", list_sessions, methods=["GET"]),
    Route("/api/v1/sessions", create_session, methods=["POST"]),
    Route("/api/v1/sessions/{name}", show_session, methods=["GET"]),
    Route("/api/v1/sessions/{name}/history", session_history, methods=["GET"]),
    Route("/api/v1/sessions/{name}/prompt", prompt_session, methods=["POST"]),
    Route("/api/v1/sessions/{name}/prompts/{prompt}", prompt_status, methods=["GET"]),
    Route("/api/v1/sessions/{name}/cancel", cancel_session, methods=["POST"]),
    Route("/api/v1/sessions/{name}/steer", steer_session, methods=["POST"]),
    Route("/api/v1/sessions/{name}/fork", fork_session, methods=["POST"]),
    Route("/api/v1/sessions/{name}/close", close_session, methods=["POST"]),
    Route("/api/v1/sessions/{name}/controls", get_controls, methods=["GET"]),
    Route("/api/v1/sessions/{name}/controls", set_control, methods=["POST"]),
]
