"""Grok Build's session model catalog: the ``grok-build-acp/session-models@v1`` contract.

The stable ACP schema has no model catalog before a session, no ``models`` field in a session
response and no ``session/set_model``. Grok Build adds all three, and this module reads them:

- ``initialize`` answers ``_meta.modelState``: the pre-session catalog, with the provider's
  default as ``currentModelId``;
- ``session/new`` (load, resume) answers ``models``: the same shape, which revalidates the
  exact id for that session;
- each model may advertise reasoning efforts in its ``_meta.reasoningEfforts`` and the effort in
  force in its ``_meta.reasoningEffort``;
- ``session/set_model {sessionId, modelId, _meta: {reasoningEffort}}`` changes the model and,
  when the catalog advertises efforts, the effort with it;
- the ``_x.ai/models/update`` notification carries a complete new catalog that *replaces* the
  old one atomically: a model it does not list is no longer available.

A catalog object::

    {"currentModelId": "grok-build",
     "availableModels": [{"modelId": "grok-build", "name": "Grok Build",
                          "_meta": {"reasoningEfforts": [{"value": "high", "name": "High"}],
                                    "reasoningEffort": "high"}}]}

Parsing is tolerant per entry, like the rest of :mod:`baton.wire`: an entry without a string
``modelId`` (or with an oversized one) is skipped and counted in
:attr:`GrokModelCatalog.ignored_entries`; a missing ``name`` falls back to the id; an effort is a
string or an object with ``value`` (or ``id``) and ``name``. The catalog as a whole is strict,
because a wrong catalog would silently select the wrong model: a payload that is not an object,
has no non-empty string ``currentModelId``, no ``availableModels`` list, repeats a model id, or
names a current model it does not list raises :class:`~baton.errors.ExtensionPayloadInvalid`.
The caller turns that into a quarantine of the process generation (and drops its catalog).

Use these functions only for a profile whose ``session_models_extension`` flag is set
(:attr:`baton.runtime.agents.profiles.Profile.session_models_extension`); every other profile ignores
these non-standard fields.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from baton.errors import ChoiceNotAdvertised, ExtensionPayloadInvalid
from baton.wire.session_state import ModelInfo, ModelState
from baton.wire.thinking import effort_matches

#: The contract this module implements (also :data:`baton.runtime.agents.profiles.
#: EXT_GROK_SESSION_MODELS`).
CONTRACT_ID: Final = "grok-build-acp/session-models@v1"

#: The ``initialize`` result's ``_meta`` key holding the pre-session catalog.
INITIALIZE_META_FIELD: Final = "modelState"

#: The session setup result's field holding the session's catalog.
SESSION_RESPONSE_FIELD: Final = "models"

#: The method that changes a session's model (and effort).
SET_MODEL_METHOD: Final = "session/set_model"

#: The ``session/set_model`` params ``_meta`` key carrying the requested effort, and the
#: model ``_meta`` key reporting the effort in force.
REASONING_EFFORT_META_KEY: Final = "reasoningEffort"

#: The model ``_meta`` key listing the model's advertised efforts.
REASONING_EFFORTS_META_KEY: Final = "reasoningEfforts"

#: The notification that replaces the catalog.
MODELS_UPDATE_METHOD: Final = "_x.ai/models/update"

#: Most models one catalog may hold. Bounds the memory and work of one (possibly repeated)
#: update notification; a real catalog holds a handful.
MAX_CATALOG_MODELS: Final = 1024

#: Most efforts one model may advertise (entries past it are ignored). Real models list three
#: to five.
MAX_EFFORTS_PER_MODEL: Final = 64

#: Longest model id or effort value kept. Ids are exact and never shortened, so a longer one is
#: skipped rather than truncated; protects the views and journal summaries that show them.
MAX_ID_CHARS: Final = 256

#: Longest display name kept (longer names are cut: names are for people, never sent back).
MAX_NAME_CHARS: Final = 256

# Keys an effort object may name its value and its display name with, in precedence order.
_EFFORT_VALUE_KEYS: Final = ("value", "id", "effort", "reasoningEffort")
_EFFORT_NAME_KEYS: Final = ("name", "label", "title")


@dataclass(frozen=True, slots=True)
class GrokEffort:
    """One advertised reasoning effort: the exact value to send and its display name."""

    value: str
    name: str


@dataclass(frozen=True, slots=True)
class GrokModel:
    """One catalog model with its exact id and the efforts it advertises (possibly none)."""

    model_id: str
    name: str
    description: str | None = None
    efforts: tuple[GrokEffort, ...] = ()
    #: The effort the provider reports in force for this model, verbatim (may be None).
    current_effort: str | None = None

    def effort_values(self) -> tuple[str, ...]:
        """The advertised effort values, in the provider's order."""
        return tuple(effort.value for effort in self.efforts)


@dataclass(frozen=True, slots=True)
class GrokModelCatalog:
    """A complete Grok catalog. ``current_model_id`` is always one of ``models``."""

    current_model_id: str
    models: tuple[GrokModel, ...]
    #: Entries skipped because they were not a model object with a usable ``modelId``.
    ignored_entries: int = 0

    def ids(self) -> tuple[str, ...]:
        """Every model id, in the provider's order."""
        return tuple(model.model_id for model in self.models)

    def model(self, model_id: str) -> GrokModel | None:
        """The model with exactly this id, if the catalog lists it."""
        for model in self.models:
            if model.model_id == model_id:
                return model
        return None

    @property
    def current(self) -> GrokModel:
        """The current model (the catalog invariant guarantees it exists)."""
        model = self.model(self.current_model_id)
        if model is None:  # pragma: no cover - excluded by construction
            raise ExtensionPayloadInvalid("the Grok catalog lost its current model")
        return model

    def to_model_state(self) -> ModelState:
        """The catalog as the schema-neutral :class:`~baton.wire.session_state.ModelState`."""
        return ModelState(
            current_model_id=self.current_model_id,
            available=tuple(
                ModelInfo(model.model_id, model.name, model.description) for model in self.models
            ),
        )

    def with_current(self, model_id: str, effort: str | None = None) -> GrokModelCatalog:
        """A copy after a confirmed ``session/set_model`` to ``model_id`` (and ``effort``, when
        one was sent). Raises :class:`ChoiceNotAdvertised` for a model the catalog lacks."""
        if self.model(model_id) is None:
            raise ChoiceNotAdvertised("model", model_id, self.ids())
        models = tuple(
            replace(model, current_effort=effort)
            if model.model_id == model_id and effort is not None
            else model
            for model in self.models
        )
        return replace(self, current_model_id=model_id, models=models)


def _text(value: object, limit: int) -> str | None:
    if not isinstance(value, str) or not value or len(value) > limit:
        return None
    return value


def _name(value: object, fallback: str) -> str:
    if isinstance(value, str) and value:
        return value[:MAX_NAME_CHARS]
    return fallback


def _effort(raw: object) -> GrokEffort | None:
    if isinstance(raw, str):
        value = _text(raw, MAX_ID_CHARS)
        return None if value is None else GrokEffort(value, value)
    if not isinstance(raw, Mapping):
        return None
    value = next(
        (v for v in (_text(raw.get(k), MAX_ID_CHARS) for k in _EFFORT_VALUE_KEYS) if v), None
    )
    if value is None:
        return None
    name = next((raw[k] for k in _EFFORT_NAME_KEYS if isinstance(raw.get(k), str)), value)
    return GrokEffort(value, _name(name, value))


def _efforts(raw: object) -> tuple[GrokEffort, ...]:
    efforts: list[GrokEffort] = []
    seen: set[str] = set()
    for entry in raw[:MAX_EFFORTS_PER_MODEL] if isinstance(raw, list) else ():
        effort = _effort(entry)
        if effort is not None and effort.value not in seen:
            seen.add(effort.value)
            efforts.append(effort)
    return tuple(efforts)


def parse_model(raw: object) -> GrokModel | None:
    """Read one ``availableModels`` entry; None when it has no usable ``modelId``.

    Efforts come from ``_meta.reasoningEfforts`` (or a top-level ``reasoningEfforts``), the
    effort in force from ``_meta.reasoningEffort`` (or a top-level ``reasoningEffort``). The
    rest of ``_meta`` is opaque and not kept.
    """
    if not isinstance(raw, Mapping):
        return None
    model_id = _text(raw.get("modelId"), MAX_ID_CHARS)
    if model_id is None:
        return None
    meta = raw.get("_meta")
    meta = meta if isinstance(meta, Mapping) else {}
    efforts_raw = meta.get(REASONING_EFFORTS_META_KEY, raw.get(REASONING_EFFORTS_META_KEY))
    current_raw = meta.get(REASONING_EFFORT_META_KEY, raw.get(REASONING_EFFORT_META_KEY))
    description = raw.get("description")
    return GrokModel(
        model_id=model_id,
        name=_name(raw.get("name"), model_id),
        description=description[:MAX_NAME_CHARS] if isinstance(description, str) else None,
        efforts=_efforts(efforts_raw),
        current_effort=_text(current_raw, MAX_ID_CHARS),
    )


def parse_model_state(raw: object, where: str = "the Grok model catalog") -> GrokModelCatalog:
    """Read a complete catalog object (``modelState``, ``models`` or an update's params).

    Raises :class:`ExtensionPayloadInvalid` (naming ``where``) when the catalog as a whole is
    malformed; see the module docstring for what is skipped and what is fatal.
    """
    if not isinstance(raw, Mapping):
        raise ExtensionPayloadInvalid(f"{where} is not an object")
    current = raw.get("currentModelId")
    if not isinstance(current, str) or not current:
        raise ExtensionPayloadInvalid(f"{where} has no non-empty string currentModelId")
    entries = raw.get("availableModels")
    if not isinstance(entries, list):
        raise ExtensionPayloadInvalid(f"{where} has no availableModels list")
    if len(entries) > MAX_CATALOG_MODELS:
        raise ExtensionPayloadInvalid(
            f"{where} lists {len(entries)} models; at most {MAX_CATALOG_MODELS} are accepted"
        )
    models: list[GrokModel] = []
    seen: set[str] = set()
    ignored = 0
    for entry in entries:
        model = parse_model(entry)
        if model is None:
            ignored += 1
            continue
        if model.model_id in seen:
            raise ExtensionPayloadInvalid(f"{where} lists model {model.model_id!r} twice")
        seen.add(model.model_id)
        models.append(model)
    if current not in seen:
        raise ExtensionPayloadInvalid(
            f"{where} names current model {current[:MAX_ID_CHARS]!r}, which it does not list"
        )
    return GrokModelCatalog(current, tuple(models), ignored)


def parse_initialize_model_state(result: object) -> GrokModelCatalog | None:
    """The pre-session catalog of an ``initialize`` result: ``_meta.modelState``.

    None when the result carries none (no ``_meta``, or no or a null ``modelState``); raises
    :class:`ExtensionPayloadInvalid` when one is present but malformed.
    """
    meta = result.get("_meta") if isinstance(result, Mapping) else None
    raw = meta.get(INITIALIZE_META_FIELD) if isinstance(meta, Mapping) else None
    if raw is None:
        return None
    return parse_model_state(raw, f"initialize _meta.{INITIALIZE_META_FIELD}")


def parse_session_models(result: object, method: str = "session/new") -> GrokModelCatalog | None:
    """The session's catalog from a session setup result (``models``), revalidated per session.

    None when the result carries no (or a null) ``models``; raises
    :class:`ExtensionPayloadInvalid` when it is present but malformed.
    """
    raw = result.get(SESSION_RESPONSE_FIELD) if isinstance(result, Mapping) else None
    if raw is None:
        return None
    return parse_model_state(raw, f"the {method} {SESSION_RESPONSE_FIELD}")


def is_models_update(message: Mapping[str, Any]) -> bool:
    """True when ``message`` is an ``_x.ai/models/update`` notification."""
    return message.get("method") == MODELS_UPDATE_METHOD and "id" not in message


def apply_models_update(params: object) -> GrokModelCatalog:
    """The catalog an ``_x.ai/models/update`` notification's ``params`` carry.

    The result *replaces* the previous catalog whole (nothing of it is merged in, so a removed
    model disappears). Raises :class:`ExtensionPayloadInvalid` for a malformed update: the caller
    must then drop its catalog and quarantine the process generation, never keep the old one.
    """
    return parse_model_state(params, f"the {MODELS_UPDATE_METHOD} notification")


def catalog_after_startup(
    initialize_result: object, startup_notifications: Iterable[Mapping[str, Any]]
) -> GrokModelCatalog | None:
    """The pre-session catalog once the initialized state is durable: the ``initialize``
    catalog, then every ``_x.ai/models/update`` that arrived beside the initialize answer,
    applied in arrival order. So an initial catalog never overwrites a newer update.

    ``startup_notifications`` are the buffered notification messages (other methods are
    skipped). Raises :class:`ExtensionPayloadInvalid` for a malformed catalog or update.
    """
    catalog = parse_initialize_model_state(initialize_result)
    for message in startup_notifications:
        if is_models_update(message):
            catalog = apply_models_update(message.get("params"))
    return catalog


def resolve_effort(model: GrokModel, requested: str) -> str:
    """The exact advertised effort of ``model`` that ``requested`` names: an exact match first,
    else one unique match by spelling (``High`` for ``high``, ``x-high`` for ``xhigh``).

    Raises :class:`ChoiceNotAdvertised` when the model advertises no effort that matches, or
    when several match equally.
    """
    values = model.effort_values()
    if requested in values:
        return requested
    found = [value for value in values if effort_matches(requested, value)]
    if len(found) == 1:
        return found[0]
    what = f"reasoning effort for model {model.model_id!r}"
    if found:
        raise ChoiceNotAdvertised(f"{what} (ambiguous)", requested, tuple(found))
    raise ChoiceNotAdvertised(what, requested, values)


def require_selection(
    catalog: GrokModelCatalog, model_id: str, effort: str | None = None
) -> tuple[GrokModel, str | None]:
    """Check an explicit model (exact id) and effort against ``catalog`` before anything is
    sent; return the model and the exact effort value to send (None when none was asked).

    Raises :class:`ChoiceNotAdvertised` for a model the catalog does not list or an effort the
    model does not advertise (a model without efforts takes none).
    """
    model = catalog.model(model_id)
    if model is None:
        raise ChoiceNotAdvertised("model", model_id, catalog.ids())
    if effort is None:
        return model, None
    return model, resolve_effort(model, effort)


def set_model_params(
    session_id: str, model_id: str, *, reasoning_effort: str | None = None
) -> dict[str, Any]:
    """The ``session/set_model`` params: ``{sessionId, modelId}``, plus
    ``_meta: {reasoningEffort}`` when an effort is given (the exact advertised value)."""
    params: dict[str, Any] = {"sessionId": session_id, "modelId": model_id}
    if reasoning_effort is not None:
        params["_meta"] = {REASONING_EFFORT_META_KEY: reasoning_effort}
    return params
