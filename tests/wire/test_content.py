"""Prompt content: baseline blocks always, others only when advertised; prepared context."""

from __future__ import annotations

from typing import Any

import pytest

from baton.errors import CapabilityNotAdvertised, InvalidArgument
from baton.wire.capabilities import AgentCapabilities
from baton.wire.content import (
    PreparedContext,
    audio_block,
    build_prompt,
    check_prompt,
    context_block,
    embedded_blob_block,
    embedded_text_block,
    image_block,
    resource_link_block,
    text_block,
)

NONE = AgentCapabilities()
ALL = AgentCapabilities(prompt_image=True, prompt_audio=True, prompt_embedded_context=True)


def test_baseline_blocks() -> None:
    assert text_block("hi") == {"type": "text", "text": "hi"}
    assert text_block("") == {"type": "text", "text": ""}
    assert resource_link_block("file:///a.py", "a.py") == {
        "type": "resource_link",
        "uri": "file:///a.py",
        "name": "a.py",
    }
    full = resource_link_block("file:///a", "a", mime_type="text/x", title="A", size=0)
    assert (full["mimeType"], full["title"], full["size"]) == ("text/x", "A", 0)


@pytest.mark.parametrize(
    ("build", "capability"),
    [
        (lambda c: image_block(c, "aGk=", "image/png"), "promptCapabilities.image"),
        (lambda c: audio_block(c, "aGk=", "audio/wav"), "promptCapabilities.audio"),
        (lambda c: embedded_text_block(c, "mem:a", "x"), "promptCapabilities.embeddedContext"),
        (lambda c: embedded_blob_block(c, "mem:a", "aGk="), "promptCapabilities.embeddedContext"),
    ],
)
def test_gated_blocks_need_their_capability(build: Any, capability: str) -> None:
    with pytest.raises(CapabilityNotAdvertised) as caught:
        build(NONE)
    assert caught.value.capability == capability
    block = build(ALL)
    check_prompt(ALL, [block])
    with pytest.raises(CapabilityNotAdvertised):
        check_prompt(NONE, [block])


def test_gated_block_shapes() -> None:
    assert image_block(ALL, "aGk=", "image/png", uri="file:///i.png") == {
        "type": "image",
        "data": "aGk=",
        "mimeType": "image/png",
        "uri": "file:///i.png",
    }
    assert embedded_text_block(ALL, "mem:a", "x", mime_type="text/plain") == {
        "type": "resource",
        "resource": {"uri": "mem:a", "text": "x", "mimeType": "text/plain"},
    }
    assert embedded_blob_block(ALL, "mem:b", "aGk=")["resource"] == {"uri": "mem:b", "blob": "aGk="}


@pytest.mark.parametrize(
    "build",
    [
        lambda: text_block(3),  # type: ignore[arg-type]
        lambda: resource_link_block("", "a"),
        lambda: resource_link_block("u", "a", size=-1),
        lambda: resource_link_block("u", "a", size=True),  # type: ignore[arg-type]
        lambda: image_block(ALL, "d", ""),
        lambda: embedded_text_block(ALL, "", "x"),
    ],
)
def test_malformed_arguments(build: Any) -> None:
    with pytest.raises(InvalidArgument):
        build()


def test_context_is_embedded_when_negotiated_and_placed_before_the_text() -> None:
    context = [PreparedContext("ctx one", "baton:context/1"), PreparedContext("two", "baton:c/2")]
    authored = "  Fix the bug.\n"
    embedded = build_prompt(ALL, authored, context=context)
    assert embedded == [
        {
            "type": "resource",
            "resource": {"uri": "baton:context/1", "text": "ctx one", "mimeType": "text/plain"},
        },
        {
            "type": "resource",
            "resource": {"uri": "baton:c/2", "text": "two", "mimeType": "text/plain"},
        },
        {"type": "text", "text": authored},
    ]
    plain = build_prompt(NONE, authored, context=context)
    assert plain == [
        {"type": "text", "text": "ctx one"},
        {"type": "text", "text": "two"},
        {"type": "text", "text": authored},
    ]
    assert context_block(NONE, context[0]) == plain[0]


def test_attachments_go_between_context_and_text_and_are_checked() -> None:
    link = resource_link_block("file:///a", "a")
    prompt = build_prompt(NONE, "go", attachments=[link])
    assert prompt == [link, {"type": "text", "text": "go"}]
    with pytest.raises(CapabilityNotAdvertised):
        build_prompt(NONE, "go", attachments=[{"type": "image", "data": "", "mimeType": "x"}])


@pytest.mark.parametrize("prompt", [[], "text", None, [{"type": "video"}], [{"text": "x"}], [3]])
def test_check_prompt_refuses_malformed_prompts(prompt: Any) -> None:
    with pytest.raises(InvalidArgument):
        check_prompt(ALL, prompt)
