"""Version negotiation: offer the highest implemented, accept any implemented, else fail."""

from __future__ import annotations

import pytest

from baton.errors import AgentError, IncompatibleProtocolVersion
from baton.wire.version import IMPLEMENTED_PROTOCOL_VERSIONS, accept_version, offered_version


def test_the_offer_is_the_highest_implemented_version() -> None:
    assert {1} == set(IMPLEMENTED_PROTOCOL_VERSIONS)
    assert offered_version() == 1


def test_an_implemented_answer_is_accepted() -> None:
    assert accept_version(1) == 1


@pytest.mark.parametrize("answered", [0, 2, 65535, -1])
def test_an_unimplemented_number_names_both_versions(answered: int) -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        accept_version(answered)
    error = caught.value
    assert isinstance(error, AgentError) and error.fault == "agent"
    assert error.code == "INCOMPATIBLE_PROTOCOL_VERSION"
    assert (error.offered, error.answered) == (1, answered)
    assert "offered protocol version 1" in error.message
    assert f"answered {answered}" in error.message


@pytest.mark.parametrize("answered", ["1", True, None, 1.0, [1], {"v": 1}])
def test_a_non_integer_answer_is_incompatible(answered: object) -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        accept_version(answered)
    assert caught.value.answered == answered
