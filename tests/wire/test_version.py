"""Version negotiation: offer the highest implemented, accept any implemented, else fail."""

from __future__ import annotations

import pytest

from baton.errors import AgentError, IncompatibleProtocolVersion, InvalidArgument
from baton.wire.version import (
    IMPLEMENTED_PROTOCOL_VERSIONS,
    ProtocolChoice,
    accept_version,
    offered_version,
    parse_protocol_choice,
)


def test_the_offer_is_the_highest_implemented_version() -> None:
    # Issue 21: the v2 codec exists, so Baton offers 2 and still accepts 1.
    assert {1, 2} == set(IMPLEMENTED_PROTOCOL_VERSIONS)
    assert offered_version() == 2


@pytest.mark.parametrize("answered", [1, 2])
def test_an_implemented_answer_is_accepted(answered: int) -> None:
    assert accept_version(answered) == answered


@pytest.mark.parametrize("answered", [0, 3, 65535, -1])
def test_an_unimplemented_number_names_both_versions(answered: int) -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        accept_version(answered)
    error = caught.value
    assert isinstance(error, AgentError) and error.fault == "agent"
    assert error.code == "INCOMPATIBLE_PROTOCOL_VERSION"
    assert (error.offered, error.answered) == (2, answered)
    assert "offered protocol version 2" in error.message
    assert f"answered {answered}" in error.message


@pytest.mark.parametrize("answered", ["1", True, None, 1.0, [1], {"v": 1}])
def test_a_non_integer_answer_is_incompatible(answered: object) -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        accept_version(answered)
    assert caught.value.answered == answered


@pytest.mark.parametrize(
    ("text", "offered", "accepted"),
    [("auto", 2, {1, 2}), ("1", 1, {1}), ("2", 2, {2}), (1, 1, {1}), (2, 2, {2})],
)
def test_a_protocol_choice_offers_and_accepts(
    text: object, offered: int, accepted: set[int]
) -> None:
    choice = parse_protocol_choice(text)
    assert choice.offered == offered
    assert set(choice.accepted) == accepted
    assert choice.label == str(text)


def test_a_pinned_choice_refuses_the_other_version_naming_both() -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        ProtocolChoice(1).accept(2)
    assert (caught.value.offered, caught.value.answered) == (1, 2)
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        ProtocolChoice(2).accept(1)
    assert (caught.value.offered, caught.value.answered) == (2, 1)


@pytest.mark.parametrize("text", ["3", "", "Auto", None, True, 0, "v2"])
def test_an_unknown_protocol_choice_is_invalid(text: object) -> None:
    with pytest.raises(InvalidArgument) as caught:
        parse_protocol_choice(text, source="profile field protocol")
    assert caught.value.code == "INVALID_ARGUMENT"
    assert "profile field protocol must be one of auto, 1, 2" in caught.value.message
