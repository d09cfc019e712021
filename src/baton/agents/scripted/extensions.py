"""Profile-extension commands: ``models_update`` (the ``grok`` profile's catalog update)."""

from __future__ import annotations

from typing import Final

from baton.agents.scripted.context import CommandFailed, Flow, Handler, TurnContext
from baton.agents.scripted.script import Command
from baton.wire.jsonrpc import notification

#: Grok's catalog replacement notification.
MODELS_UPDATE_METHOD: Final = "_x.ai/models/update"

#: The IDS word that sends a malformed update instead of a catalog.
MALFORMED: Final = "!malformed"

#: The model the default update adds.
NEXT_MODEL: Final = "grok-next"

#: Most models one update may offer (the client's own catalog bound is far above it).
MAX_UPDATE_MODELS: Final = 256


def _requested_ids(turn: TurnContext, text: str) -> tuple[str, ...]:
    if not text.strip():
        kept = [model.value for model in turn.shape.models[:-1]]
        if NEXT_MODEL not in kept:
            kept.append(NEXT_MODEL)
        return tuple(kept)
    ids = tuple(text.split())
    if len(ids) > MAX_UPDATE_MODELS:
        raise CommandFailed(f"models_update offers at most {MAX_UPDATE_MODELS} models")
    if len(set(ids)) != len(ids):
        raise CommandFailed("models_update lists a model id twice")
    return ids


async def models_update(turn: TurnContext, command: Command) -> Flow:
    """``models_update [IDS]``: replace the process catalog and send ``_x.ai/models/update``
    with the complete new one. Loaded sessions whose model was removed move to the new default
    model. ``!malformed`` sends an update no client can read and changes nothing."""
    if turn.options.model_extension != "grok":
        raise CommandFailed("models_update needs the grok profile (its models extension)")
    text = command.get_str("IDS")
    if text.strip() == MALFORMED:
        turn.out.send(
            notification(MODELS_UPDATE_METHOD, {"currentModelId": 7, "availableModels": "none"})
        )
        return Flow.NEXT
    ids = _requested_ids(turn, text)
    turn.shape.replace_models(ids)
    for session in turn.store.loaded():
        if not turn.shape.offers_model(session.model):
            turn.shape.set_model(session, turn.shape.default_model)
            turn.store.save(session)
    turn.out.send(notification(MODELS_UPDATE_METHOD, turn.shape.grok_model_state()))
    return Flow.NEXT


#: The extension commands' handlers, by command name.
HANDLERS: Final[dict[str, Handler]] = {"models_update": models_update}
