"""Baton: drive coding agents over the Agent Client Protocol, safely, headlessly and durably.

The public library surface, re-exported here (imported lazily, so ``import baton`` stays cheap
for the bundled agent, the wire layer and `baton --version`)::

    from baton import Runtime, RunRequest, RunResult, RunOutcome, RunEvent, TurnBudget, Policy
    from baton import Asker, AskPrompt, AskAnswer, NoUserAsker      # answering permissions
    from baton import BatonError, ConfigurationError, AgentNotInstalled, SCRIPTED_AGENT
    from baton import Conversations, Session, NewConversation, PromptOptions  # named sessions
"""

from __future__ import annotations

from baton._version import __version__

# Not typing.TYPE_CHECKING: importing typing costs `baton --version` a third of its time.
# mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from baton.errors import BatonError, ConfigurationError
    from baton.runtime.agents.launch import SCRIPTED_AGENT
    from baton.runtime.conversations import (
        Conversations,
        NewConversation,
        PromptOptions,
        Session,
        SessionSetupFailed,
    )
    from baton.runtime.permissions.ask import AskAnswer, Asker, AskPrompt, NoUserAsker
    from baton.runtime.permissions.policies import PolicyName as Policy
    from baton.runtime.runtime import AgentNotInstalled, RunRequest, RunResult, Runtime
    from baton.runtime.turns.events import RunEvent
    from baton.runtime.turns.outcome import RunOutcome
    from baton.wire.budget import TurnBudget

_EXPORTS = {
    "Runtime": "baton.runtime.runtime",
    "RunRequest": "baton.runtime.runtime",
    "RunResult": "baton.runtime.runtime",
    "RunOutcome": "baton.runtime.turns.outcome",
    "RunEvent": "baton.runtime.turns.events",
    "TurnBudget": "baton.wire.budget",
    "BatonError": "baton.errors",
    "ConfigurationError": "baton.errors",
    "AgentNotInstalled": "baton.runtime.runtime",
    "Asker": "baton.runtime.permissions.ask",
    "AskPrompt": "baton.runtime.permissions.ask",
    "AskAnswer": "baton.runtime.permissions.ask",
    "NoUserAsker": "baton.runtime.permissions.ask",
    "PolicyName": "baton.runtime.permissions.policies",
    "SCRIPTED_AGENT": "baton.runtime.agents.launch",
    "Conversations": "baton.runtime.conversations",
    "Session": "baton.runtime.conversations",
    "NewConversation": "baton.runtime.conversations",
    "PromptOptions": "baton.runtime.conversations",
    "SessionSetupFailed": "baton.runtime.conversations",
}

#: Public names that are another module's name under a shorter spelling.
_ALIASES = {"Policy": "PolicyName"}

__all__ = [
    "SCRIPTED_AGENT",
    "AgentNotInstalled",
    "AskAnswer",
    "AskPrompt",
    "Asker",
    "BatonError",
    "ConfigurationError",
    "Conversations",
    "NewConversation",
    "NoUserAsker",
    "Policy",
    "PromptOptions",
    "RunEvent",
    "RunOutcome",
    "RunRequest",
    "RunResult",
    "Runtime",
    "Session",
    "SessionSetupFailed",
    "TurnBudget",
    "__version__",
]


def __dir__() -> list[str]:
    """The public names (``__all__``) beside the module's own attributes: ``dir(baton)`` lists
    what the package exports even though each is imported only on first use."""
    return sorted(set(globals()) | set(__all__))


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(_ALIASES.get(name, name))
    if module is None:
        raise AttributeError(f"module 'baton' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), _ALIASES.get(name, name))
