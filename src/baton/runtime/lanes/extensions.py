"""Profile-gated protocol extensions, wired into a lane and a run.

Only a profile whose flag is set ever uses these (``Profile.session_models_extension`` for
Grok's session models catalog, ``Profile.parameterized_model_picker`` for Cursor's model
picker); every function here checks the flag itself, so calling it for another profile is a
no-op.

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
from typing import Any

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


def _grok(spec: LaunchSpec) -> bool:
    return spec.profile is not None and spec.profile.session_models_extension


def _cursor(spec: LaunchSpec) -> bool:
    return spec.profile is not None and spec.profile.parameterized_model_picker


def initialize_transform(spec: LaunchSpec) -> Callable[[dict[str, Any]], dict[str, Any]] | None:
    """Cursor: add the model-picker flag to initialize; None for every other profile."""
    return cursor.with_model_picker if _cursor(spec) else None


def grok_startup_catalog(
    spec: LaunchSpec, client: AcpClient, startup: Sequence[Mapping[str, Any]]
) -> grok.GrokModelCatalog | None:
    """Grok: the catalog once initialized (raises ExtensionPayloadInvalid when malformed)."""
    if not _grok(spec):
        return None
    return grok.catalog_after_startup(client.initialize_result, startup)


def grok_update(spec: LaunchSpec, message: Mapping[str, Any]) -> grok.GrokModelCatalog | None:
    """Grok: the replacement catalog if ``message`` is ``_x.ai/models/update``, else None."""
    if not _grok(spec) or not grok.is_models_update(message):
        return None
    return grok.apply_models_update(message.get("params"))


async def cursor_models(
    spec: LaunchSpec,
    client: AcpClient,
    cache: cursor.CursorModelCatalog,
    process_key: str,
    model: str | None,
    effort: str | None,
    budget: BudgetClock | None,
) -> None:
    """Cursor with an explicit model: validate it (and the effort) against the catalog of this
    process, fetching ``cursor/list_available_models`` once before session/new."""
    if not _cursor(spec) or model is None:
        return
    models = cache.get(process_key)
    if models is None:
        try:
            result = await client.connection.request(
                "cursor/list_available_models", cursor.list_models_params(), budget=budget
            )
            models = cursor.parse_list_available_models(result)
        except ExtensionPayloadInvalid as exc:
            cache.record_failure(process_key, exc.code, exc.message)
            raise
        cache.store(process_key, models)
    # The effort is revalidated against the replaced config catalog after the model is set.
    models.require(model)


async def grok_select(
    spec: LaunchSpec,
    client: AcpClient,
    catalog: grok.GrokModelCatalog | None,
    session_id: str,
    model: str | None,
    effort: str | None,
) -> tuple[bool, grok.GrokModelCatalog | None]:
    """Grok: apply an explicit model and/or effort with ``session/set_model``; returns whether
    it handled them (the generic settings path then skips model and effort)."""
    if not _grok(spec) or catalog is None or (model is None and effort is None):
        return False, catalog
    target = model if model is not None else catalog.current.model_id
    chosen, exact_effort = grok.require_selection(catalog, target, effort)
    current = catalog.current
    if chosen.model_id == current.model_id and (exact_effort is None):
        return True, catalog
    try:
        await client.connection.request(
            grok.SET_MODEL_METHOD,
            grok.set_model_params(session_id, chosen.model_id, reasoning_effort=exact_effort),
        )
    except (BudgetExpired, TransportClosed) as exc:
        raise SessionMutationAmbiguous(
            f"{grok.SET_MODEL_METHOD} has an unknown outcome: {exc.code}"
        ) from exc
    updated = catalog.with_current(chosen.model_id, exact_effort)
    state: SessionState = client.session_state(session_id)
    client.update_session_state(session_id, state.with_current_model(chosen.model_id))
    return True, updated
