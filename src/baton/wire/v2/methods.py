"""Method names and params that differ in the v2 draft.

``authenticate`` and ``logout`` become ``auth/login`` and ``auth/logout``; ``session/load`` is
gone: ``session/resume`` with ``replayFrom`` (``{"type": "start"}``) replays the history.
``session/set_mode`` is gone too (modes are config options in v2).
"""

from __future__ import annotations

from typing import Any, Final

AUTH_LOGIN: Final = "auth/login"
AUTH_LOGOUT: Final = "auth/logout"
SESSION_RESUME: Final = "session/resume"

#: Methods of v1 that v2 removed: a call is refused locally, naming the version.
REMOVED_IN_V2: Final = frozenset(
    {"session/load", "session/set_mode", "session/set_model", "authenticate", "logout"}
)


def replay_from_start() -> dict[str, Any]:
    """The ``replayFrom`` value asking for the whole retained history."""
    return {"type": "start"}
