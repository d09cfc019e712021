"""The trusted tool declarations file: shape, every bound at limit-1/limit/limit+1, error codes
that never echo the file, and the http/sse capability check."""

from __future__ import annotations

import json
from typing import Any

import pytest

from baton.errors import (
    CapabilityNotAdvertised,
    ConfigurationError,
    InvalidArgument,
    ToolDeclarationError,
)
from baton.wire.capabilities import AgentCapabilities
from baton.wire.mcp import (
    MAX_ARG_CHARS,
    MAX_COMMAND_CHARS,
    MAX_ENV_NAME_CHARS,
    MAX_ENV_VALUE_CHARS,
    MAX_SERVER_ARGS,
    MAX_SERVER_ENV,
    MAX_SERVER_NAME_CHARS,
    MAX_TOOL_SERVERS,
    MAX_TOOLS_FILE_BYTES,
    StdioServer,
    ToolDeclarations,
    check_mcp_servers,
    http_server,
    is_reserved_name,
    parse_tool_declarations,
    sse_server,
)

SECRET = "sk-SECRET-do-not-echo"


def _server(**over: Any) -> dict[str, Any]:
    server: dict[str, Any] = {"name": "search", "command": "/usr/bin/search-mcp"}
    server.update(over)
    return server


def _file(*servers: dict[str, Any], **top: Any) -> bytes:
    return json.dumps({"mcpServers": list(servers), **top}).encode()


def _fails(data: bytes, sub_code: str) -> ToolDeclarationError:
    with pytest.raises(ToolDeclarationError) as caught:
        parse_tool_declarations(data)
    error = caught.value
    assert error.sub_code == sub_code, str(error)
    assert error.code == "TOOLS_INVALID" and error.fault == "caller"
    assert isinstance(error, ConfigurationError)
    assert SECRET not in str(error)
    assert sub_code in str(error)
    return error


def test_a_full_declaration() -> None:
    data = _file(
        _server(args=["--stdio", ""], env={"INDEX": "/srv", "TOKEN": SECRET}, type="stdio"),
        _server(name="lint.v2", command="/opt/lint", env=[{"name": "A", "value": "1"}]),
    )
    declarations = parse_tool_declarations(data)
    assert len(declarations) == 2
    assert declarations.to_acp() == [
        {
            "name": "search",
            "command": "/usr/bin/search-mcp",
            "args": ["--stdio", ""],
            "env": [{"name": "INDEX", "value": "/srv"}, {"name": "TOKEN", "value": SECRET}],
        },
        {
            "name": "lint.v2",
            "command": "/opt/lint",
            "args": [],
            "env": [{"name": "A", "value": "1"}],
        },
    ]
    assert [s.name for s in declarations] == ["search", "lint.v2"]
    assert SECRET not in repr(declarations)  # args and env stay out of repr


def test_empty_declarations() -> None:
    assert parse_tool_declarations(b'{"mcpServers": []}') == ToolDeclarations()
    assert ToolDeclarations().to_acp() == []


def _padded(size: int) -> bytes:
    body = _file(_server(env={"TOKEN": SECRET}))
    return body + b" " * (size - len(body))


@pytest.mark.parametrize(
    ("size", "ok"),
    [
        (MAX_TOOLS_FILE_BYTES - 1, True),
        (MAX_TOOLS_FILE_BYTES, True),
        (MAX_TOOLS_FILE_BYTES + 1, False),
    ],
)
def test_file_size_bound(size: int, ok: bool) -> None:
    data = _padded(size)
    assert len(data) == size
    if ok:
        assert len(parse_tool_declarations(data)) == 1
    else:
        _fails(data, "TOOLS_FILE_TOO_LARGE")


def _bound(limit: int) -> list[tuple[int, bool]]:
    return [(limit - 1, True), (limit, True), (limit + 1, False)]


@pytest.mark.parametrize(("count", "ok"), _bound(MAX_TOOL_SERVERS))
def test_server_count_bound(count: int, ok: bool) -> None:
    data = _file(*[_server(name=f"s{i}") for i in range(count)])
    if ok:
        assert len(parse_tool_declarations(data)) == count
    else:
        _fails(data, "TOOLS_TOO_MANY_SERVERS")


@pytest.mark.parametrize(("count", "ok"), _bound(MAX_SERVER_ARGS))
def test_arg_count_bound(count: int, ok: bool) -> None:
    data = _file(_server(args=[SECRET] * count))
    if ok:
        assert len(parse_tool_declarations(data).servers[0].args) == count
    else:
        _fails(data, "TOOLS_TOO_MANY_ARGS")


@pytest.mark.parametrize(("length", "ok"), _bound(MAX_ARG_CHARS))
def test_arg_length_bound(length: int, ok: bool) -> None:
    data = _file(_server(args=[(SECRET * length)[:length]]))
    if ok:
        assert len(parse_tool_declarations(data).servers[0].args[0]) == length
    else:
        _fails(data, "TOOLS_ARG_TOO_LONG")


@pytest.mark.parametrize(("count", "ok"), _bound(MAX_SERVER_ENV))
def test_env_count_bound(count: int, ok: bool) -> None:
    data = _file(_server(env={f"K{i}": SECRET for i in range(count)}))
    if ok:
        assert len(parse_tool_declarations(data).servers[0].env) == count
    else:
        _fails(data, "TOOLS_TOO_MANY_ENV")


@pytest.mark.parametrize(("length", "ok"), _bound(MAX_ENV_VALUE_CHARS))
def test_env_value_length_bound(length: int, ok: bool) -> None:
    data = _file(_server(env={"TOKEN": (SECRET * length)[:length]}))
    if ok:
        assert len(parse_tool_declarations(data).servers[0].env[0][1]) == length
    else:
        _fails(data, "TOOLS_ENV_VALUE_TOO_LONG")


@pytest.mark.parametrize(("length", "ok"), _bound(MAX_ENV_NAME_CHARS))
def test_env_name_length_bound(length: int, ok: bool) -> None:
    data = _file(_server(env={"K" * length: SECRET}))
    if ok:
        parse_tool_declarations(data)
    else:
        _fails(data, "TOOLS_BAD_ENV_NAME")


@pytest.mark.parametrize(("length", "ok"), _bound(MAX_SERVER_NAME_CHARS))
def test_name_length_bound(length: int, ok: bool) -> None:
    data = _file(_server(name="n" * length))
    if ok:
        parse_tool_declarations(data)
    else:
        _fails(data, "TOOLS_BAD_NAME")


@pytest.mark.parametrize(("length", "ok"), _bound(MAX_COMMAND_CHARS))
def test_command_length_bound(length: int, ok: bool) -> None:
    data = _file(_server(command="/" + "c" * (length - 1)))
    if ok:
        parse_tool_declarations(data)
    else:
        _fails(data, "TOOLS_COMMAND_TOO_LONG")


@pytest.mark.parametrize(
    ("data", "sub_code"),
    [
        (b"\xff\xfe not utf-8", "TOOLS_FILE_NOT_JSON"),
        (f'{{"mcpServers": [{{"name": "{SECRET}"'.encode(), "TOOLS_FILE_NOT_JSON"),
        (b"[]", "TOOLS_FILE_BAD_SHAPE"),
        (b"{}", "TOOLS_FILE_BAD_SHAPE"),
        (b'{"mcpServers": {}}', "TOOLS_FILE_BAD_SHAPE"),
        (_file(SECRET), "TOOLS_FILE_BAD_SHAPE"),  # type: ignore[arg-type]
        (_file(_server(), **{SECRET: 1}), "TOOLS_UNKNOWN_FIELD"),
        (_file(_server(**{SECRET: 1})), "TOOLS_UNKNOWN_FIELD"),
        (_file(_server(name=f"bad name {SECRET}")), "TOOLS_BAD_NAME"),
        (_file(_server(name="")), "TOOLS_BAD_NAME"),
        (_file(_server(name="-x")), "TOOLS_BAD_NAME"),
        (_file(_server(name=None)), "TOOLS_BAD_NAME"),
        (_file(_server(name="baton")), "TOOLS_RESERVED_NAME"),
        (_file(_server(name="Baton-tools")), "TOOLS_RESERVED_NAME"),
        (_file(_server(), _server(command="/other")), "TOOLS_DUPLICATE_NAME"),
        (_file(_server(name="A"), _server(name="a")), "TOOLS_DUPLICATE_NAME"),
        (_file(_server(type="http", url=SECRET)), "TOOLS_UNKNOWN_FIELD"),
        (_file(_server(type="http")), "TOOLS_UNSUPPORTED_TYPE"),
        (_file(_server(type="sse")), "TOOLS_UNSUPPORTED_TYPE"),
        (_file(_server(command=None)), "TOOLS_BAD_COMMAND"),
        (_file(_server(command=["/bin/sh"])), "TOOLS_BAD_COMMAND"),
        (_file(_server(command="/bin/a\x00b")), "TOOLS_BAD_COMMAND"),
        (_file(_server(command=f"bin/{SECRET}")), "TOOLS_COMMAND_NOT_ABSOLUTE"),
        (_file(_server(command="search-mcp")), "TOOLS_COMMAND_NOT_ABSOLUTE"),
        (_file(_server(command="./search")), "TOOLS_COMMAND_NOT_ABSOLUTE"),
        (_file(_server(command="")), "TOOLS_COMMAND_NOT_ABSOLUTE"),
        (_file(_server(args=SECRET)), "TOOLS_BAD_ARGS"),
        (_file(_server(args=[1])), "TOOLS_BAD_ARGS"),
        (_file(_server(args=["a\x00"])), "TOOLS_BAD_ARGS"),
        (_file(_server(env=SECRET)), "TOOLS_BAD_ENV"),
        (_file(_server(env={"K": 1})), "TOOLS_BAD_ENV"),
        (_file(_server(env=[{"name": "K"}])), "TOOLS_BAD_ENV"),
        (_file(_server(env=[{"name": "K", "value": SECRET, "x": 1}])), "TOOLS_BAD_ENV"),
        (_file(_server(env={"1K": SECRET})), "TOOLS_BAD_ENV_NAME"),
        (_file(_server(env={"A=B": SECRET})), "TOOLS_BAD_ENV_NAME"),
        (_file(_server(env={"": SECRET})), "TOOLS_BAD_ENV_NAME"),
        (
            _file(_server(env=[{"name": "K", "value": SECRET}, {"name": "K", "value": SECRET}])),
            "TOOLS_DUPLICATE_ENV",
        ),
    ],
)
def test_every_error_has_a_stable_code_and_echoes_nothing(data: bytes, sub_code: str) -> None:
    _fails(data, sub_code)


def test_reserved_names() -> None:
    assert is_reserved_name("baton") and is_reserved_name("BATON.x") and is_reserved_name("baton_y")
    assert not is_reserved_name("batons") and not is_reserved_name("my-baton")


def test_a_server_serializes_to_the_stdio_form() -> None:
    server = StdioServer("a", "/bin/a", ("x",), (("K", "V"),))
    assert server.to_acp() == {
        "name": "a",
        "command": "/bin/a",
        "args": ["x"],
        "env": [{"name": "K", "value": "V"}],
    }


def test_http_and_sse_only_when_advertised() -> None:
    stdio = StdioServer("a", "/bin/a").to_acp()
    http = http_server("h", "http://127.0.0.1:9/mcp", [("Authorization", "Bearer x")])
    sse = sse_server("s", "http://127.0.0.1:9/sse")
    none = AgentCapabilities()
    check_mcp_servers([stdio, {**stdio, "type": "stdio"}], none, "session/new")
    with pytest.raises(CapabilityNotAdvertised) as caught:
        check_mcp_servers([stdio, http], none, "session/new")
    assert caught.value.capability == "mcpCapabilities.http"
    with pytest.raises(CapabilityNotAdvertised) as caught:
        check_mcp_servers([sse], AgentCapabilities(mcp_http=True), "session/load")
    assert caught.value.capability == "mcpCapabilities.sse"
    check_mcp_servers([http, sse], AgentCapabilities(mcp_http=True, mcp_sse=True), "session/new")
    with pytest.raises(InvalidArgument):
        check_mcp_servers([{"type": "acp", "name": "x"}], AgentCapabilities(mcp_http=True), "x")
