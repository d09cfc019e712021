"""Protocol version negotiation (decisions.md item 1).

Baton offers the highest version it implements and accepts any version it implements; anything
else fails naming both numbers. ``protocolVersion`` is a wire version (an integer bumped only on
breaking changes), never a schema or package release number.

A run or a profile may pin the offer (``--protocol 1|2|auto``, the profile's ``protocol``
field): :class:`ProtocolChoice` says what is offered and what is accepted. ``auto`` offers the
highest implemented version and accepts every implemented one; a pinned number offers and
accepts that version only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from baton.errors import IncompatibleProtocolVersion, InvalidArgument

#: Every ACP wire version Baton can speak. The one place a new codec is announced: 2 here makes
#: Baton offer 2 and still accept 1.
IMPLEMENTED_PROTOCOL_VERSIONS: frozenset[int] = frozenset({1, 2})

#: The stable ACP version (the one every qualified adapter answers).
PROTOCOL_V1: Final = 1

#: The ACP v2 draft (schema of @agentclientprotocol/sdk 2.4.0).
PROTOCOL_V2: Final = 2

#: The spelling of "negotiate" in ``--protocol`` and a profile's ``protocol`` field.
AUTO: Final = "auto"

#: Every accepted spelling of a protocol choice, for flags and config validation.
PROTOCOL_CHOICES: Final = (AUTO, *(str(v) for v in sorted(IMPLEMENTED_PROTOCOL_VERSIONS)))


def offered_version() -> int:
    """The version Baton sends in ``initialize`` when nothing is pinned: the highest it
    implements."""
    return max(IMPLEMENTED_PROTOCOL_VERSIONS)


@dataclass(frozen=True, slots=True)
class ProtocolChoice:
    """What one connection offers and accepts. ``pinned`` is None for ``auto``."""

    pinned: int | None = None

    @property
    def offered(self) -> int:
        """The version sent in ``initialize``."""
        return self.pinned if self.pinned is not None else offered_version()

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
        raise IncompatibleProtocolVersion(self.offered, answered, tuple(sorted(self.accepted)))


#: The default choice: offer the highest, accept any implemented version.
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
