"""``acp-steering/session-steering@v1``: steering a running turn (issue 29).

codex-acp and claude-agent-acp ship the vendor request ``_session/steering`` (read from their
sources: claude-agent-acp 0.101.0 ``dist/acp-agent.js``, codex-acp 2.6.0 ``dist/index.js``;
their initialize answers are in tests/fixtures/adapters/*/features.protocol-1.json):

- advertised in the **top-level** ``_meta`` of the ``initialize`` result:
  ``{"_meta": {"steering": {"supported": true}}}`` (both adapters under ACP 1; codex-acp also
  under the v2 draft, claude-agent-acp 0.101.0 not);
- request ``{sessionId, prompt: ContentBlock[], _meta?: {steering: {idleBehavior:
  "promptRequired"}}}``: the prompt joins the turn that is running;
- answer ``{outcome, reason?}``: ``injected`` (it joined the running turn), ``startedNewTurn``
  (no turn was running and the adapter started one itself: the legacy default),
  ``promptRequired`` (no turn was running and the client opted in to own the text: the adapter
  did nothing), ``failed``.

Baton always opts in (``idleBehavior: "promptRequired"``): a turn the adapter starts on its own
would stream outside any Baton run, so an idle session's text is Baton's to queue as the next
turn. Nothing here decides whether the contract applies: only a profile whose ``extensions``
name :data:`EXTENSION` reads the advertisement (``_meta`` is opaque by the protocol's rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import ExtensionPayloadInvalid, InvalidArgument

#: The contract's name (a profile's ``extensions`` entry).
EXTENSION: Final = "acp-steering/session-steering@v1"

#: The request's method.
METHOD: Final = "_session/steering"

#: The outcomes the adapters answer.
INJECTED: Final = "injected"
STARTED_NEW_TURN: Final = "startedNewTurn"
PROMPT_REQUIRED: Final = "promptRequired"
FAILED: Final = "failed"
OUTCOMES: Final = frozenset({INJECTED, STARTED_NEW_TURN, PROMPT_REQUIRED, FAILED})

#: Characters of steering text accepted (a follow-up message, not a document: far below the
#: frame cap, far above anything typed); more is INVALID_ARGUMENT.
MAX_STEER_CHARS: Final = 64 * 1024

#: Characters kept of an outcome or reason the agent sent (unknown ones are kept verbatim).
MAX_OUTCOME_CHARS: Final = 128


def advertised(initialize_result: object) -> bool:
    """True when the raw ``initialize`` result says ``_meta.steering.supported: true``."""
    meta = initialize_result.get("_meta") if isinstance(initialize_result, Mapping) else None
    steering = meta.get("steering") if isinstance(meta, Mapping) else None
    return isinstance(steering, Mapping) and steering.get("supported") is True


def steer_params(session_id: str, text: str) -> dict[str, Any]:
    """The request's params: the text as one text block, opting in to own an idle session's
    text. Raises :class:`InvalidArgument` for empty text or text over
    :data:`MAX_STEER_CHARS`."""
    if not text.strip():
        raise InvalidArgument("steering text is empty")
    if len(text) > MAX_STEER_CHARS:
        raise InvalidArgument(f"steering text is over {MAX_STEER_CHARS:,} characters")
    return {
        "sessionId": session_id,
        "prompt": [{"type": "text", "text": text}],
        "_meta": {"steering": {"idleBehavior": PROMPT_REQUIRED}},
    }


@dataclass(frozen=True, slots=True)
class SteerAnswer:
    """What the agent answered: ``outcome`` verbatim (``known`` False for one Baton does not
    know), and its ``reason`` if any."""

    outcome: str
    reason: str | None = None

    @property
    def known(self) -> bool:
        """True for one of :data:`OUTCOMES`."""
        return self.outcome in OUTCOMES

    def to_json(self) -> dict[str, Any]:
        """``{outcome, reason?}``."""
        view: dict[str, Any] = {"outcome": self.outcome}
        if self.reason is not None:
            view["reason"] = self.reason
        return view


def parse_steer_result(result: object) -> SteerAnswer:
    """Read the answer. Raises :class:`ExtensionPayloadInvalid` when it is not an object with a
    string ``outcome``."""
    outcome = result.get("outcome") if isinstance(result, Mapping) else None
    if not isinstance(outcome, str) or not outcome:
        raise ExtensionPayloadInvalid(f"{METHOD}: the answer has no outcome")
    reason = result.get("reason") if isinstance(result, Mapping) else None
    return SteerAnswer(
        outcome[:MAX_OUTCOME_CHARS],
        reason[:MAX_OUTCOME_CHARS] if isinstance(reason, str) else None,
    )
