"""``session/fork`` (unstable ACP, issue 29): a new session from an existing one's context.

The method is the unstable schema's (``ForkSessionRequest {sessionId, cwd,
additionalDirectories?, mcpServers?, _meta?}`` answering ``ForkSessionResponse {sessionId,
modes?, configOptions?, _meta?}``), advertised as ``sessionCapabilities.fork`` (v1; ``session.fork``
in the v2 draft) with ``{}``. The schema forks the whole session: it has no field for a fork
point.

Forking at an earlier turn is Baton's own extension, in Baton's own ``_meta`` namespace (so no
other implementation's key is read; the protocol's rule keeps every other ``_meta`` value
opaque):

- advertised inside the fork capability:
  ``"sessionCapabilities": {"fork": {"_meta": {"baton.forkAtTurn": true}}}``;
- asked for in the request: ``"_meta": {"baton.forkAtTurn": N}``: the fork holds the parent's
  first N turns (prompts and everything they produced) and nothing after.

The bundled scripted agent implements both (``--cap`` with the ``_meta`` above); no published
adapter does, so ``--at-turn`` against one is refused before anything is sent
(SESSION_FORK_AT_TURN_UNSUPPORTED).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from baton.errors import InvalidArgument

#: The method.
METHOD: Final = "session/fork"

#: Baton's ``_meta`` key, in the fork capability (``true``) and in the request (the turn count).
AT_TURN_META_KEY: Final = "baton.forkAtTurn"

#: The highest ``--at-turn`` accepted. A conversation's turns are far fewer; this only keeps an
#: absurd number out of the request and the agent's history walk.
MAX_AT_TURN: Final = 1_000_000


def fork_at_turn_advertised(fork_capability: object) -> bool:
    """True when the fork capability object carries ``_meta["baton.forkAtTurn"]: true``."""
    if not isinstance(fork_capability, Mapping):
        return False
    meta = fork_capability.get("_meta")
    return isinstance(meta, Mapping) and meta.get(AT_TURN_META_KEY) is True


def check_at_turn(at_turn: object) -> int:
    """``at_turn`` as a turn count (1 to :data:`MAX_AT_TURN`); INVALID_ARGUMENT otherwise."""
    if isinstance(at_turn, bool) or not isinstance(at_turn, int):
        raise InvalidArgument("--at-turn must be a whole number of turns")
    if not 1 <= at_turn <= MAX_AT_TURN:
        raise InvalidArgument(f"--at-turn must be between 1 and {MAX_AT_TURN}, got {at_turn}")
    return at_turn


def at_turn_meta(at_turn: int) -> dict[str, Any]:
    """The request's ``_meta`` asking for a fork of the first ``at_turn`` turns."""
    return {AT_TURN_META_KEY: check_at_turn(at_turn)}


def requested_at_turn(params: Mapping[str, Any]) -> int | None:
    """The turn count a ``session/fork`` request asks for (the agent's side), None when it
    asks for the whole session. INVALID_ARGUMENT for a malformed value."""
    meta = params.get("_meta")
    if not isinstance(meta, Mapping) or AT_TURN_META_KEY not in meta:
        return None
    return check_at_turn(meta[AT_TURN_META_KEY])
