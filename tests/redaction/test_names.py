"""Which names mark a credential: the suffix rules, and the routing fields they must spare."""

from __future__ import annotations

import pytest

from baton.redaction.names import (
    is_credential_name,
    is_email_name,
    is_env_header_container,
    is_header_credential_name,
    normalize_name,
)

CREDENTIAL_NAMES = [
    "api_key",
    "apiKey",
    "API-KEY",
    "x-api-key",
    "X-Api-Key",
    "token",
    "access_token",
    "refresh_token",
    "accessToken",
    "secret",
    "client_secret",
    "clientSecret",
    "password",
    "passwd",
    "authorization",
    "Authorization",
    "Proxy-Authorization",
    "auth",
    "cookie",
    "Set-Cookie",
    "credential",
    "credentials",
    "private_key",
    "privateKey",
    "OPENAI_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "--password",
]

ROUTING_AND_ORDINARY_NAMES = [
    "sessionId",
    "toolCallId",
    "optionId",
    "configId",
    "modeId",
    "methodId",
    "messageId",
    "requestId",
    "terminalId",
    "authMethods",
    "sessionUpdate",
    "stopReason",
    "id",
    "name",
    "key",
    "value",
    "inputTokens",
    "outputTokens",
    "totalTokens",
    "cachedReadTokens",
    "maxTokens",
    "currentValue",
    "path",
    "title",
    "protocolVersion",
    "logout",
]


@pytest.mark.parametrize("name", CREDENTIAL_NAMES)
def test_credential_names_are_recognised(name: str) -> None:
    assert is_credential_name(name)


@pytest.mark.parametrize("name", ROUTING_AND_ORDINARY_NAMES)
def test_routing_and_ordinary_names_are_not_credentials(name: str) -> None:
    assert not is_credential_name(name)


def test_normalization_ignores_case_and_separators() -> None:
    assert normalize_name("X-Api_Key.v 2") == "xapikeyv2"


def test_header_credential_names() -> None:
    for name in ("Authorization", "proxy-authorization", "Cookie", "set-cookie"):
        assert is_header_credential_name(name)
    assert not is_header_credential_name("token")


def test_email_names() -> None:
    for name in ("email", "userEmail", "email_address"):
        assert is_email_name(name)
    assert not is_email_name("emailVerifiedAt")


def test_env_and_header_containers() -> None:
    for name in ("env", "environment", "headers", "ANTHROPIC_CUSTOM_HEADERS", "envVars"):
        assert is_env_header_container(name)
    for name in ("name", "args", "command", "events"):
        assert not is_env_header_container(name)
