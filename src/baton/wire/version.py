"""Protocol version negotiation (decisions.md item 1).

Baton offers the stable version (1) unless the agent's profile declared v2 support, and
accepts any version it implements; anything else fails naming both numbers. ``protocolVersion``
is a wire version (an integer bumped only on breaking changes), never a schema or package
release number.

A run or a profile may pin the offer (``--protocol 1|2|auto``, the profile's ``protocol``
field): :class:`ProtocolChoice` says what is offered and what is accepted. ``auto`` offers 1
(2 where the profile declared v2 support, ``v2_declared``) and accepts every implemented
version the agent answers in that version's layout (issue 29: the v2 draft is opt-in); a pinned
number offers and accepts that version only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from baton.errors import IncompatibleProtocolVersion, InvalidArgument

#: Every ACP wire version Baton can speak. The one place a new codec is announced: 2 here makes
#: Baton accept 2 (offered only where a profile declares it or a run pins it, issue 29).
IMPLEMENTED_PROTOCOL_VERSIONS: frozenset[int] = frozenset({1, 2})

#: The stable ACP version (the one every qualified adapter answers).
PROTOCOL_V1: Final = 1

#: The ACP v2 draft (schema of @agentclientprotocol/sdk 2.4.0).
PROTOCOL_V2: Final = 2

#: The spelling of "negotiate" in ``--protocol`` and a profile's ``protocol`` field.
AUTO: Final = "auto"

#: Every accepted spelling of a protocol choice, for flags and config validation.
PROTOCOL_CHOICES: Final = (AUTO, *(str(v) for v in sorted(IMPLEMENTED_PROTOCOL_VERSIONS)))


def offered_version(*, v2_declared: bool = False) -> int:
    """The version Baton sends in ``initialize`` when nothing is pinned: the stable version 1,
    or 2 for an agent whose profile declared v2 support (the draft is an explicit opt-in)."""
    return PROTOCOL_V2 if v2_declared else PROTOCOL_V1


@dataclass(frozen=True, slots=True)
class ProtocolChoice:
    """What one connection offers and accepts. ``pinned`` is None for ``auto``;
    ``v2_declared`` is the profile's declaration that its agent speaks the v2 draft (only
    ``auto`` reads it: it then offers 2)."""

    pinned: int | None = None
    v2_declared: bool = False

    @property
    def offered(self) -> int:
        """The version sent in ``initialize``."""
        if self.pinned is not None:
            return self.pinned
        return offered_version(v2_declared=self.v2_declared)

    @property
    def accepted(self) -> frozenset[int]:
        """The versions an answer may carry."""
        if self.pinned is not None:
            return frozenset({self.pinned})
        return IMPLEMENTED_PROTOCOL_VERSIONS

    @property
    def label(self) -> str:
        """``auto``, ``1`` or ``2``: the spelling a flag or a profile uses."""
        return AUTO if self.pinned is None else str(self.pinned)

    def accept(self, answered: object) -> int:
        """Return the agent's answered version if this choice accepts it.

        Raises :class:`IncompatibleProtocolVersion` (agent fault) naming the offered and the
        answered version for anything else, a non-integer (``"1"``, ``true``, ``null``) included.
        """
        if (
            isinstance(answered, int)
            and not isinstance(answered, bool)
            and answered in self.accepted
        ):
            return answered
        raise IncompatibleProtocolVersion(
            self.offered, answered, tuple(sorted(self.accepted)), hint=self._hint(answered)
        )

    def _hint(self, answered: object) -> str | None:
        """What to run instead when a pinned version meets an agent of another implemented
        version (``--protocol 2`` against a v1 agent: ``auto``)."""
        if self.pinned is None or answered not in IMPLEMENTED_PROTOCOL_VERSIONS:
            return None
        return f"the agent speaks version {answered}: run it with --protocol auto"

    def declaring_v2(self, declared: bool) -> ProtocolChoice:
        """This choice for an agent whose profile did (or did not) declare v2 support."""
        return ProtocolChoice(self.pinned, v2_declared=declared)


#: The default choice: offer 1, accept any implemented version.
AUTO_CHOICE: Final = ProtocolChoice()


def parse_protocol_choice(text: object, *, source: str = "--protocol") -> ProtocolChoice:
    """Read ``auto``, ``1`` or ``2`` (``source`` names the flag or field in the error).

    Raises :class:`InvalidArgument` for anything else, naming the accepted spellings.
    """
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if text == AUTO:
        return AUTO_CHOICE
    if isinstance(text, str) and text in PROTOCOL_CHOICES:
        return ProtocolChoice(int(text))
    raise InvalidArgument(
        f"{source} must be one of {', '.join(PROTOCOL_CHOICES)} (got {str(text)[:32]!r})"
    )


def accept_version(answered: object) -> int:
    """Return the agent's answered version if Baton implements it (the ``auto`` choice).

    Raises :class:`IncompatibleProtocolVersion` (agent fault) naming the offered and the
    answered version for anything else, a non-integer (``"1"``, ``true``, ``null``) included.
    """
    return AUTO_CHOICE.accept(answered)
