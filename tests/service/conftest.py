"""An in-process service: a runtime over a temporary data directory, its application, and an
httpx client speaking to it through ASGITransport (no socket)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import orjson
import pytest

from baton.runtime.runtime import Runtime
from baton.service.app import build_app
from baton.service.context import Service, ServiceSettings
from baton.service.feeds import QueueBounds
from baton.service.guard import HostRule
from baton.service.openapi import OPERATIONS, SCHEMAS
from baton.service.openapi_responses import RESPONSES
from baton.service.server import build_service
from baton.service.tokens import Credentials

AGENT = f"{sys.executable} -m baton.agents.scripted"
PORT = 18000
BASE = f"http://127.0.0.1:{PORT}"
TOKEN = "t" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@dataclass
class Api:
    """The client, the service behind it and the test's working directory."""

    client: httpx.AsyncClient
    service: Service
    credentials: Credentials
    cwd: Path

    async def start(self, prompt: str, **fields: Any) -> str:
        body = {"prompt": prompt, "agentCommand": AGENT, "cwd": str(self.cwd), **fields}
        answer = await self.client.post("/api/v1/runs", json=body, headers=AUTH)
        assert answer.status_code == 202, answer.text
        run_id: str = answer.json()["runId"]
        return run_id

    async def events(self, run_id: str, last: str | None = None) -> list[dict[str, Any]]:
        headers = dict(AUTH)
        if last is not None:
            headers["Last-Event-ID"] = last
        answer = await self.client.get(f"/api/v1/runs/{run_id}/events", headers=headers)
        assert answer.status_code == 200, answer.text
        return parse_sse(answer.text)

    async def finish(self, run_id: str) -> dict[str, Any]:
        """Wait for the run's task, then its record."""
        task = self.service.launcher.tasks.get(run_id)
        if task is not None:
            await asyncio.wait({task}, timeout=60)
        answer = await self.client.get(f"/api/v1/runs/{run_id}", headers=AUTH)
        assert answer.status_code == 200, answer.text
        view: dict[str, Any] = answer.json()
        return view


def _operation_of(method: str, path: str) -> str | None:
    """The operationId of the route serving ``method path`` (None: no route)."""
    parts = path.split("/")
    for op in OPERATIONS:
        template = op.path.split("/")
        if (
            op.method == method.lower()
            and len(template) == len(parts)
            and all(t.startswith("{") or t == p for t, p in zip(template, parts, strict=True))
        ):
            return op.id
    return None


async def check_response(response: httpx.Response) -> None:
    """Every JSON success answer a service test receives matches its operation's documented
    schema (baton/service/openapi_responses.py); an error matches the Error schema."""
    if "application/json" not in response.headers.get("content-type", ""):
        return
    operation = _operation_of(response.request.method, response.request.url.path)
    if operation is None:
        return
    await response.aread()
    body = response.json()
    if response.status_code < 400:
        media, schema = RESPONSES[operation]
        assert media == "application/json", (operation, media)
    else:
        schema = SCHEMAS["Error"]
    validator = jsonschema.Draft202012Validator(schema)
    errors = [(list(e.absolute_path), e.message) for e in validator.iter_errors(body)]
    assert not errors, (operation, response.status_code, errors)


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Every event of an SSE body as ``{"id", "event", "data"}``."""
    found: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        fields: dict[str, Any] = {"id": None, "event": "message", "data": None}
        for line in block.splitlines():
            if line.startswith(":") or not line:
                continue
            name, _, value = line.partition(": ")
            fields[name] = value
        if fields["data"] is not None:
            fields["data"] = orjson.loads(fields["data"])
            found.append(fields)
    return found


async def make_api(
    tmp_path: Path,
    *,
    settings: ServiceSettings | None = None,
    permission_wait: float = 60.0,
    bounds: QueueBounds | None = None,
    elicitation_wait: float = 60.0,
    store: str | None = None,
) -> tuple[Api, Runtime]:
    runtime = Runtime(data_dir=tmp_path / "data", store=store, environ={"PATH": "/usr/bin:/bin"})
    service = build_service(
        runtime,
        settings or ServiceSettings(allow_agent_command=True),
        permission_wait=permission_wait,
        bounds=bounds or QueueBounds(),
        elicitation_wait=elicitation_wait,
    )
    await runtime.open()
    credentials = Credentials(TOKEN)
    app = build_app(service, credentials=credentials, hosts=HostRule("127.0.0.1", PORT))
    client = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url=BASE,
        event_hooks={"response": [check_response]},
    )
    cwd = tmp_path / "work"
    cwd.mkdir(exist_ok=True)
    return Api(client, service, credentials, cwd), runtime


async def close_api(made: Api, runtime: Runtime) -> None:
    """Stop what :func:`make_api` started: the launcher's runs, the client, the runtime."""
    await made.service.launcher.stop(0.1)
    await made.client.aclose()
    await runtime.close()


async def create_session(api: Api, name: str) -> dict[str, Any]:
    """Create the named session on the scripted agent through the API (201), its record."""
    answer = await api.client.post(
        "/api/v1/sessions",
        json={"name": name, "agentCommand": AGENT, "cwd": str(api.cwd)},
        headers=AUTH,
    )
    assert answer.status_code == 201, answer.text
    record: dict[str, Any] = answer.json()
    return record


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[Api]:
    made, runtime = await make_api(tmp_path)
    try:
        yield made
    finally:
        await close_api(made, runtime)
