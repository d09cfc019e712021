"""`baton run --attach FILE`: files sent through profile-owned mappings.

- cursor: bounded text blocks (its adapter takes text, not embedded resources);
- claude, grok, and any agent that negotiated ``embeddedContext``: embedded text resources;
- images: native image blocks when image support was negotiated; grok's own PNG and JPEG rule
  covers its known false capability flag.

An unsupported media type or an oversized file fails before the prompt is submitted. The
journal masks attachment bytes and URIs in the session/prompt record, so they stay out of
durable protocol records.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from baton.errors import ConfigurationError
from baton.runtime.agents.launch import LaunchSpec
from baton.wire.capabilities import AgentCapabilities
from baton.wire.content import embedded_text_block, image_block, text_block

#: Largest attachment, in bytes (before base64 for images).
MAX_ATTACHMENT_BYTES: Final = 4 * 1024 * 1024
#: Attachments per run.
MAX_ATTACHMENTS: Final = 16
#: Largest text attachment sent as a plain text block (cursor's mapping).
MAX_TEXT_BLOCK_CHARS: Final = 256 * 1024

#: Image types Baton sends as native image blocks.
IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
#: Profiles whose mapping sends text files as embedded text resources.
EMBEDDED_TEXT_PROFILES: Final = frozenset({"claude", "grok"})
#: grok's provider-local rule: PNG and JPEG work although its image flag says false.
GROK_IMAGE_TYPES: Final = frozenset({"image/png", "image/jpeg"})


class AttachmentRefused(ConfigurationError):
    """An attachment cannot be sent to this agent; nothing was submitted."""

    code = "ATTACHMENT_REFUSED"


def _media_type(path: Path, data: bytes) -> str:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    import mimetypes  # only for a run with attachments (issue 34)

    guessed, _ = mimetypes.guess_type(path.name)
    if guessed is not None and guessed.startswith("image/"):
        return guessed
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return guessed or "application/octet-stream"
    return "text/plain" if guessed is None or not guessed.startswith("text/") else guessed


def read_attachment(path: str) -> tuple[Path, bytes]:
    """Read one attachment with its bound; refuse what is not a regular file."""
    resolved = Path(path).expanduser().resolve()
    try:
        info = os.stat(resolved)
    except OSError as exc:
        raise AttachmentRefused(f"--attach {path}: cannot be read ({exc.strerror})") from exc
    if not os.path.isfile(resolved):
        raise AttachmentRefused(f"--attach {path}: not a regular file")
    if info.st_size > MAX_ATTACHMENT_BYTES:
        raise AttachmentRefused(
            f"--attach {path}: {info.st_size} bytes is over the {MAX_ATTACHMENT_BYTES}-byte bound"
        )
    with open(resolved, "rb") as handle:
        data = handle.read(MAX_ATTACHMENT_BYTES + 1)
    if len(data) > MAX_ATTACHMENT_BYTES:
        raise AttachmentRefused(f"--attach {path}: over the {MAX_ATTACHMENT_BYTES}-byte bound")
    return resolved, data


def attachment_blocks(
    spec: LaunchSpec, capabilities: AgentCapabilities, paths: Sequence[str]
) -> list[dict[str, Any]]:
    """The prompt blocks for ``paths`` under ``spec``'s profile mapping (before the text)."""
    if len(paths) > MAX_ATTACHMENTS:
        raise AttachmentRefused(f"at most {MAX_ATTACHMENTS} attachments per run")
    blocks: list[dict[str, Any]] = []
    profile = spec.profile_id
    for raw in paths:
        path, data = read_attachment(raw)
        media = _media_type(path, data)
        uri = path.as_uri()
        if media.startswith("image/"):
            native = capabilities.prompt_image and media in IMAGE_TYPES
            grok_rule = profile == "grok" and media in GROK_IMAGE_TYPES
            if not (native or grok_rule):
                raise AttachmentRefused(
                    f"--attach {raw}: {media} images are not supported by this agent"
                )
            encoded = base64.b64encode(data).decode("ascii")
            if grok_rule and not native:
                blocks.append({"type": "image", "data": encoded, "mimeType": media, "uri": uri})
            else:
                blocks.append(image_block(capabilities, encoded, media, uri=uri))
            continue
        if not media.startswith("text/"):
            raise AttachmentRefused(f"--attach {raw}: media type {media} is not supported")
        text = data.decode("utf-8")
        embedded = profile in EMBEDDED_TEXT_PROFILES or capabilities.prompt_embedded_context
        if profile == "cursor" or not embedded:
            if len(text) > MAX_TEXT_BLOCK_CHARS:
                raise AttachmentRefused(
                    f"--attach {raw}: {len(text)} characters is over the {MAX_TEXT_BLOCK_CHARS}-"
                    "character bound of a text block"
                )
            blocks.append(text_block(f"Attached file {path.name}:\n{text}"))
        elif capabilities.prompt_embedded_context:
            blocks.append(embedded_text_block(capabilities, uri, text, mime_type=media))
        else:
            # The profile's own mapping (grok takes embedded text without advertising it).
            resource = {"uri": uri, "text": text, "mimeType": media}
            blocks.append({"type": "resource", "resource": resource})
    return blocks
