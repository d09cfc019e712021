"""The service serves the inspector: `/`, its files, the login page for a browser without a
token, and the security headers on every one (in-process, through httpx's ASGI transport)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from baton.inspector import CONTENT_SECURITY_POLICY, load_asset
from baton.runtime.runtime import Runtime
from baton.service.app import build_app
from baton.service.context import ServiceSettings
from baton.service.feeds import QueueBounds
from baton.service.guard import HostRule
from baton.service.server import build_service
from baton.service.tokens import Credentials

PORT = 18001
TOKEN = "i" * 43
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    runtime = Runtime(data_dir=tmp_path / "data", environ={"PATH": "/usr/bin:/bin"})
    service = build_service(runtime, ServiceSettings(), permission_wait=1.0, bounds=QueueBounds())
    await runtime.open()
    app = build_app(service, credentials=Credentials(TOKEN), hosts=HostRule("127.0.0.1", PORT))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=f"http://127.0.0.1:{PORT}") as c:
        try:
            yield c
        finally:
            await service.launcher.stop(0.1)
            await runtime.close()


async def test_the_page_and_its_files_are_served_with_the_policy(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/", headers=AUTH)
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
    assert page.headers["x-content-type-options"] == "nosniff"
    assert b"/inspector/js/main.js" in page.content
    script = await client.get("/inspector/js/transcript.js", headers=AUTH)
    assert script.status_code == 200
    assert script.headers["content-type"] == "text/javascript; charset=utf-8"
    asset = load_asset("js/transcript.js")
    assert asset is not None and script.content == asset.body
    assert script.headers["content-security-policy"] == CONTENT_SECURITY_POLICY


@pytest.mark.parametrize(
    "path",
    ["/inspector/js/nothing.js", "/inspector/../service/app.py", "/inspector/%2e%2e/assets.py"],
)
async def test_anything_else_under_the_prefix_is_a_json_404(
    client: httpx.AsyncClient, path: str
) -> None:
    answer = await client.get(path, headers=AUTH)
    assert answer.status_code == 404
    assert answer.json()["error"]["code"] == "API_NOT_FOUND"


async def test_a_browser_without_the_token_gets_the_login_page(
    client: httpx.AsyncClient,
) -> None:
    for path in ("/", "/inspector/js/main.js"):
        answer = await client.get(path)
        assert answer.status_code == 401, path
        assert answer.headers["content-type"] == "text/html; charset=utf-8"
        assert b'<form method="post" action="/login"' in answer.content
        assert answer.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert answer.headers["cache-control"] == "no-store"
    login = await client.get("/login")
    assert login.status_code == 200 and b"Authorization: Bearer TOKEN" in login.content
    # The API keeps its JSON error.
    api = await client.get("/api/v1/runs")
    assert api.status_code == 401 and api.json()["error"]["code"] == "API_UNAUTHORIZED"


async def test_the_login_form_posts_the_token_for_a_cookie(client: httpx.AsyncClient) -> None:
    own = {"Origin": f"http://127.0.0.1:{PORT}"}
    answer = await client.post("/login", data={"token": TOKEN}, headers=own)
    assert answer.status_code == 303 and answer.headers["location"] == "/"
    assert "HttpOnly" in answer.headers["set-cookie"] and TOKEN not in answer.headers["set-cookie"]
    wrong = await client.post("/login", data={"token": "nope"}, headers=own)
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    # A no-referrer page's form posts with Origin: null; the secret in the body is the check.
    null = await client.post("/login", data={"token": TOKEN}, headers={"Origin": "null"})
    assert null.status_code == 303 and "set-cookie" in null.headers
    guessed = await client.post("/login", data={"token": "x" * 43}, headers={"Origin": "null"})
    assert guessed.status_code == 401 and "set-cookie" not in guessed.headers


async def test_the_api_token_is_no_longer_a_url_credential(client: httpx.AsyncClient) -> None:
    answer = await client.get(f"/?token={TOKEN}")
    assert answer.status_code == 401 and "set-cookie" not in answer.headers
