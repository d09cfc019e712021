"""`baton run --session NAME` through the data directory's running `baton serve`: the turn
runs in the service (its agent stays warm, its prompts queue in one place) and this process
prints the same events it would print for an in-process turn.

The prompt goes to ``POST /api/v1/sessions/{name}/prompt``; a queued prompt is followed
(``GET .../prompts/{id}``) until it is a run, then the run's event stream is read and each
event handed to the CLI's own sink, exactly the objects ``Runtime.run`` would have handed it
(the service-only ``permission_*`` and ``elicitation_*`` events are not printed). Under
the ``ask`` policy a question is put to this terminal when there is one, as in-process, and
can be answered in the inspector or through the API too: the first answer wins
(:mod:`baton.cli.remote_questions`). Without a terminal the prompt says so
(``callerAnswers: false``) and its event stream says it cannot answer (``?answers=none``):
nobody else following the run, the service answers at once "no user available", as an
in-process run does.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import quote

from baton.cli.remote_questions import QUESTION_EVENTS, RemoteQuestions
from baton.cli.service_link import ServiceClient
from baton.errors import ServiceUnreachable, SessionBusy
from baton.runtime.runtime import RunRequest, RunResult
from baton.runtime.turns.events import RunEvent, event_type

#: Seconds between two looks at a queued prompt.
QUEUE_POLL_SECONDS: Final = 0.1
#: Event types the service adds to a run's stream that `baton run` never prints.
SERVICE_ONLY_EVENTS: Final = frozenset(
    {
        "permission_request",
        "permission_closed",
        "elicitation_request",
        "elicitation_closed",
        "replay",
    }
)


def _prompt_body(request: RunRequest, caller_answers: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "prompt": request.prompt,
        "policy": request.policy,
        "callerAnswers": caller_answers,
    }
    if request.allow_unattended:
        body["allowUnattended"] = True
    if request.tools_file is not None:
        body["toolsFile"] = request.tools_file
    if request.budget.idle_seconds is not None:
        body["idleTimeout"] = request.budget.idle_seconds
    if request.budget.absolute is not None:
        body["timeout"] = request.budget.absolute
    if request.attachments:
        body["attachments"] = list(request.attachments)
    return body


def _run_id(
    client: ServiceClient,
    name: str,
    request: RunRequest,
    no_wait: bool,
    wait: float | None,
    caller_answers: bool,
) -> str:
    path = f"/api/v1/sessions/{quote(name, safe='')}"
    if no_wait and client.request("GET", path)["queue"]:
        raise SessionBusy(f"session {name} has a turn running in the service")
    ticket = client.request("POST", f"{path}/prompt", _prompt_body(request, caller_answers))
    deadline = None if wait is None else time.monotonic() + wait
    while ticket["runId"] is None:
        if ticket["state"] == "failed":
            error = ticket.get("error") or {}
            raise SessionBusy(f"{error.get('code')}: {error.get('message')}")
        if deadline is not None and time.monotonic() > deadline:
            raise SessionBusy(f"session {name}: still queued in the service after {wait:g}s")
        time.sleep(QUEUE_POLL_SECONDS)
        ticket = client.request("GET", f"{path}/prompts/{ticket['promptId']}")
    run_id: str = ticket["runId"]
    return run_id


def _follow(
    client: ServiceClient, run_id: str, answers: bool, deliver: Callable[[RunEvent], None]
) -> None:
    for sse in client.events(run_id, answers=answers):
        data = dict(sse.data)
        kind = event_type(data.pop("type", sse.event))
        if kind is None or (kind in SERVICE_ONLY_EVENTS and kind not in QUESTION_EVENTS):
            continue  # the service's own, or a type this Baton does not know
        deliver(RunEvent(kind, str(data.pop("runId", run_id)), data))


async def prompt_through_service(
    client: ServiceClient,
    name: str,
    request: RunRequest,
    *,
    no_wait: bool,
    wait_timeout: float | None,
    emit: Callable[[RunEvent], None],
    questions: RemoteQuestions,
) -> RunResult:
    """The session's next turn, run by the service; every event goes to ``emit`` in order,
    and its questions to ``questions`` (this terminal's prompts, or a line saying where to
    answer).

    Cancellation: the wait for events stops and any prompt on screen is withdrawn; the turn
    goes on in the service (cancel it with ``POST /api/v1/sessions/{name}/cancel``)."""
    loop = asyncio.get_running_loop()
    answers = questions.answers_here
    run_id = await asyncio.to_thread(_run_id, client, name, request, no_wait, wait_timeout, answers)
    queue: asyncio.Queue[RunEvent | None] = asyncio.Queue()

    def deliver(event: RunEvent) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, event)

    reader = loop.run_in_executor(None, _follow, client, run_id, answers, deliver)
    reader.add_done_callback(lambda _f: loop.call_soon_threadsafe(queue.put_nowait, None))
    text: list[str] = []
    permissions: list[dict[str, Any]] = []
    result: RunEvent | None = None
    try:
        result = await _consume(queue, questions, emit, text, permissions)
    finally:
        await questions.close()
    await reader  # the stream's own failure (the service went away), if any
    if result is None:
        raise ServiceUnreachable(f"the service's stream of run {run_id} ended before its result")
    return RunResult.from_event(result, text="".join(text), permissions=permissions)


async def _consume(
    queue: asyncio.Queue[RunEvent | None],
    questions: RemoteQuestions,
    emit: Callable[[RunEvent], None],
    text: list[str],
    permissions: list[dict[str, Any]],
) -> RunEvent | None:
    """Hand the stream's events on until it ends; the run's ``result`` event, if one came."""
    result: RunEvent | None = None
    while (event := await queue.get()) is not None:
        if event.type in QUESTION_EVENTS:
            questions.handle(event.type, event.run_id, event.data)
            continue
        if event.type == "text":
            text.append(str(event.data.get("text", "")))
        elif event.type == "permission":
            permissions.append(dict(event.data))
        elif event.type == "result":
            result = event
        emit(event)
    return result


def cancel_through_service(client: ServiceClient, name: str) -> None:
    """Ask the service to interrupt the session's running turn (Ctrl-C)."""
    client.request("POST", f"/api/v1/sessions/{quote(name, safe='')}/cancel")
