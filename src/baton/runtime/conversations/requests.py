"""What a caller hands :class:`~baton.runtime.conversations.service.Conversations` and gets
back besides run handles: a new conversation's settings (:class:`NewConversation`), a
prompt's options (:class:`PromptOptions`), a conversation as `session show` reports it
(:class:`ConversationView`), and what became of a steering text (:class:`SteerResult`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from baton.runtime.conversations.turn_queue import DEFAULT_WAIT_SECONDS
from baton.runtime.permissions.policies import PolicyName
from baton.store import Conversation, Run
from baton.wire.budget import TurnBudget

__all__ = ["QUEUED", "ConversationView", "NewConversation", "PromptOptions", "SteerResult"]


@dataclass(frozen=True, slots=True)
class NewConversation:
    """What :meth:`Conversations.create` records: the agent (a profile, or an ad-hoc command
    with the names of the environment keys it gets), the cwd and the requested settings."""

    name: str | None = None
    agent: str | None = None
    agent_command: str | Sequence[str] | None = None
    env_keys: Sequence[str] = ()
    cwd: str | None = None
    mode: str | None = None
    model: str | None = None
    effort: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    allow_unattended: bool = False
    tools_file: str | None = None
    #: The session's workspace, kept across its turns, processes and (pinned) hosts:
    #: ``"worktree"`` (a new git worktree ``session-<name>`` of the repository holding
    #: ``cwd``), a directory, or None / ``"none"`` (``cwd`` as it is).
    workspace: str | None = None
    #: With ``workspace="worktree"``: the commit to start from (default ``HEAD``).
    base: str | None = None
    #: With ``workspace="worktree"``: refuse a checkout with uncommitted changes.
    require_clean: bool = False
    #: Refuse the next prompt once the session's reported cost reaches this (the agent's
    #: currency; ``SESSION_MAX_COST_REACHED``); a running turn is never stopped by it.
    max_cost: float | None = None


@dataclass(frozen=True, slots=True)
class PromptOptions:
    """Per-prompt options: the permission policy, bounds, attachments and how to wait."""

    policy: PolicyName = "ask"
    allow_unattended: bool = False
    tools_file: str | None = None
    #: The turn's bounds (see ``RunRequest.budget``: an idle of None is the profile's, the
    #: config file's, else the default).
    budget: TurnBudget = field(default_factory=TurnBudget)
    attachments: Sequence[str] = ()
    #: Wait for a running turn (FIFO in this process; polling the store across processes).
    wait: bool = True
    #: Seconds to wait at most before SESSION_BUSY (None: no bound).
    wait_timeout: float | None = DEFAULT_WAIT_SECONDS


@dataclass(frozen=True, slots=True)
class ConversationView:
    """A conversation as `session show` reports it: the record, its runs and the last known
    native state (settings and controls as the provider reported them or Baton resolved
    them), and whether it is attached in this process."""

    record: Conversation
    runs: list[Run]
    native_state: Any
    attached_here: bool


#: A steering text that was not steered: the caller runs it as the session's next turn.
QUEUED: Final = "queued"


@dataclass(frozen=True, slots=True)
class SteerResult:
    """What became of a steering text: ``outcome`` is the agent's answer (``injected``,
    ``startedNewTurn``, ``failed``, or another kept verbatim) or :data:`QUEUED`; ``reason``
    says why when there is one."""

    outcome: str
    reason: str = ""

    @property
    def queued(self) -> bool:
        """True when the text was not steered and belongs to the session's next turn."""
        return self.outcome == QUEUED

    def to_json(self) -> dict[str, Any]:
        """``{outcome, reason}``."""
        return {"outcome": self.outcome, "reason": self.reason}
