"""The one extension object per lane: which profile gets which, and what each hook does
without a subprocess (the end-to-end behaviour is in test_extensions.py)."""

from __future__ import annotations

import asyncio
import re
from types import SimpleNamespace
from typing import Any

import pytest

from baton.errors import ExtensionPayloadInvalid
from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import (
    EXT_CURSOR_MODEL_PICKER,
    EXT_GROK_SESSION_MODELS,
    LaunchProbe,
    Profile,
)
from baton.runtime.lanes.extensions import (
    CursorModelPicker,
    GrokSessionModels,
    NoExtensions,
    extensions_for,
)
from baton.wire.extensions import grok

CATALOG = {
    "currentModelId": "grok-build",
    "availableModels": [
        {"modelId": "grok-build", "name": "Grok Build"},
        {"modelId": "grok-code-fast-1", "name": "Grok Code Fast"},
    ],
}


def spec(extensions: frozenset[str]) -> Any:
    profile = Profile(
        id="exttest",
        display_name="extension test",
        executables=("x",),
        override_env="BATON_EXTTEST_ACP_BIN",
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile("x"),)),
        environment=CLAUDE_ENVIRONMENT,
        extensions=extensions,
    )
    return SimpleNamespace(profile=profile)


def test_each_profile_gets_its_one_extension_object() -> None:
    assert isinstance(extensions_for(spec(frozenset({EXT_GROK_SESSION_MODELS}))), GrokSessionModels)
    assert isinstance(extensions_for(spec(frozenset({EXT_CURSOR_MODEL_PICKER}))), CursorModelPicker)
    plain = extensions_for(spec(frozenset()))
    assert type(plain) is NoExtensions
    assert type(extensions_for(SimpleNamespace(profile=None))) is NoExtensions  # type: ignore[arg-type]


def test_no_extensions_changes_nothing() -> None:
    none = NoExtensions()
    assert none.initialize_transform() is None
    none.notified({"method": grok.MODELS_UPDATE_METHOD, "params": {"bad": 1}})
    assert none.models is None
    selected = asyncio.run(none.select(None, "s", "m", "e"))  # type: ignore[arg-type]
    assert selected is False


def test_grok_replaces_its_catalog_and_drops_a_malformed_one() -> None:
    ext = GrokSessionModels()
    ext.started(SimpleNamespace(initialize_result={"_meta": {"modelState": CATALOG}}), [])  # type: ignore[arg-type]
    assert ext.models is not None and ext.models.current_model_id == "grok-build"
    update = {**CATALOG, "currentModelId": "grok-code-fast-1"}
    ext.notified({"method": grok.MODELS_UPDATE_METHOD, "params": update})
    assert ext.models is not None and ext.models.current_model_id == "grok-code-fast-1"
    ext.notified({"method": "something/else", "params": {}})
    assert ext.models is not None
    with pytest.raises(ExtensionPayloadInvalid):
        ext.notified({"method": grok.MODELS_UPDATE_METHOD, "params": {"availableModels": 3}})
    assert ext.models is None
    ext.started(SimpleNamespace(initialize_result={"_meta": {"modelState": CATALOG}}), [])  # type: ignore[arg-type]
    ext.lost("process_lost")
    assert ext.models is None


def test_cursor_adds_its_flag_and_forgets_its_cache_on_loss() -> None:
    ext = CursorModelPicker()
    transform = ext.initialize_transform()
    assert transform is not None
    assert transform({"protocolVersion": 1}) != {"protocolVersion": 1}
    ext.lost("auth_failure")
    assert ext.catalog.last_clear_reason == "auth_failure"
