"""OpenTelemetry traces of runs: Baton's one seam to OpenTelemetry (the ``otel`` extra).

A run is traced when the OpenTelemetry API is installed (``pip install 'baton-acp[otel]'``)
and ``OTEL_SDK_DISABLED`` is not ``true``, through the tracer provider the application
configured (:func:`opentelemetry.trace.set_tracer_provider`, ``opentelemetry-instrument``),
or the one given to :class:`~baton.runtime.runtime.Runtime` (``tracer_provider=``). Without the
API nothing is imported: :func:`tracing_available` asks the import system whether the module
exists and stops there, so a run costs one dictionary lookup per event.

The spans are built from the run's events, after their redaction (docs/events.md), never from
the messages: they carry Baton's identifiers, the agent's profile id, kinds, statuses, stop
reasons, usage counts and cost, and never the agent's text, a tool's title, command or paths,
a permission option's label, or anything of the environment. The names and attributes are
listed in docs/tracing.md:

- ``baton.run`` (the root, one per run), with the child
- ``baton.session.setup`` (from the run's start to its ``session`` event: the agent's start,
  initialize, session/new or attach, settings), and the child
- ``baton.turn`` (from the session's opening to the result), whose children are
- ``baton.permission`` (one per decision, at its ``permission`` event) and
- ``baton.tool_call`` (one per tool call id, from its first ``tool_call`` event to the one
  that reports it ``completed`` or ``failed``, else to the turn's end).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from baton._version import __version__
from baton.runtime.turns.events import RunEvent
from baton.wire.usage import TURN_USAGE_FIELDS

if TYPE_CHECKING:
    from opentelemetry.trace import Span, Tracer, TracerProvider

#: The instrumentation scope's name (the tracer's).
INSTRUMENTATION_NAME: Final = "baton"
#: The standard variable that turns OpenTelemetry off ("true", any case).
SDK_DISABLED_ENV: Final = "OTEL_SDK_DISABLED"
#: Tool-call statuses after which its span ends.
FINAL_TOOL_STATUSES: Final = frozenset({"completed", "failed"})
#: The most tool-call spans one turn keeps open: a flood of tool-call ids from an agent ends
#: the oldest span rather than growing without bound (each open span holds a few hundred bytes).
MAX_OPEN_TOOL_SPANS: Final = 256

RunSink = Callable[[RunEvent], None]


def tracing_available() -> bool:
    """Whether the OpenTelemetry API is installed (without importing it)."""
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except (ImportError, ValueError):  # the namespace package is missing or not importable
        return False


def tracer_for(environ: Mapping[str, str], provider: TracerProvider | None = None) -> Tracer | None:
    """The tracer runs are traced with, or None (the API missing, or OpenTelemetry disabled
    by ``OTEL_SDK_DISABLED=true``). ``provider`` None: the global provider."""
    if environ.get(SDK_DISABLED_ENV, "").strip().lower() == "true":
        return None
    if provider is None and not tracing_available():
        return None
    from opentelemetry import trace

    return trace.get_tracer(INSTRUMENTATION_NAME, __version__, tracer_provider=provider)


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _set(span: Span, attributes: Mapping[str, object]) -> None:
    for key, value in attributes.items():
        if isinstance(value, str | bool | int | float):
            span.set_attribute(key, value)


class RunTrace:
    """The spans of one run, built from its redacted events (see the module's docstring)."""

    def __init__(self, tracer: Tracer) -> None:
        from opentelemetry import trace

        self._trace = trace
        self.tracer = tracer
        self.run: Span | None = None
        self.setup: Span | None = None
        self.turn: Span | None = None
        self.tools: dict[str, Span] = {}
        self.usage: dict[str, Any] = {}

    def _child(self, name: str, parent: Span, attributes: Mapping[str, object]) -> Span:
        span = self.tracer.start_span(
            name, context=self._trace.set_span_in_context(parent), start_time=time.time_ns()
        )
        _set(span, attributes)
        return span

    def observe(self, event: RunEvent) -> None:
        """Advance the spans by one event (events of other types change nothing)."""
        handler = _HANDLERS.get(event.type)
        if handler is not None:
            handler(self, event.run_id, event.data)

    def _started(self, run_id: str, data: Mapping[str, Any]) -> None:
        self.run = self.tracer.start_span("baton.run", start_time=time.time_ns())
        _set(
            self.run,
            {
                "baton.run.id": run_id,
                "baton.agent": data.get("agent"),
                "baton.policy": data.get("policy"),
            },
        )
        self.setup = self._child("baton.session.setup", self.run, {"baton.run.id": run_id})

    def _session(self, run_id: str, data: Mapping[str, Any]) -> None:
        if self.run is None:
            return
        ids = {
            "baton.session.id": data.get("sessionId"),
            "acp.session.id": data.get("providerSessionId"),
        }
        _set(self.run, ids)
        if self.setup is not None:
            _set(self.setup, {**ids, "baton.session.attached_by": data.get("attachedBy")})
            self.setup.end(time.time_ns())
            self.setup = None
        if self.turn is None:
            self.turn = self._child("baton.turn", self.run, {"baton.run.id": run_id, **ids})

    def _tool_call(self, run_id: str, data: Mapping[str, Any]) -> None:
        tool_id = data.get("toolCallId")
        if self.turn is None or not isinstance(tool_id, str):
            return
        span = self.tools.get(tool_id)
        if span is None:
            if len(self.tools) >= MAX_OPEN_TOOL_SPANS:
                oldest = next(iter(self.tools))
                self.tools.pop(oldest).end(time.time_ns())
            span = self._child("baton.tool_call", self.turn, {"baton.tool_call.id": tool_id})
            self.tools[tool_id] = span
        _set(
            span,
            {
                "baton.tool_call.kind": data.get("kind"),
                "baton.tool_call.status": data.get("status"),
                "baton.tool_call.name": data.get("name"),
            },
        )
        if data.get("status") in FINAL_TOOL_STATUSES:
            self.tools.pop(tool_id).end(time.time_ns())

    def _permission(self, run_id: str, data: Mapping[str, Any]) -> None:
        if self.turn is None:
            return
        chosen = data.get("optionId")
        kinds = {o.get("optionId"): o.get("kind") for o in data.get("options") or ()}
        span = self._child(
            "baton.permission",
            self.turn,
            {
                "baton.tool_call.id": data.get("toolCallId"),
                "baton.permission.outcome": data.get("outcome"),
                "baton.permission.option_kind": kinds.get(chosen),
                "baton.permission.chosen_by": data.get("chosenBy"),
                "baton.permission.reason_code": data.get("reasonCode"),
            },
        )
        span.end(time.time_ns())

    def _usage(self, run_id: str, data: Mapping[str, Any]) -> None:
        self.usage.update(data)

    def _result(self, run_id: str, data: Mapping[str, Any]) -> None:
        outcome: dict[str, object] = {
            "baton.run.status": data.get("status"),
            "baton.stop_reason": data.get("stopReason"),
            "baton.error_code": data.get("errorCode"),
            "baton.exit_code": data.get("exitCode"),
            "baton.tool_calls": data.get("toolCalls"),
            "baton.permissions": data.get("permissions"),
        }
        turn_usage = self.usage.get("turn")
        if isinstance(turn_usage, Mapping):
            for name in TURN_USAGE_FIELDS:  # as ``baton.usage.<snake_case name>``
                outcome[f"baton.usage.{_snake(name)}"] = turn_usage.get(name)
        for name in ("used", "size"):
            outcome[f"baton.context.{name}"] = self.usage.get(name)
        cost = self.usage.get("cost")
        if isinstance(cost, Mapping):
            outcome["baton.cost.amount"] = cost.get("amount")
            outcome["baton.cost.currency"] = cost.get("currency")
        failed = data.get("status") != "COMPLETED"
        for span in (self.turn, self.run):
            if span is not None:
                _set(span, outcome)
                if failed:
                    span.set_status(self._trace.StatusCode.ERROR, str(data.get("errorCode")))
        self.close(None)

    def close(self, error: BaseException | None) -> None:
        """End every span still open (the run raised, or its result ended them), children
        first; ``error`` marks the open ones failed."""
        now = time.time_ns()
        spans = [*self.tools.values(), self.setup, self.turn, self.run]
        self.tools.clear()
        self.setup = self.turn = self.run = None
        for span in spans:
            if span is None:
                continue
            if error is not None:
                span.set_status(self._trace.StatusCode.ERROR, type(error).__name__)
            span.end(now)


_HANDLERS: Final[dict[str, Callable[[RunTrace, str, Mapping[str, Any]], None]]] = {
    "run_started": RunTrace._started,
    "session": RunTrace._session,
    "tool_call": RunTrace._tool_call,
    "permission": RunTrace._permission,
    "usage": RunTrace._usage,
    "result": RunTrace._result,
}


@contextmanager
def traced(tracer: Tracer | None, sink: RunSink | None) -> Iterator[RunSink | None]:
    """``sink`` wrapped so that each event also advances the run's spans (``tracer`` None:
    ``sink`` itself, untouched). Leaving the block ends what is still open, failed when it
    is left by an exception (a cancellation included)."""
    if tracer is None:
        yield sink
        return
    run_trace = RunTrace(tracer)

    def observed(event: RunEvent) -> None:
        run_trace.observe(event)
        if sink is not None:
            sink(event)

    try:
        yield observed
    except BaseException as exc:
        run_trace.close(exc)
        raise
    run_trace.close(None)
