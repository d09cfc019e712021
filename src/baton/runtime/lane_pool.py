"""The lanes of one runtime, one per runtime identity (profile, executable, lane name):
which lane a run uses (:meth:`LanePool.lane_for`), and when an idle lane is replaced (the
profile's executable changed, its process was offered fewer elicitation modes, another ACP
version pin)."""

from __future__ import annotations

from collections.abc import Callable

from baton.runtime.agents.launch import CUSTOM_PROFILE_ID, LaunchSpec
from baton.runtime.lanes.lane import Lane
from baton.runtime.turns.events import RunEvent
from baton.wire.capabilities import NO_ELICITATION, ElicitationOffer

__all__ = ["LaneIdentity", "LanePool"]

#: A lane's runtime identity: (profile id, executable, lane name).
LaneIdentity = tuple[str, str, str]


def _offers_less(advertised: ElicitationOffer, wanted: ElicitationOffer) -> bool:
    """Whether a process offered ``advertised`` lacks a mode of ``wanted``."""
    return (wanted.form and not advertised.form) or (wanted.url and not advertised.url)


class LanePool:
    """The lanes of one runtime (see the module docstring)."""

    def __init__(self, make: Callable[[LaunchSpec], Lane]) -> None:
        #: How a new lane is made (the runtime's journal, recorder and request limit).
        self._make = make
        #: The lanes, by runtime identity.
        self.lanes: dict[LaneIdentity, Lane] = {}
        #: Discovery fingerprints of the executables resolved, by lane identity.
        self.fingerprints: dict[LaneIdentity, tuple[object, ...] | None] = {}

    async def lane_for(
        self,
        spec: LaunchSpec,
        emit: Callable[[RunEvent], None] | None = None,
        *,
        elicitation: ElicitationOffer = NO_ELICITATION,
    ) -> Lane:
        """The lane of ``spec``'s runtime identity, created on first use (started lazily).

        When the profile's executable changed since a lane of the same profile and lane name
        started (another path, or the same path with another file), an idle old lane is shut
        down; one with an active or ambiguous prompt is never terminated for a settings
        change: it keeps running and the change waits (a ``warning`` event says so).

        ``elicitation``: the modes the calling run can answer. A running lane whose process was
        offered fewer (another run started it) is replaced when it is idle and holds no kept
        session, so the run's agent is offered them; otherwise it keeps running and the run is
        not offered elicitation (advertisement is per process, at initialize).
        """
        fingerprint = self.fingerprints.get(spec.identity)
        for identity, old in list(self.lanes.items()):
            same_lane = identity[0] == spec.profile_id and identity[2] == spec.lane
            changed = identity != spec.identity or (
                fingerprint is not None
                and old.fingerprint is not None
                and old.fingerprint != fingerprint
            )
            if not (same_lane and changed) or spec.profile_id == CUSTOM_PROFILE_ID:
                continue
            if old.busy:
                if emit is not None:
                    emit(
                        RunEvent(
                            "warning",
                            "",
                            {
                                "code": "RUNTIME_RESTART_REQUIRED",
                                "message": "the agent's executable changed; its lane has an "
                                "active or ambiguous prompt, so it keeps running until that ends",
                            },
                        )
                    )
                continue
            await old.shutdown()
            del self.lanes[identity]
        lane = self.lanes.get(spec.identity)
        if (
            lane is not None
            and lane.running
            and _offers_less(lane.advertised, elicitation)
            and not lane.busy
            and not lane.sessions
        ):
            # Elicitation is negotiated once, at initialize: an idle lane started for a run
            # nobody answers is replaced for one somebody does (never downgraded: later
            # unattended runs on it are declined, no_answerer).
            await lane.shutdown()
            del self.lanes[spec.identity]
            lane = None
        if lane is not None and lane.spec.protocol != spec.protocol and not lane.busy:
            # Another ACP version pin (--protocol): an idle lane is replaced, since its
            # version was negotiated once, at initialize. A busy one keeps running.
            await lane.shutdown()
            del self.lanes[spec.identity]
            lane = None
        if lane is None:
            lane = self._make(spec)
            lane.fingerprint = fingerprint
            self.lanes[spec.identity] = lane
        return lane
