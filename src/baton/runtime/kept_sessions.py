"""The sessions a runtime keeps attached (warm) for their next turn, and their controls.

A run with ``keep_session=True`` leaves its provider session on its lane (a
:class:`~baton.runtime.lanes.lane.LaneSession` in ``lane.sessions``) for the next turn of the
same conversation. :class:`KeptSessions` is the one way to find one, by Baton's session id
or by the agent's (:meth:`KeptSessions.find`), and what a surface does with it: steer its
running turn, read and change its safe controls (``session/set_mode``, ``set_model``,
``set_config_option``, confirmed against the agent's answer), release or close it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from baton.errors import (
    BatonError,
    BudgetExpired,
    ConfigurationError,
    SessionMutationAmbiguous,
    TransportClosed,
)
from baton.runtime.lanes.lane import Lane, LaneSession
from baton.runtime.lanes.recorder import Recorder
from baton.runtime.turns.controls import (
    ControlSet,
    confirm_mutation,
    project_controls,
    refuse_while,
    resolve_control,
)
from baton.wire.extensions import steering

__all__ = ["Kept", "KeptSessions"]


@dataclass(frozen=True, slots=True)
class Kept:
    """A kept session and the lane that holds it."""

    lane: Lane
    session: LaneSession


class KeptSessions:
    """The kept sessions on a runtime's lanes (see the module docstring)."""

    def __init__(
        self, lanes: Mapping[tuple[str, str, str], Lane], recorder: Callable[[], Recorder | None]
    ) -> None:
        self._lanes = lanes
        #: The runtime's recorder while it is open (None after close).
        self._recorder = recorder

    def find(
        self,
        *,
        session_id: str | None = None,
        provider_session_id: str | None = None,
        running: bool = True,
    ) -> Kept | None:
        """The kept session named by Baton's session id or by the agent's (exactly one of
        them), on a lane of this runtime whose agent process runs (``running=False``: on any
        of its lanes); None when there is none."""
        for lane in self._lanes.values():
            if running and not lane.running:
                continue
            if provider_session_id is not None:
                session = lane.sessions.get(provider_session_id)
                if session is not None:
                    return Kept(lane, session)
                continue
            for session in lane.sessions.values():
                if session.session_id == session_id:
                    return Kept(lane, session)
        return None

    def kept_session(self, provider_session_id: str) -> LaneSession | None:
        """The kept (attached) session of agent session ``provider_session_id`` whose lane
        runs in this process, else None."""
        found = self.find(provider_session_id=provider_session_id)
        return found.session if found is not None else None

    async def steer(self, provider_session_id: str, text: str) -> steering.SteerAnswer | None:
        """Send ``text`` to the running turn of a kept session through the agent's steering
        extension (issue 29): the agent's answer, or None when no lane of this process holds
        the session or its agent does not advertise steering (nothing sent). Cancellation:
        as any bounded request (cancelled at the agent)."""
        found = self.find(provider_session_id=provider_session_id)
        if found is None or not found.lane.steering_supported:
            return None
        return await found.lane.steer(found.session, text)

    def release(self, provider_session_id: str) -> None:
        """Forget a kept session (the agent keeps it; nothing is sent)."""
        for lane in self._lanes.values():
            if provider_session_id in lane.sessions:
                lane.release(provider_session_id)

    async def close(self, provider_session_id: str) -> str:
        """Close a kept session: session/close when the agent advertises it, then released and
        recorded CLOSED; what happened, as a note for the conversation's record. Never
        starts a process only to close. Cancellation: cancelled while session/close is
        outstanding, the session is still released and recorded CLOSED."""
        note = "closed locally; the agent does not advertise session/close, so it keeps it"
        for lane in list(self._lanes.values()):
            kept = lane.sessions.get(provider_session_id)
            if kept is None:
                continue
            try:
                client = lane.client if lane.running else None
                if client is not None and client.capabilities.session_close:
                    note = "closed locally; session/close was not confirmed"
                    await client.close_session(provider_session_id)
                    note = "closed with session/close"
            except BatonError as exc:
                note = f"closed locally; session/close failed: {exc.code}"
            finally:
                lane.release(provider_session_id)
                recorder = self._recorder()
                if recorder is not None:
                    with contextlib.suppress(BatonError):
                        recorder.session_state(kept.session_id, "CLOSED")
        return note

    def _attached(self, session_id: str) -> tuple[Lane, LaneSession]:
        found = self.find(session_id=session_id)
        if found is None:
            raise ConfigurationError(
                f"session {session_id!r} is not attached here (run with keep_session=True)"
            )
        return found.lane, found.session

    def controls(self, session_id: str) -> ControlSet:
        """The safe BOOLEAN and SELECT controls of a kept session, with their revision."""
        lane, session = self._attached(session_id)
        assert lane.client is not None
        state = lane.client.session_state(session.provider_id)
        return project_controls(
            session.provider_id,
            state,
            grok_models=lane.extensions.models,
            secrets=lane.secrets,
            session_id=session_id,
        )

    async def apply_control(
        self, session_id: str, control_id: object, value: object, revision: object
    ) -> ControlSet:
        """Apply ``{controlId, value, revision}`` to a kept session and return the new controls.

        Refused (nothing sent, a caller-fault error with a stable code) while a run is active or
        recovery-required, for a stale revision, an unknown or immutable control, a wrong type
        or a choice the provider did not advertise. An answer that does not confirm the change
        makes it ambiguous: the lane is quarantined and SessionMutationAmbiguous raised.

        Cancellation: cancelling while the change is in flight leaves its outcome unknown, so
        it is treated like an unconfirmed answer: the lane is quarantined (shielded from a
        second cancellation) and the cancellation propagates. Cancelled before anything is
        sent, nothing changes.
        """
        lane, session = self._attached(session_id)
        refuse_while(
            "RUNNING" if session.active is not None else session.last_status, str(control_id)
        )
        controls = self.controls(session_id)
        mutation = resolve_control(controls, control_id, value, revision)
        if mutation.already_current:
            return controls
        client = lane.client
        recorder = self._recorder()
        assert client is not None and recorder is not None
        try:
            result = await client.session_call(
                session.provider_id, mutation.method, dict(mutation.params)
            )
            confirmed = confirm_mutation(
                mutation,
                client.session_state(session.provider_id),
                result,
                grok_models=lane.extensions.models,
            )
        except asyncio.CancelledError:
            task = asyncio.ensure_future(
                lane.quarantine("a control change was cancelled with its outcome unknown")
            )
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(task)
            raise
        except (SessionMutationAmbiguous, BudgetExpired, TransportClosed) as exc:
            await lane.quarantine(f"a control change has an unknown outcome: {exc.code}")
            if isinstance(exc, SessionMutationAmbiguous):
                raise
            raise SessionMutationAmbiguous(f"{mutation.method}: {exc.code}") from exc
        client.update_session_state(session.provider_id, confirmed.state)
        lane.extensions.confirmed_models(confirmed.grok_models)
        await recorder.session_resolved(
            session_id, None, confirmed.state, client.state_ref(session.provider_id)
        )
        return self.controls(session_id)
