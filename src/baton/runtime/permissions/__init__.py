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
