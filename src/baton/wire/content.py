"""Prompt content blocks, gated by the agent's prompt capabilities.

Text and ``resource_link`` are the protocol's baseline and always allowed. Image, audio and
embedded resources need ``promptCapabilities.image``, ``.audio`` and ``.embeddedContext``; a
builder refuses them locally (:class:`CapabilityNotAdvertised`) before anything is sent.

Prepared context (:class:`PreparedContext`) is placed before the unchanged authored text: an
embedded text resource when ``embeddedContext`` was negotiated, otherwise a separate text block.
URIs are data here: this module never opens a file or fetches a URI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from baton.errors import InvalidArgument
from baton.wire.capabilities import AgentCapabilities

ContentBlock = dict[str, Any]

#: Block types every agent takes, and the capability each other type needs.
BASELINE_BLOCK_TYPES: Final = frozenset({"text", "resource_link"})
BLOCK_CAPABILITY: Final[Mapping[str, str]] = {
    "image": "promptCapabilities.image",
    "audio": "promptCapabilities.audio",
    "resource": "promptCapabilities.embeddedContext",
}

#: The MIME type given to prepared context sent as an embedded resource.
CONTEXT_MIME_TYPE: Final = "text/plain"


def _string(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{what} must be a string")
    return value


def _non_empty(value: object, what: str) -> str:
    text = _string(value, what)
    if not text:
        raise InvalidArgument(f"{what} must not be empty")
    return text


def text_block(text: str) -> ContentBlock:
    """A text block (baseline)."""
    return {"type": "text", "text": _string(text, "text")}


def resource_link_block(
    uri: str,
    name: str,
    *,
    mime_type: str | None = None,
    title: str | None = None,
    size: int | None = None,
) -> ContentBlock:
    """A ``resource_link`` block (baseline): a reference the agent may resolve itself."""
    block: ContentBlock = {
        "type": "resource_link",
        "uri": _non_empty(uri, "uri"),
        "name": _string(name, "name"),
    }
    if mime_type is not None:
        block["mimeType"] = _string(mime_type, "mimeType")
    if title is not None:
        block["title"] = _string(title, "title")
    if size is not None:
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise InvalidArgument("size must be a non-negative integer")
        block["size"] = size
    return block


def image_block(
    capabilities: AgentCapabilities, data: str, mime_type: str, *, uri: str | None = None
) -> ContentBlock:
    """An image block (base64 ``data``); needs ``promptCapabilities.image``."""
    capabilities.require(BLOCK_CAPABILITY["image"], "an image prompt block")
    block: ContentBlock = {
        "type": "image",
        "data": _string(data, "data"),
        "mimeType": _non_empty(mime_type, "mimeType"),
    }
    if uri is not None:
        block["uri"] = _string(uri, "uri")
    return block


def audio_block(capabilities: AgentCapabilities, data: str, mime_type: str) -> ContentBlock:
    """An audio block (base64 ``data``); needs ``promptCapabilities.audio``."""
    capabilities.require(BLOCK_CAPABILITY["audio"], "an audio prompt block")
    return {
        "type": "audio",
        "data": _string(data, "data"),
        "mimeType": _non_empty(mime_type, "mimeType"),
    }


def embedded_text_block(
    capabilities: AgentCapabilities, uri: str, text: str, *, mime_type: str | None = None
) -> ContentBlock:
    """An embedded text resource; needs ``promptCapabilities.embeddedContext``."""
    capabilities.require(BLOCK_CAPABILITY["resource"], "an embedded resource prompt block")
    resource: dict[str, Any] = {"uri": _non_empty(uri, "uri"), "text": _string(text, "text")}
    if mime_type is not None:
        resource["mimeType"] = _string(mime_type, "mimeType")
    return {"type": "resource", "resource": resource}


def embedded_blob_block(
    capabilities: AgentCapabilities, uri: str, blob: str, *, mime_type: str | None = None
) -> ContentBlock:
    """An embedded binary resource (base64 ``blob``); needs ``embeddedContext``."""
    capabilities.require(BLOCK_CAPABILITY["resource"], "an embedded resource prompt block")
    resource: dict[str, Any] = {"uri": _non_empty(uri, "uri"), "blob": _string(blob, "blob")}
    if mime_type is not None:
        resource["mimeType"] = _string(mime_type, "mimeType")
    return {"type": "resource", "resource": resource}


@dataclass(frozen=True, slots=True)
class PreparedContext:
    """Context the caller prepared for a prompt (already read; Baton reads nothing). ``uri``
    names it when it is sent as an embedded resource."""

    text: str
    uri: str
    mime_type: str = CONTEXT_MIME_TYPE


def context_block(capabilities: AgentCapabilities, context: PreparedContext) -> ContentBlock:
    """One prepared context as the session can take it: an embedded text resource when
    ``embeddedContext`` was negotiated, else a separate text block with the same text."""
    if capabilities.prompt_embedded_context:
        return embedded_text_block(
            capabilities, context.uri, context.text, mime_type=context.mime_type
        )
    return text_block(context.text)


def build_prompt(
    capabilities: AgentCapabilities,
    authored_text: str,
    *,
    context: Sequence[PreparedContext] = (),
    attachments: Sequence[ContentBlock] = (),
) -> list[ContentBlock]:
    """The ``prompt`` list: prepared context in order, then ``attachments`` (blocks built with
    this module's builders), then the authored text unchanged. Every block is checked against
    ``capabilities``."""
    blocks = [context_block(capabilities, item) for item in context]
    blocks.extend(dict(block) for block in attachments)
    blocks.append(text_block(authored_text))
    check_prompt(capabilities, blocks)
    return blocks


def check_prompt(capabilities: AgentCapabilities, blocks: Sequence[Mapping[str, Any]]) -> None:
    """Refuse a prompt the agent did not say it can take, before anything is sent: an empty
    prompt or an unknown block type (:class:`InvalidArgument`), or an image, audio or embedded
    resource block without its capability (:class:`CapabilityNotAdvertised`)."""
    if isinstance(blocks, str | bytes) or not isinstance(blocks, Sequence) or not blocks:
        raise InvalidArgument("a prompt is a non-empty list of content blocks")
    for index, block in enumerate(blocks):
        kind = block.get("type") if isinstance(block, Mapping) else None
        if kind in BASELINE_BLOCK_TYPES:
            continue
        if not isinstance(kind, str) or kind not in BLOCK_CAPABILITY:
            raise InvalidArgument(f"prompt block #{index + 1} has no known content type")
        capabilities.require(BLOCK_CAPABILITY[kind], f"a {kind} prompt block")
