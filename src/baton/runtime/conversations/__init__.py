"""Layer 4.95: conversations, named persistent sessions over the Runtime's public API
(issue 17): records and names, the one-active-turn-per-session queue, the resume/attach
decisions, history, and the typed API surfaces call (docs/sessions.md)."""

from typing import TYPE_CHECKING

from baton._lazy import lazy_exports

# Each name loads its module when first read: `baton run` without --session imports the
# turn queue's wait bound, not the conversations service (issue 34).
_EXPORTS: dict[str, str] = {
    "AttachPlan": "baton.runtime.conversations.decisions",
    "plan_attach": "baton.runtime.conversations.decisions",
    "HistoryTurn": "baton.runtime.conversations.history",
    "PermissionDecision": "baton.runtime.conversations.history",
    "ToolCallSummary": "baton.runtime.conversations.history",
    "MAX_SESSION_NAME_CHARS": "baton.runtime.conversations.names",
    "check_session_name": "baton.runtime.conversations.names",
    "generate_session_name": "baton.runtime.conversations.names",
    "RemoteListing": "baton.runtime.conversations.remote",
    "RemoteSession": "baton.runtime.conversations.remote",
    "Conversations": "baton.runtime.conversations.service",
    "ConversationView": "baton.runtime.conversations.requests",
    "NewConversation": "baton.runtime.conversations.requests",
    "PromptOptions": "baton.runtime.conversations.requests",
    "Session": "baton.runtime.conversations.session",
    "SessionRun": "baton.runtime.conversations.session_run",
    "SessionSetupFailed": "baton.errors",
    "QUEUED": "baton.runtime.conversations.requests",
    "SteerResult": "baton.runtime.conversations.requests",
    "DEFAULT_WAIT_SECONDS": "baton.runtime.conversations.turn_queue",
    "MAX_WAITING_PROMPTS": "baton.runtime.conversations.turn_queue",
    "TurnQueue": "baton.runtime.conversations.turn_queue",
}

if TYPE_CHECKING:
    from baton.errors import SessionSetupFailed
    from baton.runtime.conversations.decisions import AttachPlan, plan_attach
    from baton.runtime.conversations.history import HistoryTurn, PermissionDecision, ToolCallSummary
    from baton.runtime.conversations.names import (
        MAX_SESSION_NAME_CHARS,
        check_session_name,
        generate_session_name,
    )
    from baton.runtime.conversations.remote import RemoteListing, RemoteSession
    from baton.runtime.conversations.requests import (
        QUEUED,
        ConversationView,
        NewConversation,
        PromptOptions,
        SteerResult,
    )
    from baton.runtime.conversations.service import Conversations
    from baton.runtime.conversations.session import Session
    from baton.runtime.conversations.session_run import SessionRun
    from baton.runtime.conversations.turn_queue import (
        DEFAULT_WAIT_SECONDS,
        MAX_WAITING_PROMPTS,
        TurnQueue,
    )

__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_WAIT_SECONDS",
    "MAX_SESSION_NAME_CHARS",
    "MAX_WAITING_PROMPTS",
    "QUEUED",
    "AttachPlan",
    "ConversationView",
    "Conversations",
    "HistoryTurn",
    "NewConversation",
    "PermissionDecision",
    "PromptOptions",
    "RemoteListing",
    "RemoteSession",
    "Session",
    "SessionRun",
    "SessionSetupFailed",
    "SteerResult",
    "ToolCallSummary",
    "TurnQueue",
    "check_session_name",
    "generate_session_name",
    "plan_attach",
]
