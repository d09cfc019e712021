"""Profile-gated protocol extensions: one :class:`LaneExtensions` object per lane.

A lane asks :func:`extensions_for` once for its launch spec and holds the answer: Grok's
session models catalog (:class:`GrokSessionModels`, ``Profile.session_models_extension``),
Cursor's model picker (:class:`CursorModelPicker`, ``Profile.parameterized_model_picker``), or
:class:`NoExtensions` for every other profile. The lane, session setup, the controls and the
front call the protocol's hooks and never name a provider.

- Grok: the pre-session catalog comes from initialize ``_meta.modelState``, updated by every
  ``_x.ai/models/update`` that arrived beside the initialize answer (applied once the
  initialized state is durable, in arrival order), then replaced atomically by later updates.
  A malformed catalog drops it and quarantines the generation. An explicit model or effort is
  applied with ``session/set_model`` carrying ``_meta.reasoningEffort``.
- Cursor: initialize advertises ``_meta.parameterizedModelPicker``; after an explicit model
  selection ``cursor/list_available_models`` runs before session/new (cached per process,
  cleared on loss, reconfiguration or an authentication failure) and the selection is
  validated against it; the model is applied first and the effort against the replaced
  config catalog (the ordinary settings order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from baton.connection.client import AcpClient
from baton.errors import (
    BudgetExpired,
    ExtensionPayloadInvalid,
    SessionMutationAmbiguous,
    TransportClosed,
)
from baton.runtime.agents.launch import LaunchSpec
from baton.wire.budget import BudgetClock
from baton.wire.extensions import cursor, grok
from baton.wire.session_state import SessionState

#: What an extension's initialize hook may do to the initialize params.
InitializeTransform = Callable[[dict[str, Any]], dict[str, Any]]
#: Why a generation's extension state is forgotten.
LossReason = cursor.ClearReason


class LaneExtensions(Protocol):
    """The hooks a lane's profile-gated extensions answer (every one is a no-op without one).

    Hooks that send requests (:meth:`before_session`, :meth:`select`) are cancellation-safe
    the way their requests are: a cancelled catalog fetch caches nothing, and a cancelled
    model selection is reported by the caller as ambiguous."""

    def initialize_transform(self) -> InitializeTransform | None:
        """A change to the initialize params (Cursor's picker flag), or None."""
        ...

    def started(self, client: AcpClient, startup: Sequence[Mapping[str, Any]]) -> None:
        """The generation is initialized and durable; ``startup`` are the notifications read
        beside the initialize answer, in order. Raises ExtensionPayloadInvalid when they
        break the extension's contract (the lane stops the generation)."""
        ...

    def notified(self, message: Mapping[str, Any]) -> None:
        """A notification other than session/update arrived on the running generation.
        Raises ExtensionPayloadInvalid when it breaks the contract (the lane quarantines)."""
        ...

    def lost(self, reason: LossReason) -> None:
        """The generation ended (``reason``: shutdown, process_lost, auth_failure): forget
        what belonged to it."""
        ...

    async def before_session(
        self,
        client: AcpClient,
        process_key: str,
        model: str | None,
        effort: str | None,
        budget: BudgetClock | None,
    ) -> None:
        """Before session/new or attach: validate the run's explicit choices."""
        ...

    async def select(
        self, client: AcpClient, session_id: str, model: str | None, effort: str | None
    ) -> bool:
        """Apply an explicit model and/or effort the extension's own way; True when it did (the
        generic settings path then skips model and effort)."""
        ...

    @property
    def models(self) -> grok.GrokModelCatalog | None:
        """The session models catalog the controls project (Grok), or None."""
        ...

    def confirmed_models(self, models: grok.GrokModelCatalog | None) -> None:
        """A control change confirmed a new catalog state (Grok's model control)."""
        ...


class NoExtensions:
    """A lane whose profile has no extension: every hook is a no-op."""

    def initialize_transform(self) -> InitializeTransform | None:
        """None: initialize is sent as built."""
        return None

    def started(self, client: AcpClient, startup: Sequence[Mapping[str, Any]]) -> None:
        """Nothing to read."""

    def notified(self, message: Mapping[str, Any]) -> None:
        """Journal-only telemetry."""

    def lost(self, reason: LossReason) -> None:
        """Nothing to forget."""

    async def before_session(
        self,
        client: AcpClient,
        process_key: str,
        model: str | None,
        effort: str | None,
        budget: BudgetClock | None,
    ) -> None:
        """Nothing to check."""

    async def select(
        self, client: AcpClient, session_id: str, model: str | None, effort: str | None
    ) -> bool:
        """False: the generic settings path applies model and effort."""
        return False

    @property
    def models(self) -> grok.GrokModelCatalog | None:
        """None: the controls come from the session state alone."""
        return None

    def confirmed_models(self, models: grok.GrokModelCatalog | None) -> None:
        """Nothing to keep."""


class GrokSessionModels(NoExtensions):
    """Grok's ``grok-build-acp/session-models@v1``: the pre-session catalog from initialize
    ``_meta.modelState`` and startup updates, replaced by later ``_x.ai/models/update``; an
    explicit model or effort applied with ``session/set_model`` carrying
    ``_meta.reasoningEffort``."""

    def __init__(self) -> None:
        self._catalog: grok.GrokModelCatalog | None = None

    @property
    def models(self) -> grok.GrokModelCatalog | None:
        """The current generation's catalog (None before start or after a malformed one)."""
        return self._catalog

    def started(self, client: AcpClient, startup: Sequence[Mapping[str, Any]]) -> None:
        """Read the catalog (raises ExtensionPayloadInvalid when malformed)."""
        self._catalog = grok.catalog_after_startup(client.initialize_result, startup)

    def notified(self, message: Mapping[str, Any]) -> None:
        """Replace the catalog atomically on ``_x.ai/models/update``; a malformed one drops
        it and raises ExtensionPayloadInvalid."""
        if not grok.is_models_update(message):
            return
        try:
            self._catalog = grok.apply_models_update(message.get("params"))
        except ExtensionPayloadInvalid:
            self._catalog = None
            raise

    def lost(self, reason: LossReason) -> None:
        """The catalog belonged to the generation."""
        self._catalog = None

    def confirmed_models(self, models: grok.GrokModelCatalog | None) -> None:
        """Keep the catalog a confirmed model control change produced."""
        if models is not None:
            self._catalog = models

    async def select(
        self, client: AcpClient, session_id: str, model: str | None, effort: str | None
    ) -> bool:
        """Apply an explicit model and/or effort with ``session/set_model`` (an unknown
        outcome is SessionMutationAmbiguous)."""
        catalog = self._catalog
        if catalog is None or (model is None and effort is None):
            return False
        target = model if model is not None else catalog.current.model_id
        chosen, exact_effort = grok.require_selection(catalog, target, effort)
        if chosen.model_id == catalog.current.model_id and exact_effort is None:
            return True
        try:
            await client.session_call(
                session_id,
                grok.SET_MODEL_METHOD,
                grok.set_model_params(session_id, chosen.model_id, reasoning_effort=exact_effort),
            )
        except (BudgetExpired, TransportClosed) as exc:
            raise SessionMutationAmbiguous(
                f"{grok.SET_MODEL_METHOD} has an unknown outcome: {exc.code}"
            ) from exc
        self._catalog = catalog.with_current(chosen.model_id, exact_effort)
        state: SessionState = client.session_state(session_id)
        client.update_session_state(session_id, state.with_current_model(chosen.model_id))
        return True


class CursorModelPicker(NoExtensions):
    """Cursor's ``cursor-agent-acp/parameterized-model-picker@v1``: the picker flag on
    initialize; after an explicit model, ``cursor/list_available_models`` before session/new
    (cached per process, cleared on loss, reconfiguration or an authentication failure) and the
    selection validated against it; model then effort through the ordinary settings."""

    def __init__(self) -> None:
        self.catalog = cursor.CursorModelCatalog()

    def initialize_transform(self) -> InitializeTransform | None:
        """Add the model-picker flag."""
        return cursor.with_model_picker

    def lost(self, reason: LossReason) -> None:
        """The per-process cache goes with the process (or an authentication failure)."""
        self.catalog.clear(reason)

    async def before_session(
        self,
        client: AcpClient,
        process_key: str,
        model: str | None,
        effort: str | None,
        budget: BudgetClock | None,
    ) -> None:
        """With an explicit model: validate it against this process's catalog, fetching it
        once (the effort is revalidated after the model is set)."""
        if model is None:
            return
        models = self.catalog.get(process_key)
        if models is None:
            try:
                result = await client.connection.request(
                    "cursor/list_available_models", cursor.list_models_params(), budget=budget
                )
                models = cursor.parse_list_available_models(result)
            except ExtensionPayloadInvalid as exc:
                self.catalog.record_failure(process_key, exc.code, exc.message)
                raise
            self.catalog.store(process_key, models)
        models.require(model)


def extensions_for(spec: LaunchSpec) -> LaneExtensions:
    """The extension object of a lane running ``spec`` (its profile's flags decide)."""
    profile = spec.profile
    if profile is not None and profile.session_models_extension:
        return GrokSessionModels()
    if profile is not None and profile.parameterized_model_picker:
        return CursorModelPicker()
    return NoExtensions()
