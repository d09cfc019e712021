"""``session/request_permission`` in the v2 draft, read into the v1 shape the permission engine
reads (``toolCall`` + ``options``).

v2 puts the operation in an optional ``subject``: a ``tool_call`` subject carries a tool-call
upsert (applied to the stored tool call like a ``tool_call_update`` before the prompt is
shown); a ``command`` subject carries a command and its working directory, which become an
``execute`` tool call whose ``rawInput`` holds them, so the local rules read the command exactly
as they read a v1 one. No subject (or an unknown one) gives a tool call with only the request's
title: the local rules then see nothing to allow and fail closed. The answer has the same shape
in both versions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from baton.wire.v2.updates import SessionUpdateDecoder

#: The id a subject without a tool call gets (prefix), followed by the request's id: the engine
#: needs an id to record the interaction by, and ``_`` marks it as Baton's, not the agent's.
SYNTHETIC_TOOL_CALL_PREFIX: Final = "_baton/permission/"

#: Characters kept of the request id inside a synthetic tool-call id.
MAX_SYNTHETIC_ID_CHARS: Final = 64


def normalize_permission_params(
    params: object, request_id: object, decoder: SessionUpdateDecoder | None
) -> object:
    """The v1-shaped params of a v2 permission request (anything but an object is returned as
    is, for the engine to refuse). ``decoder`` (the session's) sees a ``tool_call`` subject in
    order, as the draft asks."""
    if not isinstance(params, Mapping):
        return params
    normalized: dict[str, Any] = {
        k: v for k, v in params.items() if k not in ("subject", "toolCall")
    }
    title = params.get("title")
    subject = params.get("subject")
    synthetic = f"{SYNTHETIC_TOOL_CALL_PREFIX}{str(request_id)[:MAX_SYNTHETIC_ID_CHARS]}"
    tool_call: dict[str, Any] | None = None
    if isinstance(subject, Mapping) and subject.get("type") == "tool_call":
        raw = subject.get("toolCall")
        if isinstance(raw, Mapping):
            tool_call = {k: v for k, v in raw.items() if k != "sessionUpdate"}
            if decoder is not None:
                decoder.tool_call(raw)
    elif isinstance(subject, Mapping) and subject.get("type") == "command":
        raw_input: dict[str, Any] = {"command": subject.get("command")}
        if subject.get("cwd") is not None:
            raw_input["cwd"] = subject.get("cwd")
        tool_call_id = subject.get("toolCallId")
        tool_call = {
            "toolCallId": tool_call_id if isinstance(tool_call_id, str) else synthetic,
            "kind": "execute",
            "rawInput": raw_input,
        }
    if tool_call is None:
        tool_call = {"toolCallId": synthetic}
    if isinstance(title, str) and "title" not in tool_call:
        tool_call["title"] = title
    normalized["toolCall"] = tool_call
    return normalized
