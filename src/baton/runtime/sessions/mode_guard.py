"""The native-mode guard of session setup: a policy that asks is never silently bypassed by
the agent's own mode.

One decision per run, made on the session's state before the run's settings are applied
(:func:`guard_mode`); every surface (``baton run``, sessions, the service, fleet workers)
reaches it through :func:`baton.runtime.sessions.setup.open_session`. The rule
(docs/permissions.md):

- the agent has no modes: nothing happens;
- a mode chosen explicitly (``--mode``, or ``--config`` of the mode option) is applied; when
  it acts on its own (declared so by the profile, or by the bypass rule for an undeclared
  mode) a ``MODE_ACTS_WITHOUT_ASKING`` warning says so (stderr and the result);
- under ``ask`` and ``auto-edits``, a session that starts in a mode the profile declares
  self-acting is moved to the first asking mode it offers (the change is a Baton resolution,
  like any requested setting); when it offers none, the run is refused
  (:class:`ModeActsWithoutAsking`) before any prompt;
- a session that starts in an undeclared mode whose id or description says it bypasses
  approvals gets a ``MODE_MAY_BYPASS_APPROVALS`` warning (never a refusal: the rule reads
  words, not behaviour).

``full`` grants every request anyway: only an explicit choice is reported there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from baton.errors import ModeActsWithoutAsking
from baton.runtime.agents.native_modes import (
    MAX_MODE_TEXT_CHARS,
    NativeModes,
    SessionModes,
    says_it_bypasses,
    session_modes,
)
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.turns.settings import RequestedSettings
from baton.wire.session_state import SessionState

#: The warning code of an explicitly chosen mode that acts on its own.
MODE_ACTS_WITHOUT_ASKING: Final = ModeActsWithoutAsking.code
#: The warning code of an undeclared starting mode whose words say it bypasses approvals.
MODE_MAY_BYPASS_APPROVALS: Final = "MODE_MAY_BYPASS_APPROVALS"
#: The policies whose promise a self-acting mode would break (every request through Baton).
GUARDED_POLICIES: Final = frozenset({"ask", "auto-edits"})


@dataclass(frozen=True, slots=True)
class ModeWarning:
    """A warning of the guard: a stable code and a one-line message."""

    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        """``{code, message}``, as in a ``warning`` event and the result's ``warnings``."""
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True, slots=True)
class ModeDecision:
    """What the guard decided: an asking mode Baton selects (``select``), a warning, or
    neither."""

    select: str | None = None
    warning: ModeWarning | None = None


def _shown(mode_id: str) -> str:
    return repr(mode_id[:MAX_MODE_TEXT_CHARS])


def _explicit_mode(requested: RequestedSettings, state: SessionState) -> str | None:
    """The mode the caller chose: ``mode``, else a ``config`` value of the mode option."""
    if requested.mode is not None:
        return requested.mode
    for option in state.options_in_category("mode"):
        if option.id in requested.config:
            return requested.config[option.id]
    return None


def _acts(declared: NativeModes, modes: SessionModes, mode_id: str) -> bool:
    approval = declared.approval(mode_id)
    if approval is not None:
        return approval == "acts"
    return says_it_bypasses(mode_id, modes.description(mode_id))


def guard_mode(
    declared: NativeModes,
    policy: PolicyName,
    requested: RequestedSettings,
    state: SessionState,
) -> ModeDecision:
    """Decide the run's native mode (see the module docstring).

    Raises :class:`ModeActsWithoutAsking` when the session starts in a declared self-acting
    mode under a guarded policy, nothing was chosen explicitly, and no declared asking mode is
    offered."""
    modes = session_modes(state)
    if modes is None:
        return ModeDecision()
    chosen = _explicit_mode(requested, state)
    if chosen is not None:
        if _acts(declared, modes, chosen):
            return ModeDecision(
                warning=ModeWarning(
                    MODE_ACTS_WITHOUT_ASKING,
                    f"mode {_shown(chosen)} was chosen explicitly and acts on its own: the "
                    "agent may edit or run commands without a permission request reaching "
                    f"Baton (policy {policy} is not consulted for them)",
                )
            )
        return ModeDecision()
    if policy not in GUARDED_POLICIES:
        return ModeDecision()
    current = modes.current
    approval = declared.approval(current)
    if approval == "acts":
        for candidate in declared.asking:
            if candidate in modes.ids:
                return ModeDecision(select=candidate)
        offered = ", ".join(_shown(m) for m in modes.ids[:16]) or "none"
        raise ModeActsWithoutAsking(
            f"the session starts in mode {_shown(current)}, which acts without asking, and "
            f"offers no mode that asks (offered: {offered}); under policy {policy} Baton "
            "refuses to prompt it: choose a mode explicitly with --mode, or another policy"
        )
    if approval is None and says_it_bypasses(current, modes.description(current)):
        return ModeDecision(
            warning=ModeWarning(
                MODE_MAY_BYPASS_APPROVALS,
                f"the session starts in mode {_shown(current)}, whose description says it "
                "may bypass approvals; choose a mode that asks with --mode",
            )
        )
    return ModeDecision()
