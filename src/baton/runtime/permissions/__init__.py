"""Permission policy: Baton's answer to every ``session/request_permission``.

No permission is ever granted that the run's policy did not allow, and an unanswered request
never becomes an approval. The pieces, in the order a request meets them:

- :mod:`.correlation`: the tool-call state the request refers to;
- :mod:`.local_policy`: may anything be allowed at all; for commands it asks
  :mod:`.reserved_commands`, which combines :mod:`.command_scan` (reserved commands in any
  syntax), :mod:`.shell_reading` (the certain reading of a shell subset) and
  :mod:`.command_rules` (what each read command does: :mod:`.git_rules`,
  :mod:`.program_rules`, :mod:`.word_rules`), with the rules in :mod:`.findings`;
- :mod:`.policies`: ``ask``, ``auto-edits`` or ``full`` on what the local policy permits;
- :mod:`.ask`: putting the question to a user within the turn budget;
- :mod:`.records`: the durable interaction record;
- :mod:`.engine`: all of the above for one request.

See docs/permissions.md for the rules in full.
"""

from typing import TYPE_CHECKING

from baton._lazy import lazy_exports

# The names below load their module when first used (PEP 562), so importing one piece (the
# asker, the policies) does not load the command rules with it (issue 34).
_EXPORTS: dict[str, str] = {
    "AskAnswer": "baton.runtime.permissions.ask",
    "Asker": "baton.runtime.permissions.ask",
    "AskPrompt": "baton.runtime.permissions.ask",
    "NoUserAsker": "baton.runtime.permissions.ask",
    "ask_within": "baton.runtime.permissions.ask",
    "ask_within_budget": "baton.runtime.permissions.ask",
    "ToolCallTracker": "baton.runtime.permissions.correlation",
    "PermissionSettings": "baton.runtime.permissions.engine",
    "Resolution": "baton.runtime.permissions.engine",
    "refuse": "baton.runtime.permissions.engine",
    "settle": "baton.runtime.permissions.engine",
    "LocalContext": "baton.runtime.permissions.local_policy",
    "LocalDecision": "baton.runtime.permissions.local_policy",
    "evaluate": "baton.runtime.permissions.local_policy",
    "DEFAULT_POLICY": "baton.runtime.permissions.policies",
    "POLICIES": "baton.runtime.permissions.policies",
    "AskUser": "baton.runtime.permissions.policies",
    "AutoSelect": "baton.runtime.permissions.policies",
    "Decision": "baton.runtime.permissions.policies",
    "ExecutionSettings": "baton.runtime.permissions.policies",
    "PolicyName": "baton.runtime.permissions.policies",
    "available_policies": "baton.runtime.permissions.policies",
    "check_policy": "baton.runtime.permissions.policies",
    "check_run_settings": "baton.runtime.permissions.policies",
    "decide": "baton.runtime.permissions.policies",
    "parse_policy": "baton.runtime.permissions.policies",
    "InteractionRecord": "baton.runtime.permissions.records",
    "RESERVED_RULES": "baton.runtime.permissions.reserved_commands",
    "find_reserved": "baton.runtime.permissions.reserved_commands",
}

if TYPE_CHECKING:
    from baton.runtime.permissions.ask import (
        AskAnswer,
        Asker,
        AskPrompt,
        NoUserAsker,
        ask_within,
        ask_within_budget,
    )
    from baton.runtime.permissions.correlation import ToolCallTracker
    from baton.runtime.permissions.engine import PermissionSettings, Resolution, refuse, settle
    from baton.runtime.permissions.local_policy import LocalContext, LocalDecision, evaluate
    from baton.runtime.permissions.policies import (
        DEFAULT_POLICY,
        POLICIES,
        AskUser,
        AutoSelect,
        Decision,
        ExecutionSettings,
        PolicyName,
        available_policies,
        check_policy,
        check_run_settings,
        decide,
        parse_policy,
    )
    from baton.runtime.permissions.records import InteractionRecord
    from baton.runtime.permissions.reserved_commands import RESERVED_RULES, find_reserved


__getattr__ = lazy_exports(__name__, _EXPORTS)

__all__ = [
    "DEFAULT_POLICY",
    "POLICIES",
    "RESERVED_RULES",
    "AskAnswer",
    "AskPrompt",
    "AskUser",
    "Asker",
    "AutoSelect",
    "Decision",
    "ExecutionSettings",
    "InteractionRecord",
    "LocalContext",
    "LocalDecision",
    "NoUserAsker",
    "PermissionSettings",
    "PolicyName",
    "Resolution",
    "ToolCallTracker",
    "ask_within",
    "ask_within_budget",
    "available_policies",
    "check_policy",
    "check_run_settings",
    "decide",
    "evaluate",
    "find_reserved",
    "parse_policy",
    "refuse",
    "settle",
]
