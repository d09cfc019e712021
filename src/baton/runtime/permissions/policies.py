"""The three permission policies and what each may do with a request Baton's local policy has
already judged.

- ``ask`` (the default): the user chooses among the agent's exact options.
- ``auto-edits``: an exact ``allow_once`` is chosen automatically for an ``edit``, ``delete`` or
  ``move`` whose paths the local policy verified inside the worktree; everything else is asked.
- ``full``: an exact ``allow_once`` is chosen automatically for anything the local policy
  permits; everything else is asked.

Automatic selection needs exactly one ``allow_once`` among the options offered; it never picks
an option by position and never a remembered (``*_always``) one. What the user is offered is the
agent's options filtered in this order:

1. remembered options (``*_always``) are dropped unless the profile allows them; the provider
   owns their scope and lifetime, which the prompt says (:data:`REMEMBERED_NOTE`);
2. allowing options are dropped when the local policy forbids allowing; an option whose kind
   Baton does not know counts as allowing, since it might be one;
3. rejecting options (``reject_*``) are never dropped by the local policy;
4. cancel is always available: it is the answer, not an option.

This module also refuses run settings Baton cannot honour (:func:`check_run_settings`) and says
which policies a run may use (:func:`available_policies`, :func:`check_policy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from baton.errors import ConfigurationError, PolicyNotAvailable, UnsupportedExecutionSetting
from baton.runtime.permissions.local_policy import MUTATING_KINDS, LocalDecision
from baton.wire.permission import (
    ALLOW_ONCE,
    PermissionOption,
    PermissionRequest,
    single_allow_once,
)
from baton.wire.toolcalls import tool_kind

#: A permission policy, as ``--policy`` spells it.
PolicyName = Literal["ask", "auto-edits", "full"]

#: Every policy, safest first.
POLICIES: Final[tuple[PolicyName, ...]] = get_args(PolicyName)

#: The policy of a run that names none.
DEFAULT_POLICY: Final[PolicyName] = "ask"

#: What the user is told about a remembered option.
REMEMBERED_NOTE: Final = "remembered by the provider; it owns their scope and lifetime"

# Why an option was withheld (stable; they appear in interaction records).
DROPPED_REMEMBERED: Final = "remembered_not_allowed"
DROPPED_LOCAL_POLICY: Final = "local_policy_forbids_allow"


def parse_policy(value: str) -> PolicyName:
    """``value`` as a policy name; :class:`ConfigurationError` naming the choices otherwise."""
    for policy in POLICIES:
        if value == policy:
            return policy
    raise ConfigurationError(
        f"unknown permission policy {value!r}; choose one of {', '.join(POLICIES)}"
    )


@dataclass(frozen=True, slots=True)
class DroppedOption:
    """An option the agent offered that Baton withholds, and why (a ``DROPPED_*`` code)."""

    option: PermissionOption
    reason: str


@dataclass(frozen=True, slots=True)
class AutoSelect:
    """The policy chose ``option`` (an exact ``allow_once``) without asking."""

    option: PermissionOption
    offered: tuple[PermissionOption, ...]
    dropped: tuple[DroppedOption, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class AskUser:
    """The user must choose among ``offered`` or cancel (always possible)."""

    offered: tuple[PermissionOption, ...]
    dropped: tuple[DroppedOption, ...]
    reason: str


Decision = AutoSelect | AskUser


def note_for(option: PermissionOption) -> str | None:
    """The note shown beside ``option``: :data:`REMEMBERED_NOTE` for a remembered one."""
    return REMEMBERED_NOTE if option.is_remembered else None


def filter_options(
    options: Sequence[PermissionOption], local: LocalDecision, *, allow_remembered: bool
) -> tuple[tuple[PermissionOption, ...], tuple[DroppedOption, ...]]:
    """Split the agent's options into (offered, dropped) by the rules in the module docstring,
    keeping the agent's order."""
    offered: list[PermissionOption] = []
    dropped: list[DroppedOption] = []
    for option in options:
        if option.is_remembered and not allow_remembered:
            dropped.append(DroppedOption(option, DROPPED_REMEMBERED))
        elif not option.is_reject and not local.permits_allow:
            dropped.append(DroppedOption(option, DROPPED_LOCAL_POLICY))
        else:
            offered.append(option)
    return tuple(offered), tuple(dropped)


def decide(
    policy: PolicyName,
    request: PermissionRequest,
    correlated_tool_call: Mapping[str, Any],
    local: LocalDecision,
    *,
    allow_remembered: bool,
) -> Decision:
    """What ``policy`` does with ``request``, given the correlated tool call and the local
    decision on it. ``allow_remembered`` is the profile's ``allow_remembered_permissions``."""
    offered, dropped = filter_options(request.options, local, allow_remembered=allow_remembered)
    if policy == "ask":
        return AskUser(offered, dropped, "the ask policy leaves every choice to the user")
    if not local.permits_allow:
        return AskUser(offered, dropped, f"the local policy forbids allowing: {local.detail}")
    kind = tool_kind(correlated_tool_call)
    if policy == "auto-edits" and kind not in MUTATING_KINDS:
        return AskUser(offered, dropped, f"auto-edits chooses only for edits, not {kind!r}")
    chosen = single_allow_once(offered)
    if chosen is None:
        count = sum(1 for option in offered if option.kind == ALLOW_ONCE)
        return AskUser(
            offered, dropped, f"{count} allow_once options offered; exactly one is required"
        )
    return AutoSelect(
        chosen,
        offered,
        dropped,
        f"{policy} chose the single allow_once for a permitted {kind!r} ({local.detail})",
    )


# --- run settings ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ExecutionSettings:
    """What a run asks of the agent's execution environment.

    Baton can honour only one combination, the defaults: ``workspace="danger-full-access"``
    (the agent process can reach everything its user can), ``network="enabled"`` and
    ``reviewer="user"``. ACP attests no sandbox for the agent process, so anything else (a
    ``workspace-write`` or ``read-only`` workspace, ``network="disabled"``, an ``automated``
    reviewer) would be a promise Baton cannot keep. The fields are strings, not literals, so a
    configuration file's value arrives here and is refused with a clear error.
    """

    workspace: str = "danger-full-access"
    network: str = "enabled"
    reviewer: str = "user"


#: The only value of each execution setting Baton accepts.
SUPPORTED_EXECUTION_SETTINGS: Final[Mapping[str, str]] = {
    "workspace": "danger-full-access",
    "network": "enabled",
    "reviewer": "user",
}

_REFUSALS: Final[Mapping[str, str]] = {
    "workspace": "a restricted or read-only workspace",
    "network": "disabled network access",
    "reviewer": "an automated reviewer",
}


def check_run_settings(settings: ExecutionSettings) -> None:
    """Refuse a run whose settings Baton cannot honour (:class:`UnsupportedExecutionSetting`,
    a caller fault naming the first such setting). Never downgrades a setting silently."""
    for name, supported in SUPPORTED_EXECUTION_SETTINGS.items():
        value = getattr(settings, name)
        if value != supported:
            raise UnsupportedExecutionSetting(
                name,
                value,
                f"the run asks for {_REFUSALS[name]} ({name}={value!r}), which Baton cannot "
                "provide: ACP attests no sandbox for the agent process. Baton refuses the run "
                f"instead of downgrading it; run without it ({name}={supported!r})",
            )


def available_policies(
    profile_policies: Sequence[PolicyName], *, ad_hoc: bool, allow_unattended: bool
) -> tuple[PolicyName, ...]:
    """The policies a run may use. A profile's own list applies as declared. An ad-hoc
    ``--agent-command`` agent gets only ``ask`` unless the run passes ``--allow-unattended``,
    which unlocks every policy for that run (the caller records it as the user's choice)."""
    if ad_hoc:
        return POLICIES if allow_unattended else (DEFAULT_POLICY,)
    return tuple(profile_policies)


def check_policy(
    policy: PolicyName, available: Sequence[PolicyName], *, profile: str, ad_hoc: bool = False
) -> None:
    """Refuse ``policy`` when it is not in ``available`` (:class:`PolicyNotAvailable`, naming
    what the ``profile`` exposes; for an ``ad_hoc`` agent, pointing at --allow-unattended)."""
    if policy not in available:
        shown = ", ".join(available) if available else "none"
        hint = " (an ad-hoc agent needs --allow-unattended for it)" if ad_hoc else ""
        raise PolicyNotAvailable(
            f"the {profile} profile does not expose the {policy!r} policy{hint}; "
            f"it exposes: {shown}"
        )
