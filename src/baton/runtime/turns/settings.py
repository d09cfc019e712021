"""Requested native settings, applied in order and revalidated before every prompt.

Order: mode, model, reasoning effort, then other config values. Only values that differ from
what the session reports are sent. A config mutation counts only when its answer carries the
complete configOptions and confirms the value; anything else makes the session's state
ambiguous (:class:`SessionMutationAmbiguous`), which quarantines the lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from baton.connection.client import AcpClient
from baton.errors import (
    BudgetExpired,
    ChoiceNotAdvertised,
    SessionMutationAmbiguous,
    TransportClosed,
)
from baton.wire.session_state import SessionState
from baton.wire.thinking import resolve_effort, resolve_model


@dataclass(frozen=True, slots=True)
class RequestedSettings:
    """What the user asked for, in provider terms (exact ids; effort matched by normalizing)."""

    mode: str | None = None
    model: str | None = None
    effort: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        """True when nothing was requested."""
        return self.mode is None and self.model is None and self.effort is None and not self.config


def _config_value(state: SessionState, config_id: str, raw: str) -> str | bool:
    option = state.config_option(config_id)
    if option is None:
        advertised = tuple(o.id for o in state.config_options)
        raise ChoiceNotAdvertised("config option", config_id, advertised)
    if option.type == "boolean":
        lowered = raw.strip().lower()
        if lowered in ("true", "on", "yes", "1"):
            return True
        if lowered in ("false", "off", "no", "0"):
            return False
        raise ChoiceNotAdvertised(f"boolean value of {config_id}", raw, ("true", "false"))
    return raw


async def apply_settings(
    client: AcpClient,
    session_id: str,
    requested: RequestedSettings,
    *,
    allow_legacy_set_model: bool = False,
) -> tuple[SessionState, int]:
    """Apply what differs; return the resulting state and how many mutations were sent.

    Raises :class:`ChoiceNotAdvertised` (nothing sent for it) for values the session did not
    advertise, and :class:`SessionMutationAmbiguous` when a mutation's outcome is not confirmed.
    """
    sent = 0
    state = client.session_state(session_id)
    try:
        if requested.mode is not None:
            if state.modes is not None:
                if state.modes.current_mode_id != requested.mode:
                    await client.set_mode(session_id, requested.mode)
                    sent += 1
            else:
                modes = state.options_in_category("mode")
                if not modes:
                    raise ChoiceNotAdvertised("mode", requested.mode, ())
                sent += await _set_config(client, session_id, modes[0].id, requested.mode)
            state = client.session_state(session_id)
        if requested.model is not None:
            selection = resolve_model(state, requested.model)
            if not selection.already_current:
                if selection.method == "session/set_model":
                    await client.set_model(
                        session_id,
                        selection.value,
                        allow_legacy_set_model=allow_legacy_set_model,
                    )
                    sent += 1
                else:
                    assert selection.config_id is not None
                    sent += await _set_config(
                        client, session_id, selection.config_id, selection.value
                    )
            state = client.session_state(session_id)
        if requested.effort is not None:
            selection = resolve_effort(state, requested.effort)
            if not selection.already_current:
                if selection.config_id is None:
                    # The effort lives in a parameterized model id: switch model.
                    if selection.method == "session/set_model":
                        await client.set_model(
                            session_id,
                            selection.value,
                            allow_legacy_set_model=allow_legacy_set_model,
                        )
                        sent += 1
                else:
                    sent += await _set_config(
                        client, session_id, selection.config_id, selection.value
                    )
            state = client.session_state(session_id)
        for config_id, raw in requested.config.items():
            value = _config_value(state, config_id, raw)
            option = state.config_option(config_id)
            if option is not None and option.current_value != value:
                sent += await _set_config(client, session_id, config_id, value)
                state = client.session_state(session_id)
    except (BudgetExpired, TransportClosed) as exc:
        if sent or isinstance(exc, TransportClosed):
            raise SessionMutationAmbiguous(
                f"a session setting's outcome is unknown: {exc.code}"
            ) from exc
        raise
    return client.session_state(session_id), sent


async def _set_config(client: AcpClient, session_id: str, config_id: str, value: str | bool) -> int:
    try:
        confirmation = await client.set_config_option(session_id, config_id, value)
    except (BudgetExpired, TransportClosed) as exc:
        raise SessionMutationAmbiguous(
            f"session/set_config_option {config_id} has an unknown outcome: {exc.code}"
        ) from exc
    if not confirmation.complete or not confirmation.confirmed:
        raise SessionMutationAmbiguous(
            f"session/set_config_option {config_id} was not confirmed by a complete "
            f"configOptions answer ({confirmation.reason or 'unconfirmed'})"
        )
    return 1
