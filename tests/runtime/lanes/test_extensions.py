"""Profile-gated extensions through the runtime, against the scripted agent's contract shapes:
Grok's session models catalog and Cursor's parameterized model picker. Never for another
profile."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from baton.journal import Journal
from baton.runtime.agents.environment import CLAUDE_ENVIRONMENT
from baton.runtime.agents.profiles import (
    EXT_CURSOR_MODEL_PICKER,
    EXT_GROK_SESSION_MODELS,
    LaunchProbe,
    Profile,
)
from baton.runtime.runtime import RunRequest, RunResult, Runtime

OVERRIDE = "BATON_EXT_TEST_BIN"


def profile(extensions: frozenset[str]) -> Profile:
    return Profile(
        id="exttest",
        display_name="extension test",
        executables=("baton-ext-test-agent",),
        override_env=OVERRIDE,
        launch_argv=(),
        version_argv=None,
        probe=LaunchProbe(("--help",), (re.compile(r"deterministic ACP v1 agent"),)),
        environment=CLAUDE_ENVIRONMENT,
        extensions=extensions,
    )


def wrapper(tmp_path: Path, agent_profile: str) -> Path:
    path = tmp_path / f"agent-{agent_profile}.sh"
    path.write_text(
        f'#!/bin/sh\nexec {sys.executable} -m baton.agents.scripted --profile {agent_profile} "$@"\n'
    )
    path.chmod(0o755)
    return path


async def run_with(
    tmp_path: Path, agent_profile: str, extensions: frozenset[str], **kwargs: object
) -> tuple[RunResult, Runtime, list[str]]:
    env = {**os.environ, OVERRIDE: str(wrapper(tmp_path, agent_profile))}
    rt = Runtime(data_dir=tmp_path / "data", environ=env, profiles={"exttest": profile(extensions)})
    async with rt:
        result = await rt.run(
            RunRequest(prompt="echo hi", agent="exttest", cwd=str(tmp_path), **kwargs)  # type: ignore[arg-type]
        )
        journal = Journal.in_data_dir(rt.data_dir)
        methods = [
            r.metadata.method or ""
            for server in journal.servers()
            for r in journal.records(server)
            if r.direction == "outbound"
        ]
    return result, rt, methods


async def test_grok_model_and_effort_go_through_set_model_with_meta(tmp_path: Path) -> None:
    result, rt, methods = await run_with(
        tmp_path, "grok", frozenset({EXT_GROK_SESSION_MODELS}), model="grok-4.5", effort="LOW"
    )
    assert result.status == "COMPLETED", result.message
    assert "session/set_model" in methods
    journal = Journal.in_data_dir(rt.data_dir)
    [set_model] = [
        r.message()
        for server in journal.servers()
        for r in journal.records(server)
        if r.metadata.method == "session/set_model"
    ]
    assert set_model["params"]["modelId"] == "grok-4.5"
    assert set_model["params"]["_meta"] == {"reasoningEffort": "low"}


async def test_grok_refuses_an_effort_the_model_does_not_offer(tmp_path: Path) -> None:
    result, _, methods = await run_with(
        tmp_path,
        "grok",
        frozenset({EXT_GROK_SESSION_MODELS}),
        model="grok-code-fast-1",
        effort="high",
    )
    assert result.status == "FAILED"
    assert result.error_code == "CHOICE_NOT_ADVERTISED"
    assert "session/set_model" not in methods
    assert "session/prompt" not in methods


async def test_cursor_lists_models_before_session_new_and_applies_model_then_effort(
    tmp_path: Path,
) -> None:
    result, rt, methods = await run_with(
        tmp_path, "cursor", frozenset({EXT_CURSOR_MODEL_PICKER}), model="gpt-5", effort="high"
    )
    assert result.status == "COMPLETED", result.message
    assert methods.index("cursor/list_available_models") < methods.index("session/new")
    journal = Journal.in_data_dir(rt.data_dir)
    [initialize] = [
        r.message()
        for server in journal.servers()
        for r in journal.records(server)
        if r.metadata.method == "initialize" and r.direction == "outbound"
    ]
    assert initialize["params"]["clientCapabilities"]["_meta"] == {"parameterizedModelPicker": True}
    configs = [
        r.message()["params"]
        for server in journal.servers()
        for r in journal.records(server)
        if r.metadata.method == "session/set_config_option"
    ]
    assert [(c["configId"], c["value"]) for c in configs] == [
        ("model", "gpt-5"),
        ("reasoning", "high"),
    ]


async def test_cursor_refuses_a_model_its_catalog_does_not_list(tmp_path: Path) -> None:
    result, _, methods = await run_with(
        tmp_path, "cursor", frozenset({EXT_CURSOR_MODEL_PICKER}), model="gpt-99"
    )
    assert result.error_code == "CHOICE_NOT_ADVERTISED"
    assert "session/new" not in methods


async def test_cursor_extension_is_never_enabled_for_another_profile(tmp_path: Path) -> None:
    result, _, methods = await run_with(tmp_path, "cursor", frozenset(), model="gpt-5")
    assert "cursor/list_available_models" not in methods
    assert result.status == "COMPLETED", "the model is still set through the stable config path"


async def test_grok_extension_is_never_enabled_for_another_profile(tmp_path: Path) -> None:
    result, _, methods = await run_with(tmp_path, "grok", frozenset(), model="grok-4.5")
    # Without the extension the legacy models object is not writable: a clear failure.
    assert "session/set_model" not in methods
    assert result.status == "FAILED"
    assert result.error_code in ("CHOICE_NOT_ADVERTISED", "LEGACY_METHOD_DISABLED")
