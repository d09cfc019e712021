"""Session controls: the safe BOOLEAN and SELECT settings of one session, and changes to them.

:func:`project_controls` turns a session's native state into a :class:`ControlSet`: each control
keeps the provider's exact ids and values, and the set carries a ``revision`` of the catalog the
viewer saw. A surface sends back only ``{controlId, value, revision}``
(:func:`parse_control_request`); :func:`resolve_control` checks it against the set and says which
ACP method applies it, with its exact params (:class:`ControlMutation`). Nothing else a caller
sends can reach the agent: no method name, no params, no ``_meta``.

Control ids (stable; a surface never builds them, it echoes what a view showed):

- ``mode``: the session's mode. From ``modes`` (applied by ``session/set_mode``), else from the
  first select config option of category ``mode`` (``session/set_config_option``). When both
  exist and the option's values are exactly the mode ids, the option mirrors ``modes`` and is
  not shown a second time.
- ``model``: the model. From the first select config option of category ``model``
  (``session/set_config_option``); else, for the Grok profile, from its session catalog
  (``session/set_model``); else from the legacy ``models`` object, shown but not mutable (the
  legacy method is never used outside the profile that owns it).
- ``effort``: Grok only, when the current model of its catalog advertises reasoning efforts
  (``session/set_model`` with the current model and ``_meta.reasoningEffort``).
- ``config:<configId>``: every other select or boolean config option, ``configId`` exact.

Safety: a selector whose id or label names a credential (:func:`~baton.redaction.
is_credential_name`), or whose id, label, values or choice labels contain something the
credential patterns (or the profile's exact secrets) would redact, is left out whole, as is one
whose id, label or a value exceeds :data:`MAX_CONTROL_TEXT_CHARS` (ids are never shortened) or
with more than :data:`MAX_CHOICES_PER_CONTROL` choices. Descriptions and every ``_meta`` are
never copied. :attr:`ControlSet.omitted` counts what was left out, without naming it.

The revision is the SHA-256 (hex) of the canonical JSON (sorted keys, no spaces, UTF-8) of
``{"providerSessionId": ..., "controls": [...]}``, each control in its :meth:`SessionControl.
to_json` form plus the method and config id that would apply it; any change to what a viewer
could see or what a change would send changes the revision.

JSON views (field names are stable):

- :meth:`ControlSet.to_json`: ``{"providerSessionId", "sessionId", "revision", "omitted",
  "controls"}``;
- :meth:`SessionControl.to_json`: ``{"id", "label", "group", "type", "value", "choices",
  "mutable"}``; ``type`` is ``"BOOLEAN"`` or ``"SELECT"``, ``choices`` is ``[]`` for a boolean;
- :meth:`ControlChoice.to_json`: ``{"value", "label", "group", "groupLabel"}``;
- :meth:`ControlMutation.to_json`: ``{"controlId", "method", "params", "value",
  "alreadyCurrent"}``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from baton.errors import (
    ControlBusy,
    ControlChoiceNotAdvertised,
    ControlNotMutable,
    ControlRevisionStale,
    ControlUnknown,
    ControlWrongType,
    InvalidArgument,
    SessionMutationAmbiguous,
)
from baton.redaction import SecretValues, is_credential_name, redact_text
from baton.store import ACTIVE_RUN_STATUSES
from baton.store.models import RunStatus
from baton.wire.extensions.grok import GrokModelCatalog, set_model_params
from baton.wire.session_state import (
    BOOLEAN,
    SELECT,
    ConfigOption,
    ConfigValue,
    SessionState,
    parse_set_config_option_response,
)

ControlType = Literal["BOOLEAN", "SELECT"]
ApplyMethod = Literal["session/set_mode", "session/set_config_option", "session/set_model"]

#: The mode control's id.
MODE_CONTROL_ID: Final = "mode"
#: The model control's id.
MODEL_CONTROL_ID: Final = "model"
#: The Grok reasoning effort control's id.
EFFORT_CONTROL_ID: Final = "effort"
#: The prefix of a config option's control id (``config:<configId>``).
CONFIG_CONTROL_PREFIX: Final = "config:"

#: Most controls one set holds (later selectors are omitted). Bounds a view's size and the
#: revision's work against an agent that advertises thousands of options.
MAX_CONTROLS: Final = 64

#: Most choices one control may have; a selector with more is omitted whole (a partial list
#: would hide advertised values). Cursor lists a few dozen models.
MAX_CHOICES_PER_CONTROL: Final = 1024

#: Longest id, label or value a control may show. Exact ids are never shortened, so a longer
#: one omits its selector; protects views from absurd provider strings.
MAX_CONTROL_TEXT_CHARS: Final = 256

#: How many advertised values an error message lists at most.
MAX_LISTED_CHOICES: Final = 16

#: Run statuses during which controls cannot change: a turn in flight (or queued to start), or
#: an ambiguous outcome that recovery must settle first.
BUSY_RUN_STATUSES: Final = frozenset(ACTIVE_RUN_STATUSES | {"QUEUED", "RECOVERY_REQUIRED"})

#: The keys a control change request may carry: exactly these, nothing more.
REQUEST_KEYS: Final = frozenset({"controlId", "value", "revision"})


@dataclass(frozen=True, slots=True)
class ControlChoice:
    """One choice of a SELECT control: the exact value to send and its label; ``group`` and
    ``group_label`` for grouped selects."""

    value: str
    label: str
    group: str | None = None
    group_label: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"value", "label", "group", "groupLabel"}``."""
        return {
            "value": self.value,
            "label": self.label,
            "group": self.group,
            "groupLabel": self.group_label,
        }


@dataclass(frozen=True, slots=True)
class SessionControl:
    """One safe control. ``method`` and ``config_id`` say how a change is applied (None when it
    is not mutable); they are not part of the JSON view."""

    id: str
    label: str
    #: What the control is about: ``mode``, ``model``, ``thought_level`` or a config option's
    #: category verbatim (None when it has none).
    group: str | None
    type: ControlType
    value: ConfigValue
    choices: tuple[ControlChoice, ...]
    mutable: bool
    method: ApplyMethod | None = None
    config_id: str | None = None

    def values(self) -> tuple[str, ...]:
        """The advertised choice values (empty for a BOOLEAN)."""
        return tuple(choice.value for choice in self.choices)

    def to_json(self) -> dict[str, Any]:
        """``{"id", "label", "group", "type", "value", "choices", "mutable"}``."""
        return {
            "id": self.id,
            "label": self.label,
            "group": self.group,
            "type": self.type,
            "value": self.value,
            "choices": [choice.to_json() for choice in self.choices],
            "mutable": self.mutable,
        }

    def _canonical(self) -> dict[str, Any]:
        return {**self.to_json(), "method": self.method, "configId": self.config_id}


@dataclass(frozen=True, slots=True)
class ControlSet:
    """A session's controls and the revision of that catalog."""

    provider_session_id: str
    controls: tuple[SessionControl, ...]
    revision: str
    #: Selectors not projected (sensitive, oversized, past :data:`MAX_CONTROLS`, or of a shape
    #: Baton does not model); counted, never named.
    omitted: int = 0
    #: Baton's own session id, when the caller knows it (not part of the revision).
    session_id: str | None = None

    def control(self, control_id: str) -> SessionControl | None:
        """The control with exactly this id."""
        for control in self.controls:
            if control.id == control_id:
                return control
        return None

    def ids(self) -> tuple[str, ...]:
        """Every control id, in display order."""
        return tuple(control.id for control in self.controls)

    def to_json(self) -> dict[str, Any]:
        """``{"providerSessionId", "sessionId", "revision", "omitted", "controls"}``."""
        return {
            "providerSessionId": self.provider_session_id,
            "sessionId": self.session_id,
            "revision": self.revision,
            "omitted": self.omitted,
            "controls": [control.to_json() for control in self.controls],
        }


def catalog_revision(provider_session_id: str, controls: tuple[SessionControl, ...]) -> str:
    """The revision of a control catalog (see the module docstring for the exact form)."""
    canonical = orjson.dumps(
        {
            "providerSessionId": provider_session_id,
            "controls": [control._canonical() for control in controls],
        },
        option=orjson.OPT_SORT_KEYS,
    )
    return hashlib.sha256(canonical).hexdigest()


class _Safety:
    """The sensitivity and size rules for one projection."""

    def __init__(self, secrets: SecretValues | None) -> None:
        self._secrets = secrets

    def _redacts(self, text: str) -> bool:
        return redact_text(text, self._secrets) != text

    def name_ok(self, text: str) -> bool:
        """An id or label: bounded, not a credential name, nothing the patterns redact."""
        return (
            len(text) <= MAX_CONTROL_TEXT_CHARS
            and not is_credential_name(text)
            and not self._redacts(text)
        )

    def value_ok(self, text: str) -> bool:
        """A value or choice label: bounded and nothing the patterns redact."""
        return len(text) <= MAX_CONTROL_TEXT_CHARS and not self._redacts(text)

    def control_ok(self, control: SessionControl) -> bool:
        """Every shown string of ``control`` passes, and its choices are bounded."""
        if len(control.choices) > MAX_CHOICES_PER_CONTROL:
            return False
        if not self.name_ok(control.id) or not self.name_ok(control.label):
            return False
        if control.config_id is not None and not self.name_ok(control.config_id):
            return False
        if isinstance(control.value, str) and not self.value_ok(control.value):
            return False
        for choice in control.choices:
            texts = (choice.value, choice.label, choice.group or "", choice.group_label or "")
            if not all(self.value_ok(text) for text in texts):
                return False
        return True


def _option_choices(option: ConfigOption) -> tuple[ControlChoice, ...]:
    return tuple(
        ControlChoice(choice.value, choice.name, choice.group, choice.group_name)
        for choice in option.choices
    )


def _from_option(control_id: str, option: ConfigOption) -> SessionControl:
    kind: ControlType = "BOOLEAN" if option.type == BOOLEAN else "SELECT"
    return SessionControl(
        id=control_id,
        label=option.name,
        group=option.category,
        type=kind,
        value=option.current_value,
        choices=_option_choices(option) if option.type == SELECT else (),
        mutable=True,
        method="session/set_config_option",
        config_id=option.id,
    )


def _first_select(state: SessionState, category: str) -> ConfigOption | None:
    for option in state.options_in_category(category):
        if option.type == SELECT:
            return option
    return None


def _mode_control(state: SessionState) -> tuple[SessionControl | None, set[str]]:
    """The mode control and the config option ids it covers."""
    option = _first_select(state, "mode")
    if state.modes is not None:
        covered: set[str] = set()
        if option is not None and set(option.values()) == set(state.modes.ids()):
            covered.add(option.id)
        control = SessionControl(
            id=MODE_CONTROL_ID,
            label="Mode",
            group="mode",
            type="SELECT",
            value=state.modes.current_mode_id,
            choices=tuple(ControlChoice(m.id, m.name) for m in state.modes.available),
            mutable=True,
            method="session/set_mode",
        )
        return control, covered
    if option is not None:
        return _from_option(MODE_CONTROL_ID, option), {option.id}
    return None, set()


def _model_controls(
    state: SessionState, grok_models: GrokModelCatalog | None
) -> tuple[list[SessionControl], set[str]]:
    """The model control (and Grok's effort control) and the config option ids they cover."""
    option = _first_select(state, "model")
    if option is not None:
        return [_from_option(MODEL_CONTROL_ID, option)], {option.id}
    if grok_models is not None:
        current = grok_models.current
        controls = [
            SessionControl(
                id=MODEL_CONTROL_ID,
                label="Model",
                group="model",
                type="SELECT",
                value=grok_models.current_model_id,
                choices=tuple(ControlChoice(m.model_id, m.name) for m in grok_models.models),
                mutable=True,
                method="session/set_model",
            )
        ]
        if current.efforts:
            controls.append(
                SessionControl(
                    id=EFFORT_CONTROL_ID,
                    label="Reasoning effort",
                    group="thought_level",
                    type="SELECT",
                    # The provider may report no effort in force: shown as "".
                    value=current.current_effort or "",
                    choices=tuple(ControlChoice(e.value, e.name) for e in current.efforts),
                    mutable=True,
                    method="session/set_model",
                )
            )
        return controls, set()
    if state.models is not None and state.models.current_model_id is not None:
        legacy = SessionControl(
            id=MODEL_CONTROL_ID,
            label="Model",
            group="model",
            type="SELECT",
            value=state.models.current_model_id,
            choices=tuple(ControlChoice(m.model_id, m.name) for m in state.models.available),
            mutable=False,
        )
        return [legacy], set()
    return [], set()


def project_controls(
    provider_session_id: str,
    state: SessionState,
    *,
    grok_models: GrokModelCatalog | None = None,
    secrets: SecretValues | None = None,
    session_id: str | None = None,
) -> ControlSet:
    """The safe controls of the session ``provider_session_id`` in ``state``.

    ``grok_models`` is the session's Grok catalog (:func:`baton.wire.extensions.grok.
    parse_session_models`, kept current by confirmed ``session/set_model`` answers): pass it
    only for a profile whose ``session_models_extension`` is set, never for another profile.
    ``secrets`` are the profile's exact sensitive values (a selector showing one is omitted).
    """
    safety = _Safety(secrets)
    candidates: list[SessionControl] = []
    mode, covered = _mode_control(state)
    if mode is not None:
        candidates.append(mode)
    models, model_covered = _model_controls(state, grok_models)
    candidates.extend(models)
    covered |= model_covered
    for option in state.config_options:
        if option.id not in covered:
            candidates.append(_from_option(CONFIG_CONTROL_PREFIX + option.id, option))
    kept: list[SessionControl] = []
    omitted = len(state.ignored_config_options)
    for control in candidates:
        if len(kept) >= MAX_CONTROLS or not safety.control_ok(control):
            omitted += 1
            continue
        kept.append(control)
    controls = tuple(kept)
    return ControlSet(
        provider_session_id=provider_session_id,
        controls=controls,
        revision=catalog_revision(provider_session_id, controls),
        omitted=omitted,
        session_id=session_id,
    )


@dataclass(frozen=True, slots=True)
class ControlRequest:
    """A validated ``{controlId, value, revision}`` from a surface."""

    control_id: str
    value: ConfigValue
    revision: str


def parse_control_request(body: object) -> ControlRequest:
    """Validate a surface's control change: an object with exactly ``controlId`` (string),
    ``value`` (string or boolean) and ``revision`` (string). Anything else (an extra key such
    as a method, params or ``_meta``) raises :class:`~baton.errors.InvalidArgument`."""
    if not isinstance(body, Mapping):
        raise InvalidArgument("a control change must be an object {controlId, value, revision}")
    extra = sorted(str(key)[:64] for key in body if key not in REQUEST_KEYS)
    if extra:
        raise InvalidArgument(
            f"a control change takes only controlId, value and revision; also got {extra}"
        )
    control_id, value, revision = body.get("controlId"), body.get("value"), body.get("revision")
    if not isinstance(control_id, str) or not isinstance(revision, str):
        raise InvalidArgument("a control change needs string controlId and revision")
    if not isinstance(value, str | bool):
        raise InvalidArgument("a control change's value must be a string or a boolean")
    return ControlRequest(control_id, value, revision)


@dataclass(frozen=True, slots=True)
class ControlMutation:
    """How to apply one checked control change: send ``method`` with ``params`` (exact, complete:
    nothing needs adding)."""

    control_id: str
    method: ApplyMethod
    params: Mapping[str, Any]
    value: ConfigValue
    #: The control already shows this value (a caller may skip sending).
    already_current: bool
    #: The config option changed (``session/set_config_option`` only).
    config_id: str | None = None
    #: The model sent (``session/set_model`` only).
    model_id: str | None = None
    #: The effort sent in ``_meta.reasoningEffort`` (Grok's effort control only).
    reasoning_effort: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"controlId", "method", "params", "value", "alreadyCurrent"}``."""
        return {
            "controlId": self.control_id,
            "method": self.method,
            "params": dict(self.params),
            "value": self.value,
            "alreadyCurrent": self.already_current,
        }


def _listed(values: tuple[str, ...]) -> str:
    shown = ", ".join(values[:MAX_LISTED_CHOICES])
    more = len(values) - MAX_LISTED_CHOICES
    return shown + (f" and {more} more" if more > 0 else "") if values else "nothing"


def resolve_control(
    controls: ControlSet, control_id: object, value: object, revision: object
) -> ControlMutation:
    """Check ``{controlId, value, revision}`` against ``controls`` and say how to apply it.

    Checked in this order, each failure a caller-fault error with a stable code and nothing
    sent: the revision is the set's (:class:`~baton.errors.ControlRevisionStale`), the control
    exists (:class:`~baton.errors.ControlUnknown`) and is mutable
    (:class:`~baton.errors.ControlNotMutable`), the value's type fits: a bool for BOOLEAN, a
    string for SELECT (:class:`~baton.errors.ControlWrongType`), and a SELECT value is an
    advertised choice, exactly (:class:`~baton.errors.ControlChoiceNotAdvertised`). The value
    is never echoed in a message (it may be anything the caller typed).

    Call :func:`refuse_while` first with the session's run status.
    """
    shown_id = control_id[:MAX_CONTROL_TEXT_CHARS] if isinstance(control_id, str) else ""
    if not isinstance(revision, str) or revision != controls.revision:
        raise ControlRevisionStale(
            shown_id,
            "the session's controls changed since they were shown (stale revision); "
            "read them again and retry",
        )
    control = controls.control(control_id) if isinstance(control_id, str) else None
    if control is None:
        raise ControlUnknown(
            shown_id, f"no control {shown_id!r}; the session has: {_listed(controls.ids())}"
        )
    if not control.mutable or control.method is None:
        raise ControlNotMutable(control.id, f"control {control.id!r} cannot be changed")
    if control.type == "BOOLEAN":
        if not isinstance(value, bool):
            raise ControlWrongType(control.id, f"control {control.id!r} takes true or false")
    elif not isinstance(value, str):
        raise ControlWrongType(control.id, f"control {control.id!r} takes a string choice")
    elif value not in control.values():
        raise ControlChoiceNotAdvertised(
            control.id,
            f"the value is not a choice of control {control.id!r}; advertised: "
            f"{_listed(control.values())}",
        )
    assert isinstance(value, str | bool)
    return _mutation(controls, control, value)


def _mutation(controls: ControlSet, control: SessionControl, value: ConfigValue) -> ControlMutation:
    session_id = controls.provider_session_id
    current = type(control.value) is type(value) and control.value == value
    if control.method == "session/set_mode":
        return ControlMutation(
            control.id,
            "session/set_mode",
            {"sessionId": session_id, "modeId": value},
            value,
            current,
        )
    if control.method == "session/set_config_option":
        params: dict[str, Any] = {"sessionId": session_id, "configId": control.config_id}
        if control.type == "BOOLEAN":
            params["type"] = BOOLEAN
        params["value"] = value
        return ControlMutation(
            control.id,
            "session/set_config_option",
            params,
            value,
            current,
            config_id=control.config_id,
        )
    assert control.method == "session/set_model" and isinstance(value, str)
    if control.id == EFFORT_CONTROL_ID:
        model = controls.control(MODEL_CONTROL_ID)
        assert model is not None and isinstance(model.value, str)
        return ControlMutation(
            control.id,
            "session/set_model",
            set_model_params(session_id, model.value, reasoning_effort=value),
            value,
            current,
            model_id=model.value,
            reasoning_effort=value,
        )
    return ControlMutation(
        control.id,
        "session/set_model",
        set_model_params(session_id, value),
        value,
        current,
        model_id=value,
    )


def refuse_while(run_status: RunStatus | None, control_id: str = "") -> None:
    """Raise :class:`~baton.errors.ControlBusy` while the session's run is active, queued or
    recovery-required (:data:`BUSY_RUN_STATUSES`); None means no run."""
    if run_status is not None and run_status in BUSY_RUN_STATUSES:
        raise ControlBusy(
            control_id,
            f"controls cannot change while the session's run is {run_status}; wait for it to "
            "end (or recover it) and retry",
        )


@dataclass(frozen=True, slots=True)
class ConfirmedControl:
    """The session state after a confirmed control change (and Grok's catalog, when the change
    went through ``session/set_model``)."""

    state: SessionState
    grok_models: GrokModelCatalog | None


def confirm_mutation(
    mutation: ControlMutation,
    state: SessionState,
    result: object,
    *,
    grok_models: GrokModelCatalog | None = None,
) -> ConfirmedControl:
    """The state once the agent answered ``mutation`` with ``result`` (a success answer).

    ``session/set_mode`` and ``session/set_model`` count on a success answer.
    ``session/set_config_option`` counts only when ``result`` carries the complete
    ``configOptions`` and reports exactly the value sent; anything else raises
    :class:`~baton.runtime.turns.settings.SessionMutationAmbiguous` (the caller quarantines the lane).
    """
    if mutation.method == "session/set_mode":
        assert isinstance(mutation.value, str)
        return ConfirmedControl(state.with_current_mode(mutation.value), grok_models)
    if mutation.method == "session/set_config_option":
        assert mutation.config_id is not None
        confirmation = parse_set_config_option_response(result, mutation.config_id, mutation.value)
        if not (confirmation.complete and confirmation.confirmed):
            raise SessionMutationAmbiguous(
                f"session/set_config_option {mutation.config_id} was not confirmed by a "
                f"complete configOptions answer ({confirmation.reason})"
            )
        return ConfirmedControl(state.with_config_options(confirmation.options), grok_models)
    assert mutation.model_id is not None
    updated = state.with_current_model(mutation.model_id)
    if grok_models is not None:
        grok_models = grok_models.with_current(mutation.model_id, mutation.reasoning_effort)
    return ConfirmedControl(updated, grok_models)
