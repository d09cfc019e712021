"""The guard in front of every route: Host, token, cookie exchange, Origin, body size, CORS."""

from __future__ import annotations

import httpx
import pytest

from .conftest import AUTH, BASE, PORT, TOKEN, Api


async def test_no_token_and_a_wrong_token_are_401(api: Api) -> None:
    answer = await api.client.get("/api/v1/runs")
    assert answer.status_code == 401
    assert answer.json()["error"] == {
        "code": "API_UNAUTHORIZED",
        "message": "a token is required: Authorization: Bearer TOKEN",
        "fault": "caller",
    }
    assert answer.headers["www-authenticate"].startswith("Bearer")
    wrong = await api.client.get("/api/v1/runs", headers={"Authorization": "Bearer " + "x" * 43})
    assert wrong.status_code == 401
    basic = await api.client.get("/api/v1/runs", headers={"Authorization": f"Basic {TOKEN}"})
    assert basic.status_code == 401
    good = await api.client.get("/api/v1/runs", headers=AUTH)
    assert good.status_code == 200 and good.json() == {"runs": []}


async def test_a_foreign_host_is_refused_before_anything_else(api: Api) -> None:
    for host in ("evil.example:18000", f"127.0.0.1:{PORT + 1}", "127.0.0.1"):
        answer = await api.client.get("/api/v1/runs", headers={**AUTH, "Host": host})
        assert answer.status_code == 421, host
        assert answer.json()["error"]["code"] == "API_HOST_REFUSED"
    local = await api.client.get("/api/v1/runs", headers={**AUTH, "Host": f"localhost:{PORT}"})
    assert local.status_code == 200


async def test_a_url_login_code_is_exchanged_for_a_strict_http_only_cookie(api: Api) -> None:
    code = api.credentials.issue_login_code()
    answer = await api.client.get(f"/api/v1/runs?limit=2&token={code}")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/api/v1/runs?limit=2"
    cookie = answer.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert TOKEN not in cookie and code not in cookie  # the cookie holds its own secret
    value = cookie.split(";")[0].split("=", 1)[1]
    assert api.credentials.session_matches(value)
    followed = await api.client.get("/api/v1/runs", headers={"Cookie": f"baton_session={value}"})
    assert followed.status_code == 200
    forged = await api.client.get("/api/v1/runs", headers={"Cookie": "baton_session=forged"})
    assert forged.status_code == 401
    wrong = await api.client.get("/api/v1/runs?token=nope")
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers


async def test_state_changing_requests_need_a_matching_origin(api: Api) -> None:
    body = {"prompt": "echo hi", "agentCommand": "x"}
    foreign = await api.client.post(
        "/api/v1/runs", json=body, headers={**AUTH, "Origin": "http://evil.example"}
    )
    assert foreign.status_code == 403
    assert foreign.json()["error"]["code"] == "API_ORIGIN_REFUSED"
    cookie = {"Cookie": f"baton_session={api.credentials.new_session()}"}
    bare = await api.client.post("/api/v1/runs", json=body, headers=cookie)
    assert bare.status_code == 403  # a cookie alone never changes state
    own = await api.client.post(
        "/api/v1/permissions/perm-x/answer",
        json={"cancel": True},
        headers={**cookie, "Origin": BASE},
    )
    assert own.status_code == 404  # past the guard: the request is simply unknown
    assert own.json()["error"]["code"] == "PERMISSION_NOT_FOUND"


async def test_bodies_are_bounded_and_must_be_json_objects(api: Api) -> None:
    big = await api.client.post(
        "/api/v1/runs", content=b"{" + b" " * (1024 * 1024 + 1) + b"}", headers=AUTH
    )
    assert big.status_code == 413
    assert big.json()["error"]["code"] == "API_BODY_TOO_LARGE"
    broken = await api.client.post("/api/v1/runs", content=b"{not json", headers=AUTH)
    assert broken.status_code == 400
    assert broken.json()["error"]["code"] == "API_REQUEST_INVALID"
    listed = await api.client.post("/api/v1/runs", content=b"[1]", headers=AUTH)
    assert listed.status_code == 400


async def test_no_cors_and_json_for_unknown_routes(api: Api) -> None:
    preflight = await api.client.options(
        "/api/v1/runs",
        headers={
            **AUTH,
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
        },
    )
    assert preflight.status_code == 403
    assert not any(h.lower().startswith("access-control") for h in preflight.headers)
    missing = await api.client.get("/api/v1/nothing", headers=AUTH)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "API_NOT_FOUND"
    method = await api.client.delete("/api/v1/runs", headers=AUTH)
    assert method.status_code == 405
    assert method.json()["error"]["code"] == "API_METHOD_NOT_ALLOWED"


async def test_the_login_page_is_the_only_public_route(api: Api) -> None:
    page = await api.client.get("/login")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert TOKEN not in page.text
    for path in ("/api/v1", "/api/v1/openapi.json", "/api/v1/readiness", "/api/v1/permissions"):
        assert (await api.client.get(path)).status_code == 401, path


async def test_a_login_code_is_good_once(api: Api) -> None:
    issued = await api.client.post("/api/v1/login-codes", headers=AUTH)
    assert issued.status_code == 201
    body = issued.json()
    assert body["path"] == f"/?token={body['code']}" and body["expiresInSeconds"] == 300
    assert body["code"] != TOKEN
    first = await api.client.get(body["path"])
    assert first.status_code == 303 and "set-cookie" in first.headers
    again = await api.client.get(body["path"])
    assert again.status_code == 401 and "set-cookie" not in again.headers
    api.client.cookies.clear()
    nobody = await api.client.post("/api/v1/login-codes")
    assert nobody.status_code == 401


async def test_the_api_token_in_a_url_is_refused(api: Api) -> None:
    answer = await api.client.get(f"/?token={TOKEN}")
    assert answer.status_code == 401 and "set-cookie" not in answer.headers


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("//evil.test/", "/evil.test/"),
        ("///evil.test", "/evil.test"),
        ("/\\evil.test/", "/%5Cevil.test/"),
        ("/\\\\evil.test", "/%5C%5Cevil.test"),
        ("/runs/%0d%0aSet-Cookie:x=1", "/runs/%0D%0ASet-Cookie:x=1"),
        ("/", "/"),
        ("/inspector/app.js", "/inspector/app.js"),
    ],
)
async def test_the_exchange_redirects_only_to_a_path_of_this_service(
    api: Api, path: str, location: str
) -> None:
    code = api.credentials.issue_login_code()
    # The path exactly as a client sends it (httpx would read "//evil.test/" as a host).
    url = httpx.URL(
        scheme="http", host="127.0.0.1", port=PORT, path=path, query=f"token={code}".encode()
    )
    answer = await api.client.get(url)
    assert answer.status_code == 303
    assert answer.headers["location"] == location
