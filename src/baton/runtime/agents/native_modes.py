"""Native session modes and approvals: which of an agent's own modes route permission requests
to the client (Baton) and which act on their own.

A profile declares its agent's modes (:class:`NativeModes`); Baton's session setup
(:mod:`baton.runtime.sessions.mode_guard`) reads the declaration to keep a policy that asks
from being silently bypassed by the mode a session starts in. A mode no declaration names
(every mode of an agent started with ``--agent-command``) is judged by one documented rule,
:data:`BYPASS_WORDS`, over its id and description: a match only warns, it never refuses.
docs/permissions.md states the whole rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from baton.errors import ConfigurationError
from baton.wire.session_state import SessionState

#: How a mode treats approvals: ``asks`` routes permission requests to the client; ``acts``
#: decides on its own (edits, commands, or both, without a request reaching Baton).
ModeApproval = Literal["asks", "acts"]

#: The rule for modes no profile declares: a mode whose id or description says it bypasses
#: approvals. Case-insensitive, matched anywhere; a bounded alternation of literals with
#: optional separators (no nested quantifier: linear in the text's length).
BYPASS_WORDS: Final = re.compile(
    r"bypass|yolo|dangerously|full[ _-]?access|auto[ _-]?(?:approve|accept)"
    r"|without (?:asking|approval|permission|prompting)"
    r"|\b(?:don'?t|never|no|skips?)[ _-]?(?:ask|prompt|approval|permission)"
    r"|handles? permission",
    re.IGNORECASE,
)

#: The most characters of a mode's id and description the rule reads (and a message quotes):
#: protects setup from an agent that sends a huge description.
MAX_MODE_TEXT_CHARS: Final = 512


@dataclass(frozen=True, slots=True)
class NativeModes:
    """A profile's declaration of its agent's native modes.

    ``asking``: modes that route approvals to the client, in the order Baton prefers to select
    one. ``self_acting``: modes that act on their own. A mode in neither is undeclared (judged
    by :data:`BYPASS_WORDS`).
    """

    asking: tuple[str, ...] = ()
    self_acting: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        both = sorted(set(self.asking) & self.self_acting)
        if both:
            raise ConfigurationError(f"modes {both} cannot both ask and act on their own")

    def approval(self, mode_id: str) -> ModeApproval | None:
        """How ``mode_id`` treats approvals, or None when the profile does not declare it."""
        if mode_id in self.asking:
            return "asks"
        if mode_id in self.self_acting:
            return "acts"
        return None


#: Nothing declared (custom agents, profiles whose agent has no modes or whose modes are
#: unknown): every mode is judged by :data:`BYPASS_WORDS`.
UNDECLARED: Final = NativeModes()


@dataclass(frozen=True, slots=True)
class SessionModes:
    """A session's native modes as the agent reported them: the current id and every mode
    offered (id and description), from ``modes`` or else the ``mode`` config option."""

    current: str
    offered: tuple[tuple[str, str], ...]

    def description(self, mode_id: str) -> str:
        """The description of ``mode_id`` (empty when none), cut to the rule's bound."""
        for offered_id, description in self.offered:
            if offered_id == mode_id:
                return description[:MAX_MODE_TEXT_CHARS]
        return ""

    @property
    def ids(self) -> tuple[str, ...]:
        """The offered ids, in the agent's order."""
        return tuple(mode_id for mode_id, _ in self.offered)


def session_modes(state: SessionState) -> SessionModes | None:
    """The session's modes, or None when the agent has none (then nothing here applies)."""
    if state.modes is not None:
        return SessionModes(
            state.modes.current_mode_id,
            tuple((m.id, m.description or m.name) for m in state.modes.available),
        )
    for option in state.options_in_category("mode"):
        if isinstance(option.current_value, str):
            return SessionModes(
                option.current_value,
                tuple((c.value, c.description or c.name) for c in option.choices),
            )
    return None


def says_it_bypasses(mode_id: str, description: str) -> bool:
    """The documented rule for an undeclared mode: its id or description says it bypasses
    approvals (:data:`BYPASS_WORDS`, over at most :data:`MAX_MODE_TEXT_CHARS` of each)."""
    text = f"{mode_id[:MAX_MODE_TEXT_CHARS]}\n{description[:MAX_MODE_TEXT_CHARS]}"
    return BYPASS_WORDS.search(text) is not None
