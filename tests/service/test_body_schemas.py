"""Every route's request-body schema (baton/service/openapi.py) agrees with what the route
accepts and rejects.

For each operation with a body: a base body that the schema accepts is not refused as
API_REQUEST_INVALID; each mutation the schema rejects (a property of the wrong type, an enum
value outside the enum, a number at or below an exclusive minimum, a required property left
out, an undeclared property where ``additionalProperties`` is false) is refused with 400
API_REQUEST_INVALID; an undeclared property where the schema allows one is not refused. And
the names the route reads from the body are exactly the schema's properties (a field the
route reads but the document does not describe, or one it documents but never reads, fails).
The served document itself is checked by a validator made for OpenAPI
(openapi-spec-validator).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.validation.exceptions import OpenAPIValidationError

from baton.service import (
    routes_elicitations,
    routes_permissions,
    routes_readiness,
    routes_runs,
    routes_sessions,
)
from baton.service.openapi import OPERATIONS, SCHEMAS, openapi_document

from .conftest import AGENT, AUTH, Api

#: The route modules that read a JSON body (each imports ``json_object`` by name).
BODY_MODULES = (
    routes_elicitations,
    routes_permissions,
    routes_readiness,
    routes_runs,
    routes_sessions,
)

_names = itertools.count()


@dataclass(frozen=True)
class Probe:
    """Where an operation's body goes and a base body its schema accepts."""

    path: str
    base: Callable[[Api], dict[str, Any]]


#: One probe per operation with a body. Paths name no existing target where the route reads
#: its body before it looks the target up (a valid body then answers 404, not 400).
PROBES: dict[str, Probe] = {
    "liveReadiness": Probe("/api/v1/readiness/claude/live", lambda api: {"timeout": 5}),
    "startRun": Probe(
        "/api/v1/runs",
        lambda api: {"prompt": "echo hi", "agentCommand": AGENT, "cwd": str(api.cwd)},
    ),
    "answerPermission": Probe("/api/v1/permissions/nope/answer", lambda api: {"cancel": True}),
    "answerElicitation": Probe(
        "/api/v1/elicitations/nope/answer", lambda api: {"action": "cancel"}
    ),
    "createSession": Probe(
        "/api/v1/sessions",
        lambda api: {"name": f"s{next(_names)}", "agentCommand": AGENT, "cwd": str(api.cwd)},
    ),
    "promptSession": Probe("/api/v1/sessions/nope/prompt", lambda api: {"prompt": "hi"}),
    "steerSession": Probe("/api/v1/sessions/nope/steer", lambda api: {"text": "hi"}),
    "forkSession": Probe("/api/v1/sessions/nope/fork", lambda api: {"name": "fork"}),
    "setControl": Probe(
        "/api/v1/sessions/nope/controls",
        lambda api: {"controlId": "mode", "value": "x", "revision": "r1"},
    ),
}


def _wrong_values(schema: dict[str, Any]) -> Iterator[Any]:
    """Values the property schema rejects (each checked against the schema by the caller)."""
    if "enum" in schema:
        yield "not-a-member"
    if "const" in schema:
        yield not schema["const"] if isinstance(schema["const"], bool) else None
    kind = schema.get("type")
    if kind == "string":
        yield 12
    elif kind == "number":
        yield "1"
        if "exclusiveMinimum" in schema:
            yield schema["exclusiveMinimum"]
    elif kind == "boolean":
        yield "true"
    elif kind == "object":
        yield ["x"]
        if isinstance(schema.get("additionalProperties"), dict):
            yield {"k": 1}
    elif kind == "array":
        yield "x"
        yield [1]


class ReadingBody(dict[str, Any]):
    """A body that remembers which names the route read."""

    def __init__(self, value: dict[str, Any], read: set[str]) -> None:
        super().__init__(value)
        self.read = read

    def get(self, key: str, default: Any = None) -> Any:
        self.read.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.read.add(str(key))
        return super().__contains__(key)

    def __iter__(self) -> Iterator[str]:
        self.read.update(super().keys())
        return super().__iter__()


@pytest.fixture
def read_names(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The names routes read from their bodies, from here on."""
    read: set[str] = set()
    for module in BODY_MODULES:
        original = module.json_object

        async def recording(request: Any, _original: Any = original) -> dict[str, Any]:
            return ReadingBody(await _original(request), read)

        monkeypatch.setattr(module, "json_object", recording)
    return read


def test_the_served_document_is_valid_openapi() -> None:
    validate(openapi_document())


def test_every_operation_with_a_body_has_a_probe() -> None:
    assert {op.id for op in OPERATIONS if op.body is not None} == set(PROBES)


def test_a_broken_document_is_refused_by_the_validator() -> None:
    broken = openapi_document()
    broken["paths"]["/api/v1/runs/{run}"]["get"]["parameters"][0]["in"] = "nowhere"
    with pytest.raises(OpenAPIValidationError):
        validate(broken)


def _mutations(schema: dict[str, Any], base: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    for name, prop in schema.get("properties", {}).items():
        for value in _wrong_values(prop):
            yield f"{name}={value!r}", {**base, name: value}
    for name in schema.get("required", ()):
        yield f"without {name}", {k: v for k, v in base.items() if k != name}
    if schema.get("additionalProperties") is False:
        yield "an undeclared property", {**base, "undeclared": "x"}


async def _post(api: Api, path: str, body: dict[str, Any]) -> tuple[int, str | None]:
    answer = await api.client.post(path, json=body, headers=AUTH)
    code = answer.json().get("error", {}).get("code") if answer.status_code >= 400 else None
    return answer.status_code, code


@pytest.mark.parametrize("operation_id", sorted(PROBES))
async def test_the_route_accepts_and_rejects_what_its_schema_says(
    api: Api, read_names: set[str], operation_id: str
) -> None:
    [operation] = [op for op in OPERATIONS if op.id == operation_id]
    assert operation.body is not None
    schema = SCHEMAS[operation.body]
    validator = jsonschema.Draft202012Validator(schema)
    probe = PROBES[operation_id]
    base = probe.base(api)
    assert validator.is_valid(base), base
    status, code = await _post(api, probe.path, base)
    assert code != "API_REQUEST_INVALID", (operation_id, "base", status)

    for label, body in _mutations(schema, probe.base(api)):
        assert not validator.is_valid(body), (operation_id, label)
        status, code = await _post(api, probe.path, body)
        assert (status, code) == (400, "API_REQUEST_INVALID"), (operation_id, label)

    if schema.get("additionalProperties") is not False:
        extra = {**probe.base(api), "undeclared": "x"}
        assert validator.is_valid(extra)
        status, code = await _post(api, probe.path, extra)
        assert code != "API_REQUEST_INVALID", (operation_id, "undeclared", status)

    read_names.discard("undeclared")
    assert read_names == set(schema.get("properties", {})), operation_id
