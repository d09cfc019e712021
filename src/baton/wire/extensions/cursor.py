"""Cursor's parameterized model picker: the ``cursor-agent-acp/parameterized-model-picker@v1``
contract.

- The ``initialize`` request (and only it) adds ``clientCapabilities._meta.
  parameterizedModelPicker: true`` (:func:`with_model_picker`).
- After an explicit model selection, and before any ``session/new``, the client calls
  ``cursor/list_available_models {}``. The answer is ``{models: [{value, name,
  configOptions?}]}``: exact model values, each with the config options that model has (its
  reasoning choices are a select of category ``thought_level``). It must list ``default``,
  which is Cursor's *Auto*.
- Selecting a model through the session's ``category=model`` config option can replace the
  session's config catalog, so the model is applied first and the effort is validated and
  applied against the acknowledged replacement.
- The list is cached for the current Cursor process only (:class:`CursorModelCatalog`) and
  cleared on shutdown, process loss, executable reconfiguration or an observed
  authentication/account failure.

Parsing is tolerant per entry (an entry without a string ``value`` is skipped and counted; a
missing ``name`` falls back to the value; config options follow
:func:`baton.wire.session_state.parse_config_options`), strict for the answer as a whole: one
that is not ``{models: [...]}``, repeats a value or lacks ``default`` raises
:class:`~baton.errors.ExtensionPayloadInvalid`.

Use these functions only for a profile whose ``parameterized_model_picker`` flag is set
(:attr:`baton.runtime.agents.profiles.Profile.parameterized_model_picker`); no other profile sends the
capability or calls the method.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from baton.errors import ChoiceNotAdvertised, ExtensionPayloadInvalid
from baton.wire.session_state import SELECT, ConfigOption, parse_config_options
from baton.wire.thinking import effort_matches

#: The contract this module implements (also :data:`baton.runtime.agents.profiles.
#: EXT_CURSOR_MODEL_PICKER`).
CONTRACT_ID: Final = "cursor-agent-acp/parameterized-model-picker@v1"

#: The pre-session method listing the models.
LIST_MODELS_METHOD: Final = "cursor/list_available_models"

#: The ``clientCapabilities._meta`` key the initialize request sets to true.
CLIENT_META_FIELD: Final = "parameterizedModelPicker"

#: The exact model value of Cursor's *Auto*; every valid list contains it.
AUTO_MODEL: Final = "default"

#: The config option category that carries a model's reasoning choices.
THOUGHT_LEVEL_CATEGORY: Final = "thought_level"

#: Most models one answer may list. Bounds the memory of the cache and the work of a parse; a
#: real list holds a few dozen.
MAX_CATALOG_MODELS: Final = 1024

#: Longest model value kept. Values are exact and never shortened, so a longer one is skipped;
#: protects views and diagnostics that show values.
MAX_VALUE_CHARS: Final = 256

#: Longest display name kept (longer names are cut: names are for people, never sent back).
MAX_NAME_CHARS: Final = 256

#: Longest failure message :class:`CursorModelCatalog` retains.
MAX_FAILURE_CHARS: Final = 512

#: Why a cached list is dropped.
ClearReason = Literal["shutdown", "process_lost", "reconfigured", "auth_failure"]


def with_model_picker(initialize_params: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``initialize`` params with ``clientCapabilities._meta.parameterizedModelPicker``
    set to true; every other capability and ``_meta`` key is kept as it was."""
    params = copy.deepcopy(dict(initialize_params))
    capabilities = params.get("clientCapabilities")
    capabilities = dict(capabilities) if isinstance(capabilities, Mapping) else {}
    meta = capabilities.get("_meta")
    meta = dict(meta) if isinstance(meta, Mapping) else {}
    meta[CLIENT_META_FIELD] = True
    capabilities["_meta"] = meta
    params["clientCapabilities"] = capabilities
    return params


def list_models_params() -> dict[str, Any]:
    """The ``cursor/list_available_models`` params: an empty object."""
    return {}


@dataclass(frozen=True, slots=True)
class CursorModel:
    """One listed model: its exact value, display name and its own config options."""

    value: str
    name: str
    config_options: tuple[ConfigOption, ...] = ()
    #: Ids of this model's config options skipped as not a select or boolean shape.
    ignored_config_options: tuple[str, ...] = ()

    @property
    def is_auto(self) -> bool:
        """True for Cursor's *Auto* (value ``default``)."""
        return self.value == AUTO_MODEL

    def thought_level(self) -> ConfigOption | None:
        """The model's reasoning selector: its first select option of category
        ``thought_level``, if it has one."""
        for option in self.config_options:
            if option.type == SELECT and option.category == THOUGHT_LEVEL_CATEGORY:
                return option
        return None

    def effort_values(self) -> tuple[str, ...]:
        """The reasoning values this model advertises (empty without a thought_level option)."""
        option = self.thought_level()
        return option.values() if option is not None else ()


@dataclass(frozen=True, slots=True)
class CursorModelList:
    """A parsed ``cursor/list_available_models`` answer; always contains ``default``."""

    models: tuple[CursorModel, ...]
    #: Entries skipped because they were not a model object with a usable ``value``.
    ignored_entries: int = 0

    def values(self) -> tuple[str, ...]:
        """Every model value, in the provider's order."""
        return tuple(model.value for model in self.models)

    def model(self, value: str) -> CursorModel | None:
        """The model with exactly this value, if listed."""
        for model in self.models:
            if model.value == value:
                return model
        return None

    @property
    def auto(self) -> CursorModel:
        """The *Auto* entry (``default``), which every valid list has."""
        model = self.model(AUTO_MODEL)
        if model is None:  # pragma: no cover - excluded by construction
            raise ExtensionPayloadInvalid(f"the Cursor model list lost its {AUTO_MODEL!r} entry")
        return model

    def require(self, value: str, effort: str | None = None) -> tuple[CursorModel, str | None]:
        """Check an explicit selection before ``session/new``: the exact model value, and (when
        given) an effort that model's thought_level option advertises (exact first, else one
        unique match by spelling). Returns the model and the exact effort value.

        This is a pre-session check only: after the model is applied, the effort is validated
        again against the session's replaced catalog. Raises :class:`ChoiceNotAdvertised`.
        """
        model = self.model(value)
        if model is None:
            raise ChoiceNotAdvertised("model", value, self.values())
        if effort is None:
            return model, None
        values = model.effort_values()
        if effort in values:
            return model, effort
        found = [v for v in values if effort_matches(effort, v)]
        if len(found) == 1:
            return model, found[0]
        what = f"reasoning effort for model {value!r}"
        if found:
            raise ChoiceNotAdvertised(f"{what} (ambiguous)", effort, tuple(found))
        raise ChoiceNotAdvertised(what, effort, values)


def _model(raw: object) -> CursorModel | None:
    if not isinstance(raw, Mapping):
        return None
    value = raw.get("value")
    if not isinstance(value, str) or not value or len(value) > MAX_VALUE_CHARS:
        return None
    name = raw.get("name")
    options, ignored = parse_config_options(raw.get("configOptions"))
    return CursorModel(
        value=value,
        name=name[:MAX_NAME_CHARS] if isinstance(name, str) and name else value,
        config_options=options,
        ignored_config_options=ignored,
    )


def parse_list_available_models(result: object) -> CursorModelList:
    """Parse a ``cursor/list_available_models`` answer.

    Raises :class:`ExtensionPayloadInvalid` when it is not ``{models: [...]}``, lists more than
    :data:`MAX_CATALOG_MODELS` entries, repeats a value, or does not list ``default``.
    """
    where = f"the {LIST_MODELS_METHOD} answer"
    entries = result.get("models") if isinstance(result, Mapping) else None
    if not isinstance(entries, list):
        raise ExtensionPayloadInvalid(f"{where} carries no models list")
    if len(entries) > MAX_CATALOG_MODELS:
        raise ExtensionPayloadInvalid(
            f"{where} lists {len(entries)} models; at most {MAX_CATALOG_MODELS} are accepted"
        )
    models: list[CursorModel] = []
    seen: set[str] = set()
    ignored = 0
    for entry in entries:
        model = _model(entry)
        if model is None:
            ignored += 1
            continue
        if model.value in seen:
            raise ExtensionPayloadInvalid(f"{where} lists model {model.value!r} twice")
        seen.add(model.value)
        models.append(model)
    if AUTO_MODEL not in seen:
        raise ExtensionPayloadInvalid(f"{where} omits the required {AUTO_MODEL!r} (Auto) model")
    return CursorModelList(tuple(models), ignored)


@dataclass(frozen=True, slots=True)
class CatalogFailure:
    """The last discovery failure, kept until a later discovery succeeds: a stable code and a
    bounded message the caller already redacted."""

    code: str
    message: str


class CursorModelCatalog:
    """The Cursor model list of one agent process, cached for that process only.

    ``process_key`` identifies the process generation that answered (Baton's server instance id
    for it, or ``(lane, generation)``): :meth:`get` answers only for the key the list was stored
    under, so a replaced process never sees its predecessor's list even before anyone calls
    :meth:`clear`. Nothing here polls, discovers or persists: the caller asks the agent when an
    explicit Cursor selection needs the list and :meth:`get` has none.

    Not thread-safe; one per runtime identity, used from one event loop.
    """

    def __init__(self) -> None:
        self._key: Hashable | None = None
        self._models: CursorModelList | None = None
        #: The last discovery failure, until a discovery succeeds or the cache is cleared.
        self.failure: CatalogFailure | None = None
        #: Why the cache was last cleared (None if it never was).
        self.last_clear_reason: ClearReason | None = None

    def get(self, process_key: Hashable) -> CursorModelList | None:
        """The list stored for ``process_key``, or None (none stored, or for another process)."""
        if self._models is None or self._key != process_key:
            return None
        return self._models

    def store(self, process_key: Hashable, models: CursorModelList) -> None:
        """Keep ``models`` as the list of the process ``process_key`` (replacing any other);
        a retained failure is forgotten."""
        self._key = process_key
        self._models = models
        self.failure = None

    def record_failure(self, process_key: Hashable, code: str, message: str) -> None:
        """A discovery on ``process_key`` failed: drop any list and keep a typed failure until a
        later discovery succeeds. ``message`` must already be redacted; it is bounded here."""
        self._key = process_key
        self._models = None
        self.failure = CatalogFailure(code, message[:MAX_FAILURE_CHARS])

    def clear(self, reason: ClearReason) -> None:
        """Drop the list (and any retained failure): the process shut down or was lost, the
        executable was reconfigured, or the provider reported an authentication or account
        failure."""
        self._key = None
        self._models = None
        self.failure = None
        self.last_clear_reason = reason

    @property
    def cached(self) -> bool:
        """True while a list is held (for whichever process stored it)."""
        return self._models is not None
