"""OpenTelemetry traces of runs (baton/runtime/tracing.py), read back through the SDK's
in-memory exporter: the span tree, its attributes, what never goes into them, and that
without the ``otel`` extra nothing of OpenTelemetry is imported.

Skipped only when the OpenTelemetry SDK is missing (the dev extra installs it, so CI runs it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from baton.runtime.agents.environment import OTEL_GROUP, filter_environment
from baton.runtime.runtime import Runtime
from baton.runtime.tracing import tracer_for
from baton.runtime.turns.request import RunRequest

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace", reason="the otel test needs the SDK")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

AGENT = [sys.executable, "-m", "baton.agents.scripted"]
#: A value that must never reach a span: the agent's text, the prompt, a secret of the lane.
SECRET = "sk-ant-api03-" + "Q" * 40
WORDS = "a-reply-no-span-may-carry"


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


async def traced_run(tmp_path: Path, exporter: InMemorySpanExporter, prompt: str) -> Any:
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    environ = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    async with Runtime(
        data_dir=tmp_path / "data", environ=environ, tracer_provider=provider
    ) as runtime:
        request = RunRequest(
            prompt=prompt,
            agent_command=AGENT,
            cwd=str(cwd),
            policy="auto-edits",
            allow_unattended=True,
        )
        return await runtime.run(request)


def _by_name(exporter: InMemorySpanExporter) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for span in exporter.get_finished_spans():
        found.setdefault(span.name, []).append(span)
    return found


async def test_a_run_is_a_tree_of_spans(tmp_path: Path, exporter: InMemorySpanExporter) -> None:
    result = await traced_run(
        tmp_path, exporter, f"echo {WORDS}; write notes.txt {SECRET}; cost 12 USD"
    )
    assert result.status == "COMPLETED"
    spans = _by_name(exporter)
    [run] = spans["baton.run"]
    [setup] = spans["baton.session.setup"]
    [turn] = spans["baton.turn"]
    [permission] = spans["baton.permission"]
    [tool] = spans["baton.tool_call"]
    assert run.parent is None
    assert setup.parent.span_id == run.context.span_id
    assert turn.parent.span_id == run.context.span_id
    assert permission.parent.span_id == turn.context.span_id
    assert tool.parent.span_id == turn.context.span_id
    assert run.start_time <= setup.start_time <= setup.end_time <= turn.start_time
    assert turn.end_time <= run.end_time

    assert run.attributes["baton.run.id"] == result.run_id
    assert run.attributes["baton.agent"] == "custom"
    assert run.attributes["baton.policy"] == "auto-edits"
    assert run.attributes["baton.session.id"] == result.session_id
    assert run.attributes["acp.session.id"] == result.provider_session_id
    assert run.attributes["baton.run.status"] == "COMPLETED"
    assert run.attributes["baton.stop_reason"] == "end_turn"
    assert run.attributes["baton.cost.amount"] == 0.12
    assert run.attributes["baton.cost.currency"] == "USD"
    assert run.attributes["baton.context.used"] == 42
    assert turn.attributes["baton.stop_reason"] == "end_turn"
    assert setup.attributes["acp.session.id"] == result.provider_session_id
    assert permission.attributes["baton.permission.outcome"] == "selected"
    assert permission.attributes["baton.permission.option_kind"] == "allow_once"
    assert permission.attributes["baton.permission.chosen_by"] == "policy"
    assert tool.attributes["baton.tool_call.kind"] == "edit"
    assert tool.attributes["baton.tool_call.status"] == "completed"
    assert permission.attributes["baton.tool_call.id"] == tool.attributes["baton.tool_call.id"]

    carried = repr([dict(s.attributes) for s in exporter.get_finished_spans()])
    assert WORDS not in carried and SECRET not in carried and "notes.txt" not in carried


async def test_a_failed_turn_marks_its_spans(
    tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    result = await traced_run(tmp_path, exporter, "echo before; crash 3")
    assert result.status != "COMPLETED"
    spans = _by_name(exporter)
    [run] = spans["baton.run"]
    assert run.status.status_code.name == "ERROR"
    assert run.attributes["baton.run.status"] == result.status
    assert run.attributes["baton.error_code"] == result.error_code


def test_otel_sdk_disabled_turns_tracing_off() -> None:
    provider = sdk_trace.TracerProvider()
    assert tracer_for({"OTEL_SDK_DISABLED": "TRUE"}, provider) is None
    assert tracer_for({}, provider) is not None


def test_the_otel_group_passes_the_standard_variables_when_named() -> None:
    parent = {
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318",
        "OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer x",
        "OTEL_SERVICE_NAME": "agent",
        "OTEL_SOMETHING_ELSE": "not a standard name",
    }
    passed = filter_environment(OTEL_GROUP.keys, parent)
    assert passed == {k: v for k, v in parent.items() if k != "OTEL_SOMETHING_ELSE"}
    assert "OTEL_EXPORTER_OTLP_HEADERS" in OTEL_GROUP.sensitive
    assert "OTEL_SERVICE_NAME" not in OTEL_GROUP.sensitive


#: Hides the opentelemetry package from the import system, as if the extra were not installed,
#: runs one scripted turn, then prints how many opentelemetry modules were imported.
_WITHOUT_EXTRA = """
import asyncio, sys, tempfile, os

if sys.argv[1] == "hide":
    sys.modules["opentelemetry"] = None  # what the import system says of a missing package
from baton.runtime.runtime import Runtime
from baton.runtime.turns.request import RunRequest

async def main():
    with tempfile.TemporaryDirectory() as tmp:
        async with Runtime(data_dir=tmp + "/data", environ={"PATH": os.environ["PATH"]}) as rt:
            result = await rt.run(RunRequest(prompt="echo hi",
                agent_command=[sys.executable, "-m", "baton.agents.scripted"], cwd=tmp))
            assert result.status == "COMPLETED", result
            loaded = [m for m, v in sys.modules.items() if m.startswith("opentelemetry") and v]
            print(rt.tracer is None, len(loaded))

asyncio.run(main())
"""


@pytest.mark.parametrize(("mode", "expected_tracer_none"), [("hide", True), ("keep", False)])
def test_without_the_extra_nothing_of_opentelemetry_is_imported(
    mode: str, expected_tracer_none: bool
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_EXTRA, mode], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    tracer_none, imported = done.stdout.split()
    assert tracer_none == str(expected_tracer_none)
    if expected_tracer_none:
        assert imported == "0"  # not one opentelemetry module: zero cost without the extra
    else:
        assert int(imported) > 0  # the check can fail: with the extra, the API is imported
