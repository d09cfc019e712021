"""The seam between ACP wire versions and everything above layer 1.

The connection client, the lane and the turn ask a :class:`WireCodec` how the negotiated
version spells a method, reads a prompt's answer and reports session updates; two
implementations exist, :class:`AcpV1Codec` and :class:`AcpV2Codec`. What the layers above read
is one normalized shape (the v1 spelling of updates and permission requests, plus v2's
``state_update``), so callers of the session surface see no difference.

Negotiation (decisions.md item 1, issue 29): :func:`initialize_params` builds the request for a
:class:`~baton.wire.version.ProtocolChoice`; under ``auto`` it offers 1 (2 where the profile
declared v2 support) and carries both versions' fields (``clientInfo``/``clientCapabilities``
and ``info``/``capabilities``) so an agent of either version reads it; :func:`negotiate`
accepts the answer's version, refuses a v1 body labelled 2 naming the fix, and picks the
codec.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton._version import __version__
from baton.errors import MalformedResult, ProtocolVersionMislabelled
from baton.wire.capabilities import (
    NO_ELICITATION,
    ElicitationOffer,
    InitializeResult,
    parse_v1_initialize_result,
)
from baton.wire.capabilities import (
    initialize_params as v1_initialize_params,
)
from baton.wire.stop import PromptResult, parse_prompt_result
from baton.wire.v2.initialize import parse_v2_initialize_result, v2_initialize_fields
from baton.wire.v2.methods import AUTH_LOGIN, AUTH_LOGOUT, REMOVED_IN_V2, replay_from_start
from baton.wire.v2.permission import normalize_permission_params
from baton.wire.v2.turn import PromptAck, SessionActivity, parse_prompt_ack, parse_state_update
from baton.wire.v2.updates import SessionUpdateDecoder, is_idle
from baton.wire.version import (
    AUTO_CHOICE,
    PROTOCOL_V1,
    PROTOCOL_V2,
    ProtocolChoice,
)

#: A prompt's answer: settled (v1: the stop reason) or acknowledged (v2: the turn goes on).
PromptAnswer = PromptResult | PromptAck

__all__ = [
    "V1_CODEC",
    "V2_CODEC",
    "AcpV1Codec",
    "AcpV2Codec",
    "AttachPlan",
    "PromptAck",
    "PromptAnswer",
    "SessionActivity",
    "SessionUpdateDecoder",
    "WireCodec",
    "codec_for",
    "initialize_params",
    "is_idle",
    "negotiate",
    "parse_state_update",
]


@dataclass(frozen=True, slots=True)
class AttachPlan:
    """How to attach an existing session: the method and the extra params it needs."""

    method: str
    extra: Mapping[str, Any]
    #: The name Baton reports for the way it attached (``session/load`` also for a v2 replay).
    reported_as: str


class WireCodec(ABC):
    """How one ACP wire version spells what Baton does. Stateless; per-session update state
    lives in the decoders :meth:`session_decoder` makes."""

    #: The negotiated protocol version.
    version: int

    #: The methods that log in and out.
    login_method: str
    logout_method: str

    #: True when inbound updates and permission requests need decoding into the normalized
    #: shape (v2); False when they are read as sent (v1, the hot path untouched).
    normalizes: bool

    @abstractmethod
    def prompt_answer(self, result: object) -> PromptAnswer:
        """Parse a ``session/prompt`` result (:class:`MalformedResult` when it lacks what the
        version requires)."""

    @abstractmethod
    def session_decoder(self, session_id: str) -> SessionUpdateDecoder | None:
        """The update decoder of a new session, or None when updates are read as sent."""

    @abstractmethod
    def permission_params(
        self, params: object, request_id: object, decoder: SessionUpdateDecoder | None
    ) -> object:
        """A permission request's params in the normalized (v1) shape."""

    @abstractmethod
    def attach_plan(self, *, resume: bool, replay: bool) -> AttachPlan | None:
        """How to attach: ``resume`` and ``replay`` say what the agent advertised (v1:
        ``session/resume``, ``loadSession``). None when neither way exists."""

    def removed(self, method: str) -> bool:
        """True for a v1 method this version does not have (refused before sending)."""
        return False

    def replay_params(self) -> dict[str, Any]:
        """What ``session/resume`` adds to replay the history (v2 only: ``replayFrom``)."""
        return {}

    def mcp_servers(self, servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """ACP ``McpServer`` entries in this version's spelling (v1: as built)."""
        return servers

    def set_config_params(
        self, session_id: str, config_id: str, value: str | bool, *, boolean: bool
    ) -> dict[str, Any]:
        """``session/set_config_option`` params: v1 tags only a boolean value."""
        params: dict[str, Any] = {"sessionId": session_id, "configId": config_id}
        if boolean:
            params["type"] = "boolean"
        params["value"] = value
        return params


class AcpV1Codec(WireCodec):
    """ACP v1 (the stable schema): updates and permission requests are read as sent."""

    version = PROTOCOL_V1
    login_method = "authenticate"
    logout_method = "logout"
    normalizes = False

    def prompt_answer(self, result: object) -> PromptAnswer:
        return parse_prompt_result(result)

    def session_decoder(self, session_id: str) -> SessionUpdateDecoder | None:
        return None

    def permission_params(
        self, params: object, request_id: object, decoder: SessionUpdateDecoder | None
    ) -> object:
        return params

    def attach_plan(self, *, resume: bool, replay: bool) -> AttachPlan | None:
        if resume:
            return AttachPlan("session/resume", {}, "session/resume")
        if replay:
            return AttachPlan("session/load", {}, "session/load")
        return None


class AcpV2Codec(WireCodec):
    """The ACP v2 draft: acknowledged prompts ending in ``idle``, upserts decoded per session,
    permission subjects, ``auth/*`` and ``replayFrom``."""

    version = PROTOCOL_V2
    login_method = AUTH_LOGIN
    logout_method = AUTH_LOGOUT
    normalizes = True

    def prompt_answer(self, result: object) -> PromptAnswer:
        return parse_prompt_ack(result)

    def session_decoder(self, session_id: str) -> SessionUpdateDecoder | None:
        return SessionUpdateDecoder(session_id)

    def permission_params(
        self, params: object, request_id: object, decoder: SessionUpdateDecoder | None
    ) -> object:
        return normalize_permission_params(params, request_id, decoder)

    def attach_plan(self, *, resume: bool, replay: bool) -> AttachPlan | None:
        # v2 has no session/load: resume is baseline; a replay is resume with replayFrom.
        if resume:
            return AttachPlan("session/resume", {}, "session/resume")
        return None

    def replay_params(self) -> dict[str, Any]:
        return {"replayFrom": replay_from_start()}

    def resume_with_replay(self) -> AttachPlan:
        """``session/resume`` replaying the whole retained history (v1's session/load)."""
        return AttachPlan("session/resume", {"replayFrom": replay_from_start()}, "session/load")

    def removed(self, method: str) -> bool:
        return method in REMOVED_IN_V2

    def mcp_servers(self, servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
        # v2 tags every transport, stdio included (v1 leaves stdio untagged).
        return [server if "type" in server else {"type": "stdio", **server} for server in servers]

    def set_config_params(
        self, session_id: str, config_id: str, value: str | bool, *, boolean: bool
    ) -> dict[str, Any]:
        # v2 tags a select value too (``type: "id"``).
        kind = "boolean" if boolean else "id"
        return {"sessionId": session_id, "configId": config_id, "type": kind, "value": value}


V1_CODEC: Final = AcpV1Codec()
V2_CODEC: Final = AcpV2Codec()

_CODECS: Final[Mapping[int, WireCodec]] = {PROTOCOL_V1: V1_CODEC, PROTOCOL_V2: V2_CODEC}


def codec_for(version: int) -> WireCodec:
    """The codec of an implemented ``version`` (:class:`KeyError` otherwise: a caller bug, the
    version was accepted by :func:`negotiate`)."""
    return _CODECS[version]


def initialize_params(
    choice: ProtocolChoice = AUTO_CHOICE,
    client_version: str = __version__,
    elicitation: ElicitationOffer = NO_ELICITATION,
) -> dict[str, Any]:
    """The ``initialize`` params for ``choice``: v1 fields for a pinned 1, v2 fields for a
    pinned 2, both under ``auto`` (which offers 1, or 2 where the profile declared v2), so an
    agent of either version reads it. ``elicitation`` is advertised in the layout of each
    version sent."""
    offered = choice.offered
    if choice.pinned == PROTOCOL_V1:
        return {**v1_initialize_params(PROTOCOL_V1, client_version, elicitation)}
    v2_fields = v2_initialize_fields(client_version, elicitation)
    if choice.pinned == PROTOCOL_V2:
        return {"protocolVersion": offered, **v2_fields}
    return {**v1_initialize_params(offered, client_version, elicitation), **v2_fields}


def _v1_layout(result: Mapping[str, Any]) -> bool:
    """An answer in the v1 layout: none of v2's keys (``info``, ``capabilities``). v1 requires
    only ``protocolVersion`` (the official Python SDK 0.12.1's echo agent sends nothing else;
    fast-agent adds ``agentInfo`` and ``agentCapabilities``)."""
    return "info" not in result and "capabilities" not in result


def _mislabel_fix(choice: ProtocolChoice) -> str:
    """What to run instead of a choice that met a v1 agent answering 2."""
    if choice.pinned == PROTOCOL_V2:
        return "run it with --protocol auto (which offers 1) or --protocol 1"
    return 'run it with --protocol 1 (or set protocol = "1" in its profile)'


def negotiate(
    result: object, choice: ProtocolChoice = AUTO_CHOICE
) -> tuple[WireCodec, InitializeResult]:
    """Accept an ``initialize`` answer under ``choice`` and read it in its version's layout.

    Raises :class:`MalformedResult` when the result is not an object (or, for v2, lacks
    ``info``), :class:`~baton.errors.ProtocolVersionMislabelled` naming the fix when it says 2
    in the v1 layout (an agent echoing the offer), and
    :class:`~baton.errors.IncompatibleProtocolVersion` naming the offered and the answered
    version when ``choice`` does not accept the answer.
    """
    if not isinstance(result, Mapping):
        raise MalformedResult("the initialize result is not an object")
    version = choice.accept(result.get("protocolVersion"))
    if version == PROTOCOL_V2 and _v1_layout(result):
        raise ProtocolVersionMislabelled(choice.offered, _mislabel_fix(choice))
    if version == PROTOCOL_V2:
        return V2_CODEC, parse_v2_initialize_result(result, version)
    return V1_CODEC, parse_v1_initialize_result(result, version)
