"""Protocol version negotiation (decisions.md item 1).

Baton offers the highest version it implements and accepts any version it implements; anything
else fails naming both numbers. ``protocolVersion`` is a wire version (an integer bumped only on
breaking changes), never a schema or package release number.
"""

from __future__ import annotations

from baton.errors import IncompatibleProtocolVersion

#: Every ACP wire version Baton can speak. The one place a new codec is announced: adding 2
#: here makes Baton offer 2 and still accept 1.
IMPLEMENTED_PROTOCOL_VERSIONS: frozenset[int] = frozenset({1})


def offered_version() -> int:
    """The version Baton sends in ``initialize``: the highest it implements."""
    return max(IMPLEMENTED_PROTOCOL_VERSIONS)


def accept_version(answered: object) -> int:
    """Return the agent's answered version if Baton implements it.

    Raises :class:`IncompatibleProtocolVersion` (agent fault) naming the offered and the answered
    version for anything else, a non-integer (``"1"``, ``true``, ``null``) included.
    """
    if (
        isinstance(answered, int)
        and not isinstance(answered, bool)
        and answered in IMPLEMENTED_PROTOCOL_VERSIONS
    ):
        return answered
    raise IncompatibleProtocolVersion(
        offered_version(), answered, tuple(sorted(IMPLEMENTED_PROTOCOL_VERSIONS))
    )
