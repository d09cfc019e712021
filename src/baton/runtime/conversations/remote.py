"""The agent's own sessions through ``session/list`` (`baton sessions --remote`), each marked
with the name of the conversation Baton knows it as. This starts the agent (listing needs a
process); it never attaches, loads or changes a session."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import UsageError
from baton.runtime.runtime import RunRequest, Runtime
from baton.store import Store

#: Pages of ``session/list`` read at most: an agent with a huge history (or a cursor that never
#: ends) cannot keep the command running; the listing says it was cut.
MAX_REMOTE_PAGES: Final = 20
#: Sessions kept at most across those pages.
MAX_REMOTE_SESSIONS: Final = 1000


@dataclass(frozen=True, slots=True)
class RemoteSession:
    """One session the agent reported, and the conversation Baton knows it as (or None)."""

    session_id: str
    cwd: str
    title: str | None
    updated_at: str | None
    known_as: str | None

    def to_json(self) -> dict[str, Any]:
        """The entry in the CLI's JSON contract (camelCase)."""
        return {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "updatedAt": self.updated_at,
            "knownAs": self.known_as,
        }


@dataclass(frozen=True, slots=True)
class RemoteListing:
    """What ``session/list`` returned, and whether a bound cut it."""

    sessions: list[RemoteSession]
    truncated: bool


async def list_remote_sessions(
    runtime: Runtime,
    store: Store,
    *,
    agent: str | None = None,
    agent_command: str | Sequence[str] | None = None,
    env_keys: Sequence[str] = (),
    cwd: str | None = None,
) -> RemoteListing:
    """The agent's sessions (of ``cwd`` when given), page by page up to the bounds.
    CAPABILITY_NOT_ADVERTISED when the agent does not advertise ``sessionCapabilities.list``.

    Cancellation-safe: it only reads; an outstanding ``session/list`` is abandoned with the
    fixed request limit's rules."""
    request = RunRequest(prompt="", agent=agent, agent_command=agent_command, env_keys=env_keys)
    spec = await runtime.resolve(request)
    client = await runtime.agent_client(request)
    known = {
        c.provider_session_id: c.name
        for c in store.list_conversations(profile=spec.profile_id)
        if c.provider_session_id is not None
    }
    found: list[RemoteSession] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _page in range(MAX_REMOTE_PAGES):
        page = await client.list_sessions(cwd=cwd, cursor=cursor)
        for info in page.sessions:
            if len(found) >= MAX_REMOTE_SESSIONS:
                return RemoteListing(found, True)
            found.append(
                RemoteSession(
                    info.session_id,
                    info.cwd,
                    info.title,
                    info.updated_at,
                    known.get(info.session_id),
                )
            )
        cursor = page.next_cursor
        if cursor is None:
            return RemoteListing(found, False)
        if cursor in seen:  # an agent that repeats a cursor would loop forever
            return RemoteListing(found, True)
        seen.add(cursor)
    return RemoteListing(found, True)


async def delete_remote_session(
    runtime: Runtime,
    store: Store,
    session_id: str,
    *,
    agent: str | None = None,
    agent_command: str | Sequence[str] | None = None,
    env_keys: Sequence[str] = (),
) -> None:
    """``session/delete`` of the agent's session ``session_id``: only behind this explicit
    request, never on Baton's own. CAPABILITY_NOT_ADVERTISED when the agent does not advertise
    ``sessionCapabilities.delete``. Refused (USAGE_ERROR) while a Baton conversation that is not
    CLOSED holds that provider session: deleting it underneath would leave the conversation
    pointing at nothing (close it, or `baton session rm` it, first).

    Cancellation: a cancel before the request is written deletes nothing; after it, the
    outcome is the agent's (the request is abandoned under the fixed request limit's rules)."""
    request = RunRequest(prompt="", agent=agent, agent_command=agent_command, env_keys=env_keys)
    spec = await runtime.resolve(request)
    for conversation in store.list_conversations(profile=spec.profile_id):
        if conversation.provider_session_id == session_id and conversation.status != "CLOSED":
            raise UsageError(
                f"the Baton session {conversation.name!r} holds provider session "
                f"{session_id!r} ({conversation.status}); close it or `baton session rm` it "
                "before deleting the provider's session"
            )
    client = await runtime.agent_client(request)
    await client.delete_session(session_id)
