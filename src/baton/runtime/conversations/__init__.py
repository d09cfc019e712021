"""Layer 4.95: conversations, named persistent sessions over the Runtime's public API
(issue 17): records and names, the one-active-turn-per-session queue, the resume/attach
decisions, history, and the typed API surfaces call (docs/sessions.md)."""

from baton.runtime.conversations.decisions import AttachPlan, plan_attach
from baton.runtime.conversations.history import HistoryTurn, PermissionDecision, ToolCallSummary
from baton.runtime.conversations.names import (
    MAX_SESSION_NAME_CHARS,
    check_session_name,
    generate_session_name,
)
from baton.runtime.conversations.remote import RemoteListing, RemoteSession
from baton.runtime.conversations.service import (
    DEFAULT_WAIT_SECONDS,
    QUEUED,
    Conversations,
    ConversationView,
    NewConversation,
    PromptOptions,
    Session,
    SessionSetupFailed,
    SteerResult,
)
from baton.runtime.conversations.turn_queue import MAX_WAITING_PROMPTS, TurnQueue

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
    "SessionSetupFailed",
    "SteerResult",
    "ToolCallSummary",
    "TurnQueue",
    "check_session_name",
    "generate_session_name",
    "plan_attach",
]
