"""What is known of a RECOVERY_REQUIRED run (`baton recover RUN --json`,
``GET /api/v1/recovery``), and the run that attaches to its provider session to look or to
send a new prompt; both surfaces record the link between the two runs the same way.

Nothing here resubmits the ambiguous prompt: ACP stable v1 has no way to ask an agent what
became of it."""

from __future__ import annotations

from collections import deque
from typing import Any, Final

import orjson

from baton.errors import AgentRequired, BatonError, NoProviderSession
from baton.runtime.agents.launch import CUSTOM_PROFILE_ID
from baton.runtime.lanes.recorder import LAUNCH_KEY
from baton.runtime.runtime import RunRequest
from baton.store import Store
from baton.store.models import FINAL_RUN_STATUSES
from baton.views.contract import plain
from baton.views.runs import run_view
from baton.views.turn_journal import add_journal_items

#: Journal entries shown from the end of the run's agent process journal.
RECOVER_TAIL_RECORDS: Final = 20
#: Journal records of the agent process read at most for one run's tail (a long-lived warm
#: process holds many runs' records; past this the tail is what was read).
MAX_TAIL_SCAN_RECORDS: Final = 200_000
#: The observation payload key linking a recovery run and the run it recovers.
RECOVERY_KEY: Final = "recovery"


def recovery_view(store: Store, journal: Any, run_id: str) -> dict[str, Any]:
    """`baton recover RUN --json`'s object: `show`'s view plus the journal tail, the session,
    the text streamed before the outcome was lost, and whether it is recoverable. For a turn
    that did not end in order, the plan and tool calls the journal holds complete what the
    store has (:func:`baton.views.turn_journal.add_journal_items`)."""
    view = run_view(store, run_id)
    session = store.find_session(view["session_id"]) if view.get("session_id") else None
    view["session"] = plain(session) if session is not None else None
    view["journal_tail"] = run_journal_tail(
        store, journal, view, session.provider_session_id if session is not None else None
    )
    view["streamed_text"] = "".join(
        str(item["content"].get("text", ""))
        for item in view["items"]
        if item["kind"] == "text" and isinstance(item["content"], dict)
    )
    view["journal_incomplete"], view["journal_incomplete_reason"] = False, None
    if view["status"] not in FINAL_RUN_STATUSES and journal is not None:
        # An owner that died mid-turn wrote little or none of its output: the journal has it
        # (and the view says when the journal could not be read to the prompt's answer).
        add_journal_items(view, journal)
    view["recoverable"] = view["status"] == "RECOVERY_REQUIRED"
    # The named session this run was a turn of: its agent is the run's (issue 30, item 8).
    conversation = store.conversation_of_run(view["id"])
    view["conversation"] = (
        None
        if conversation is None
        else {
            "name": conversation.name,
            "profile": conversation.profile,
            "agentCommand": conversation.agent_command,
            "envKeys": list(conversation.env_keys),
        }
    )
    return view


def _sequence(ref: Any) -> int | None:
    value = ref.get("sequence") if isinstance(ref, dict) else None
    return value if isinstance(value, int) else None


def run_journal_tail(
    store: Store, journal: Any, view: dict[str, Any], provider_session_id: str | None
) -> list[dict[str, Any]]:
    """The last :data:`RECOVER_TAIL_RECORDS` journal records of this run only, from the
    journal of its agent process (which a warm process shares with the turns before it):
    after the answer to the last earlier run's prompt (its setup included), up to its own
    prompt's answer (or the journal's end), leaving out messages of another provider
    session."""
    server = view.get("server_instance_id")
    if not server or journal is None:
        return []
    earlier = {
        run.prompt_ref.sequence
        for run in store.runs_for_server(server)
        if run.id != view["id"] and run.created_at <= view["created_at"] and run.prompt_ref
    }
    own = _sequence(view.get("prompt_ref"))
    # The request id of each prompt seen so far -> whether it is this run's.
    prompts: dict[Any, bool] = {}
    after = -1  # the last record of an earlier turn (its prompt's answer)
    kept: deque[dict[str, Any]] = deque(maxlen=RECOVER_TAIL_RECORDS)
    try:
        for read, record in enumerate(journal.records(server)):
            if read >= MAX_TAIL_SCAN_RECORDS:
                break
            metadata = record.metadata
            if record.sequence in earlier or record.sequence == own:
                prompts[metadata.id] = record.sequence == own
            answered = (
                record.direction == "inbound" and metadata.method is None and metadata.id in prompts
            )
            if answered and not prompts[metadata.id]:
                after = record.sequence
                kept.clear()
                continue
            if _other_session(record.raw, provider_session_id):
                continue
            kept.append(
                {
                    "sequence": record.sequence,
                    "direction": record.direction,
                    "kind": metadata.kind,
                    "method": metadata.method,
                    "id": metadata.id,
                }
            )
            if answered:
                break  # this run's prompt was answered: its turn ended here
    except (BatonError, OSError):
        pass  # a damaged or pruned journal: what was read so far is the tail
    return [entry for entry in kept if entry["sequence"] > after]


def _other_session(raw: str, provider_session_id: str | None) -> bool:
    """Whether a recorded message names a provider session other than the run's."""
    if provider_session_id is None or "sessionId" not in raw:
        return False
    try:
        message = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    params = message.get("params") if isinstance(message, dict) else None
    named = params.get("sessionId") if isinstance(params, dict) else None
    return isinstance(named, str) and named != provider_session_id


def _recorded_launch(known: dict[str, Any]) -> dict[str, Any] | None:
    for observation in known["observations"]:
        payload = observation.get("payload")
        if isinstance(payload, dict) and isinstance(payload.get(LAUNCH_KEY), dict):
            launch: dict[str, Any] = payload[LAUNCH_KEY]
            return launch
    return None


def _session_launch(conversation: dict[str, Any]) -> dict[str, Any] | None:
    """The launch of the named session a run belongs to (its ad-hoc command), or None."""
    command = conversation.get("agentCommand")
    if not command:
        return None
    if isinstance(command, list):
        import shlex

        command = shlex.join(str(part) for part in command)
    return {"command": command, "envKeys": conversation.get("envKeys") or []}


def attach_request(
    known: dict[str, Any],
    *,
    agent: str | None = None,
    agent_command: str | None = None,
    new_prompt: str | None = None,
) -> RunRequest:
    """The run that attaches to the session of the run ``known`` describes (its
    :func:`recovery_view`): to look (no prompt is sent), or with a new prompt. The agent is
    the one named, else the recorded profile or ad-hoc command, else the agent of the named
    session the run was a turn of."""
    run_id = known["id"]
    session = known.get("session")
    if session is None or not session.get("provider_session_id"):
        raise NoProviderSession(f"run {run_id} never had a provider session to attach")
    profile = (known.get("server_instance") or {}).get("profile")
    agent, command = agent, agent_command
    env_keys: tuple[str, ...] = ()
    conversation = known.get("conversation") or {}
    if command is None and agent is None and profile is None:
        profile = conversation.get("profile")  # no agent process recorded: the session's
    if command is None and agent is None:
        if profile in (None, CUSTOM_PROFILE_ID):
            launch = _recorded_launch(known) or _session_launch(conversation)
            if launch is None or not launch.get("command"):
                raise AgentRequired(
                    f"run {run_id} used an ad-hoc agent whose command was not recorded; "
                    "pass --agent-command"
                )
            command = str(launch["command"])
            env_keys = tuple(str(k) for k in launch.get("envKeys") or ())
        else:
            agent = profile
    return RunRequest(
        prompt=new_prompt or f"(baton recover {run_id} --attach: no prompt is sent)",
        agent=agent if command is None else None,
        agent_command=command,
        env_keys=env_keys,
        cwd=session["cwd"],
        attach_session=session["provider_session_id"],
        inspect_only=new_prompt is None,
    )


async def note_recovery(store: Store, original: str, recovering: str, action: str) -> None:
    """Record on both runs that ``recovering`` attached to ``original``'s session.

    Cancellation: two writes; cancelled between them, only the original names its recovery
    run (the link is shown from one side)."""
    await store.record_observation(
        "BATON_RESOLUTION", {RECOVERY_KEY: {"action": action, "runId": recovering}}, run_id=original
    )
    await store.record_observation(
        "BATON_RESOLUTION", {RECOVERY_KEY: {"action": action, "of": original}}, run_id=recovering
    )
