"""Baton: drive coding agents over the Agent Client Protocol, safely, headlessly and durably.

The public library surface, re-exported here (imported lazily, so ``import baton`` stays cheap
for the bundled agent, the wire layer and `baton --version`)::

    from baton import Runtime, RunRequest, RunResult, RunOutcome, RunStatus, RunEvent
    from baton import RunEventType, TextPayload, ToolCallPayload, ResultPayload  # and the rest
    from baton import TurnBudget, Policy
    from baton import Run, RunHandle                                 # a running run's handle
    from baton import Asker, AskPrompt, AskAnswer, NoUserAsker      # answering permissions
    from baton import BatonError, AgentError, UsageError, TransportClosed, BudgetExpired
    from baton import StorageError, InternalError, ConfigurationError, RecordNotFound
    from baton import AgentNotInstalled, SessionSetupFailed, Fault, SCRIPTED_AGENT
    from baton import Conversations, Session, NewConversation, PromptOptions  # named sessions
    from baton import Batch, BatchSpec, load_batch_spec            # batches (docs/batches.md)
"""

from __future__ import annotations

from baton._version import __version__

# Not typing.TYPE_CHECKING: importing typing costs `baton --version` a third of its time.
# mypy treats any name TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from baton.batches.batch import Batch
    from baton.batches.spec import BatchSpec
    from baton.batches.spec import load_spec as load_batch_spec
    from baton.errors import (
        AgentError,
        AgentNotInstalled,
        BatonError,
        BudgetExpired,
        ConfigurationError,
        Fault,
        InternalError,
        RecordNotFound,
        SessionSetupFailed,
        StorageError,
        TransportClosed,
        UsageError,
    )
    from baton.runtime.agents.launch import SCRIPTED_AGENT
    from baton.runtime.conversations import (
        Conversations,
        NewConversation,
        PromptOptions,
        Session,
        SessionRun,
    )
    from baton.runtime.permissions.ask import AskAnswer, Asker, AskPrompt, NoUserAsker
    from baton.runtime.permissions.policies import PolicyName as Policy
    from baton.runtime.run import Run, RunHandle
    from baton.runtime.runtime import RunRequest, RunResult, Runtime
    from baton.runtime.turns.event_payloads import (
        CommandsPayload,
        CompactionPayload,
        ConfigPayload,
        ControlsPayload,
        ElicitationPayload,
        ItemPayload,
        ModePayload,
        NoticePayload,
        PermissionPayload,
        PlanPayload,
        ResultPayload,
        RunEventType,
        RunStartedPayload,
        SessionInfoPayload,
        SessionPayload,
        StatePayload,
        SteerPayload,
        TextPayload,
        ToolCallPayload,
        UsagePayload,
        WarningPayload,
        WorkspaceChangesPayload,
    )
    from baton.runtime.turns.events import RunEvent
    from baton.runtime.turns.outcome import RunOutcome
    from baton.store.models import RunStatus
    from baton.wire.budget import TurnBudget

_EXPORTS = {
    "Runtime": "baton.runtime.runtime",
    "RunRequest": "baton.runtime.runtime",
    "RunResult": "baton.runtime.runtime",
    "Run": "baton.runtime.run",
    "RunHandle": "baton.runtime.run",
    "RunOutcome": "baton.runtime.turns.outcome",
    "RunStatus": "baton.store.models",
    "RunEvent": "baton.runtime.turns.events",
    "RunEventType": "baton.runtime.turns.event_payloads",
    "RunStartedPayload": "baton.runtime.turns.event_payloads",
    "SessionPayload": "baton.runtime.turns.event_payloads",
    "ControlsPayload": "baton.runtime.turns.event_payloads",
    "TextPayload": "baton.runtime.turns.event_payloads",
    "ToolCallPayload": "baton.runtime.turns.event_payloads",
    "PlanPayload": "baton.runtime.turns.event_payloads",
    "UsagePayload": "baton.runtime.turns.event_payloads",
    "NoticePayload": "baton.runtime.turns.event_payloads",
    "CompactionPayload": "baton.runtime.turns.event_payloads",
    "ElicitationPayload": "baton.runtime.turns.event_payloads",
    "ModePayload": "baton.runtime.turns.event_payloads",
    "ConfigPayload": "baton.runtime.turns.event_payloads",
    "SessionInfoPayload": "baton.runtime.turns.event_payloads",
    "CommandsPayload": "baton.runtime.turns.event_payloads",
    "StatePayload": "baton.runtime.turns.event_payloads",
    "PermissionPayload": "baton.runtime.turns.event_payloads",
    "ItemPayload": "baton.runtime.turns.event_payloads",
    "WarningPayload": "baton.runtime.turns.event_payloads",
    "SteerPayload": "baton.runtime.turns.event_payloads",
    "WorkspaceChangesPayload": "baton.runtime.turns.event_payloads",
    "ResultPayload": "baton.runtime.turns.event_payloads",
    "TurnBudget": "baton.wire.budget",
    "BatonError": "baton.errors",
    "AgentError": "baton.errors",
    "UsageError": "baton.errors",
    "ConfigurationError": "baton.errors",
    "RecordNotFound": "baton.errors",
    "TransportClosed": "baton.errors",
    "BudgetExpired": "baton.errors",
    "StorageError": "baton.errors",
    "InternalError": "baton.errors",
    "Fault": "baton.errors",
    "AgentNotInstalled": "baton.errors",
    "SessionSetupFailed": "baton.errors",
    "Asker": "baton.runtime.permissions.ask",
    "AskPrompt": "baton.runtime.permissions.ask",
    "AskAnswer": "baton.runtime.permissions.ask",
    "NoUserAsker": "baton.runtime.permissions.ask",
    "PolicyName": "baton.runtime.permissions.policies",
    "SCRIPTED_AGENT": "baton.runtime.agents.launch",
    "Conversations": "baton.runtime.conversations",
    "Session": "baton.runtime.conversations",
    "SessionRun": "baton.runtime.conversations",
    "NewConversation": "baton.runtime.conversations",
    "PromptOptions": "baton.runtime.conversations",
    "Batch": "baton.batches.batch",
    "BatchSpec": "baton.batches.spec",
    "load_spec": "baton.batches.spec",
}

#: Public names that are another module's name under a shorter spelling.
_ALIASES = {"Policy": "PolicyName", "load_batch_spec": "load_spec"}

__all__ = [
    "SCRIPTED_AGENT",
    "AgentError",
    "AgentNotInstalled",
    "AskAnswer",
    "AskPrompt",
    "Asker",
    "Batch",
    "BatchSpec",
    "BatonError",
    "BudgetExpired",
    "CommandsPayload",
    "CompactionPayload",
    "ConfigPayload",
    "ConfigurationError",
    "ControlsPayload",
    "Conversations",
    "ElicitationPayload",
    "Fault",
    "InternalError",
    "ItemPayload",
    "ModePayload",
    "NewConversation",
    "NoUserAsker",
    "NoticePayload",
    "PermissionPayload",
    "PlanPayload",
    "Policy",
    "PromptOptions",
    "RecordNotFound",
    "ResultPayload",
    "Run",
    "RunEvent",
    "RunEventType",
    "RunHandle",
    "RunOutcome",
    "RunRequest",
    "RunResult",
    "RunStartedPayload",
    "RunStatus",
    "Runtime",
    "Session",
    "SessionInfoPayload",
    "SessionPayload",
    "SessionRun",
    "SessionSetupFailed",
    "StatePayload",
    "SteerPayload",
    "StorageError",
    "TextPayload",
    "ToolCallPayload",
    "TransportClosed",
    "TurnBudget",
    "UsageError",
    "UsagePayload",
    "WarningPayload",
    "WorkspaceChangesPayload",
    "__version__",
    "load_batch_spec",
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
