"""Version negotiation: offer the stable 1 (2 only where a profile declared v2), accept any
implemented, else fail."""

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


def test_the_offer_is_stable_v1_unless_v2_was_declared() -> None:
    # Issue 29: the v2 draft is opt-in; auto offers 1 and still accepts 2.
    assert {1, 2} == set(IMPLEMENTED_PROTOCOL_VERSIONS)
    assert offered_version() == 1
    assert offered_version(v2_declared=True) == 2
    assert ProtocolChoice(v2_declared=True).offered == 2
    assert ProtocolChoice(1, v2_declared=True).offered == 1
    assert ProtocolChoice().declaring_v2(True) == ProtocolChoice(v2_declared=True)
    assert ProtocolChoice(2).declaring_v2(True).pinned == 2


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
    assert (error.offered, error.answered) == (1, answered)
    assert "offered protocol version 1" in error.message
    assert f"answered {answered}" in error.message


@pytest.mark.parametrize("answered", ["1", True, None, 1.0, [1], {"v": 1}])
def test_a_non_integer_answer_is_incompatible(answered: object) -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        accept_version(answered)
    assert caught.value.answered == answered


@pytest.mark.parametrize(
    ("text", "offered", "accepted"),
    [("auto", 1, {1, 2}), ("1", 1, {1}), ("2", 2, {2}), (1, 1, {1}), (2, 2, {2})],
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
    assert "--protocol auto" in caught.value.message
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        ProtocolChoice(2).accept(1)
    assert (caught.value.offered, caught.value.answered) == (2, 1)
    # Issue 29: --protocol 2 against a v1 agent says what to run instead.
    assert "the agent speaks version 1: run it with --protocol auto" in caught.value.message


def test_an_unimplemented_answer_to_a_pin_has_no_hint() -> None:
    with pytest.raises(IncompatibleProtocolVersion) as caught:
        ProtocolChoice(2).accept(3)
    assert "--protocol" not in caught.value.message


@pytest.mark.parametrize("text", ["3", "", "Auto", None, True, 0, "v2"])
def test_an_unknown_protocol_choice_is_invalid(text: object) -> None:
    with pytest.raises(InvalidArgument) as caught:
        parse_protocol_choice(text, source="profile field protocol")
    assert caught.value.code == "INVALID_ARGUMENT"
    assert "profile field protocol must be one of auto, 1, 2" in caught.value.message
