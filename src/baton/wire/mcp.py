"""MCP servers for ``session/new``, ``session/load`` and ``session/resume``.

The trusted tool declarations file (``--tools FILE`` or ``BATON_ACP_TOOLS``) is launch
configuration chosen by the controlling user, independent of any prompt. It declares stdio MCP
servers only::

    {"mcpServers": [
        {"name": "search", "command": "/usr/local/bin/search-mcp",
         "args": ["--stdio"], "env": {"SEARCH_INDEX": "/srv/index"}}
    ]}

``type`` may be given as ``"stdio"``; ``env`` may also be ACP's list form
(``[{"name": ..., "value": ...}]``). Unknown fields are refused so a typo cannot silently drop a
setting. Every bound below is checked, and every error is a :class:`ToolDeclarationError` with a
stable ``sub_code`` whose message names the server by position and never echoes the file's
contents, names, values or credentials.

This module parses bytes; reading the file (and checking that each command is an executable)
belongs to :mod:`baton.runtime.agents.tools_file`. HTTP and SSE servers (from a library caller, never
from the file) are sent only when the agent advertises them: :func:`check_mcp_servers`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Final

import orjson

from baton.errors import CapabilityNotAdvertised, InvalidArgument, ToolDeclarationError
from baton.wire.capabilities import AgentCapabilities

#: Largest declarations file accepted, in bytes. It is trusted configuration, read whole into
#: memory and sent with every session request: a runaway or wrong file must stop here.
MAX_TOOLS_FILE_BYTES: Final = 64 * 1024

#: Servers one file may declare (names unique). Each is a process the agent starts per session.
MAX_TOOL_SERVERS: Final = 8

#: Characters in a server name; names are identities the agent shows and routes tools by.
MAX_SERVER_NAME_CHARS: Final = 64

#: Characters in a command path (Linux PATH_MAX).
MAX_COMMAND_CHARS: Final = 4096

#: Arguments per server, and characters per argument: keeps each spawned command line far
#: below the kernel's argument limits.
MAX_SERVER_ARGS: Final = 64
MAX_ARG_CHARS: Final = 4096

#: Environment entries per server, characters per name and per value.
MAX_SERVER_ENV: Final = 32
MAX_ENV_NAME_CHARS: Final = 128
MAX_ENV_VALUE_CHARS: Final = 4096

#: Server names reserved for Baton's own identity (compared case-insensitively), plus any name
#: starting with one of them and a separator.
RESERVED_SERVER_NAMES: Final = frozenset({"baton"})
_RESERVED_SEPARATORS: Final = ("-", "_", ".")

_NAME_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ENV_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TOP_FIELDS: Final = frozenset({"mcpServers"})
_SERVER_FIELDS: Final = frozenset({"name", "command", "args", "env", "type"})
_STDIO: Final = "stdio"

# Stable sub-codes, one per way a file can be wrong.
TOOLS_FILE_TOO_LARGE: Final = "TOOLS_FILE_TOO_LARGE"
TOOLS_FILE_UNREADABLE: Final = "TOOLS_FILE_UNREADABLE"
TOOLS_FILE_NOT_JSON: Final = "TOOLS_FILE_NOT_JSON"
TOOLS_FILE_BAD_SHAPE: Final = "TOOLS_FILE_BAD_SHAPE"
TOOLS_UNKNOWN_FIELD: Final = "TOOLS_UNKNOWN_FIELD"
TOOLS_TOO_MANY_SERVERS: Final = "TOOLS_TOO_MANY_SERVERS"
TOOLS_BAD_NAME: Final = "TOOLS_BAD_NAME"
TOOLS_DUPLICATE_NAME: Final = "TOOLS_DUPLICATE_NAME"
TOOLS_RESERVED_NAME: Final = "TOOLS_RESERVED_NAME"
TOOLS_UNSUPPORTED_TYPE: Final = "TOOLS_UNSUPPORTED_TYPE"
TOOLS_BAD_COMMAND: Final = "TOOLS_BAD_COMMAND"
TOOLS_COMMAND_NOT_ABSOLUTE: Final = "TOOLS_COMMAND_NOT_ABSOLUTE"
TOOLS_COMMAND_TOO_LONG: Final = "TOOLS_COMMAND_TOO_LONG"
TOOLS_COMMAND_NOT_EXECUTABLE: Final = "TOOLS_COMMAND_NOT_EXECUTABLE"
TOOLS_BAD_ARGS: Final = "TOOLS_BAD_ARGS"
TOOLS_TOO_MANY_ARGS: Final = "TOOLS_TOO_MANY_ARGS"
TOOLS_ARG_TOO_LONG: Final = "TOOLS_ARG_TOO_LONG"
TOOLS_BAD_ENV: Final = "TOOLS_BAD_ENV"
TOOLS_TOO_MANY_ENV: Final = "TOOLS_TOO_MANY_ENV"
TOOLS_BAD_ENV_NAME: Final = "TOOLS_BAD_ENV_NAME"
TOOLS_DUPLICATE_ENV: Final = "TOOLS_DUPLICATE_ENV"
TOOLS_ENV_VALUE_TOO_LONG: Final = "TOOLS_ENV_VALUE_TOO_LONG"


@dataclass(frozen=True, slots=True)
class StdioServer:
    """One declared stdio MCP server. ``args`` and ``env`` may hold credentials: they are left
    out of ``repr``."""

    name: str
    command: str
    args: tuple[str, ...] = field(default=(), repr=False)
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def to_acp(self) -> dict[str, Any]:
        """The ACP ``McpServerStdio`` form."""
        return {
            "name": self.name,
            "command": self.command,
            "args": list(self.args),
            "env": [{"name": key, "value": value} for key, value in self.env],
        }


@dataclass(frozen=True, slots=True)
class ToolDeclarations:
    """The parsed declarations; the same list goes to session/new, load and resume."""

    servers: tuple[StdioServer, ...] = ()

    def to_acp(self) -> list[dict[str, Any]]:
        """The ACP ``mcpServers`` list."""
        return [server.to_acp() for server in self.servers]

    def secret_values(self) -> list[str]:
        """Every ``env`` value of every server: credentials the user gave Baton to hand to the
        agent, which redaction must then remove wherever they come back (exact matching)."""
        return [value for server in self.servers for _name, value in server.env]

    def __iter__(self) -> Iterator[StdioServer]:
        return iter(self.servers)

    def __len__(self) -> int:
        return len(self.servers)


def _error(sub_code: str, message: str) -> ToolDeclarationError:
    return ToolDeclarationError(sub_code, message)


def _clean_string(value: object, sub_code: str, what: str) -> str:
    if not isinstance(value, str) or "\x00" in value:
        raise _error(sub_code, f"{what} must be a string without NUL characters")
    return value


def is_reserved_name(name: str) -> bool:
    """Whether ``name`` is reserved for Baton (``baton``, ``baton-x``, ``Baton.y``...)."""
    folded = name.casefold()
    for reserved in RESERVED_SERVER_NAMES:
        if folded == reserved or any(folded.startswith(reserved + s) for s in _RESERVED_SEPARATORS):
            return True
    return False


def _parse_name(raw: object, where: str) -> str:
    name = _clean_string(raw, TOOLS_BAD_NAME, f"{where} name")
    if not 0 < len(name) <= MAX_SERVER_NAME_CHARS or not _NAME_RE.fullmatch(name):
        raise _error(
            TOOLS_BAD_NAME,
            f"{where} name must be 1 to {MAX_SERVER_NAME_CHARS} letters, digits, '.', '_' or "
            "'-', starting with a letter or digit",
        )
    if is_reserved_name(name):
        raise _error(TOOLS_RESERVED_NAME, f"{where} uses a name reserved for Baton")
    return name


def _parse_command(raw: object, where: str) -> str:
    if raw is None:
        raise _error(TOOLS_BAD_COMMAND, f"{where} has no command")
    command = _clean_string(raw, TOOLS_BAD_COMMAND, f"{where} command")
    if len(command) > MAX_COMMAND_CHARS:
        raise _error(
            TOOLS_COMMAND_TOO_LONG, f"{where} command is longer than {MAX_COMMAND_CHARS} characters"
        )
    if not PurePosixPath(command).is_absolute():
        raise _error(
            TOOLS_COMMAND_NOT_ABSOLUTE,
            f"{where} command must be an absolute executable path (no PATH lookup)",
        )
    return command


def _parse_args(raw: object, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _error(TOOLS_BAD_ARGS, f"{where} args must be a list of strings")
    if len(raw) > MAX_SERVER_ARGS:
        raise _error(TOOLS_TOO_MANY_ARGS, f"{where} has more than {MAX_SERVER_ARGS} args")
    args: list[str] = []
    for index, item in enumerate(raw):
        arg = _clean_string(item, TOOLS_BAD_ARGS, f"{where} arg #{index + 1}")
        if len(arg) > MAX_ARG_CHARS:
            raise _error(
                TOOLS_ARG_TOO_LONG,
                f"{where} arg #{index + 1} is longer than {MAX_ARG_CHARS} characters",
            )
        args.append(arg)
    return tuple(args)


def _env_pairs(raw: object, where: str) -> list[tuple[object, object]]:
    if raw is None:
        return []
    if isinstance(raw, Mapping):
        return list(raw.items())
    if isinstance(raw, list):
        pairs: list[tuple[object, object]] = []
        for index, item in enumerate(raw):
            if not isinstance(item, Mapping) or set(item) != {"name", "value"}:
                raise _error(
                    TOOLS_BAD_ENV, f"{where} env entry #{index + 1} must be {{name, value}}"
                )
            pairs.append((item["name"], item["value"]))
        return pairs
    raise _error(TOOLS_BAD_ENV, f"{where} env must be an object or a list of {{name, value}}")


def _parse_env(raw: object, where: str) -> tuple[tuple[str, str], ...]:
    pairs = _env_pairs(raw, where)
    if len(pairs) > MAX_SERVER_ENV:
        raise _error(TOOLS_TOO_MANY_ENV, f"{where} has more than {MAX_SERVER_ENV} env entries")
    env: list[tuple[str, str]] = []
    seen: set[str] = set()
    for index, (raw_name, raw_value) in enumerate(pairs):
        entry = f"{where} env entry #{index + 1}"
        name = _clean_string(raw_name, TOOLS_BAD_ENV_NAME, f"{entry} name")
        if not 0 < len(name) <= MAX_ENV_NAME_CHARS or not _ENV_NAME_RE.fullmatch(name):
            raise _error(
                TOOLS_BAD_ENV_NAME,
                f"{entry} name must be 1 to {MAX_ENV_NAME_CHARS} letters, digits or '_', "
                "not starting with a digit",
            )
        if name in seen:
            raise _error(TOOLS_DUPLICATE_ENV, f"{entry} repeats an earlier name")
        value = _clean_string(raw_value, TOOLS_BAD_ENV, f"{entry} value")
        if len(value) > MAX_ENV_VALUE_CHARS:
            raise _error(
                TOOLS_ENV_VALUE_TOO_LONG,
                f"{entry} value is longer than {MAX_ENV_VALUE_CHARS} characters",
            )
        seen.add(name)
        env.append((name, value))
    return tuple(env)


def _parse_server(raw: object, where: str) -> StdioServer:
    if not isinstance(raw, Mapping):
        raise _error(TOOLS_FILE_BAD_SHAPE, f"{where} must be an object")
    if not set(raw) <= _SERVER_FIELDS:
        allowed = ", ".join(sorted(_SERVER_FIELDS))
        raise _error(TOOLS_UNKNOWN_FIELD, f"{where} has a field Baton does not know ({allowed})")
    kind = raw.get("type", _STDIO)
    if kind != _STDIO:
        raise _error(
            TOOLS_UNSUPPORTED_TYPE, f"{where} type must be stdio (the file declares stdio only)"
        )
    return StdioServer(
        name=_parse_name(raw.get("name"), where),
        command=_parse_command(raw.get("command"), where),
        args=_parse_args(raw.get("args"), where),
        env=_parse_env(raw.get("env"), where),
    )


def parse_tool_declarations(data: bytes) -> ToolDeclarations:
    """Parse a declarations file's bytes. Raises :class:`ToolDeclarationError`."""
    if len(data) > MAX_TOOLS_FILE_BYTES:
        raise _error(
            TOOLS_FILE_TOO_LARGE, f"the tools file is larger than {MAX_TOOLS_FILE_BYTES} bytes"
        )
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise _error(TOOLS_FILE_NOT_JSON, "the tools file is not UTF-8 JSON") from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), list):
        raise _error(TOOLS_FILE_BAD_SHAPE, 'the tools file must be {"mcpServers": [...]}')
    if not set(document) <= _TOP_FIELDS:
        raise _error(
            TOOLS_UNKNOWN_FIELD, "the tools file has a top-level field other than mcpServers"
        )
    raw_servers = document["mcpServers"]
    if len(raw_servers) > MAX_TOOL_SERVERS:
        raise _error(
            TOOLS_TOO_MANY_SERVERS, f"the tools file declares more than {MAX_TOOL_SERVERS} servers"
        )
    servers: list[StdioServer] = []
    names: set[str] = set()
    for index, raw in enumerate(raw_servers):
        where = f"server #{index + 1}"
        server = _parse_server(raw, where)
        if server.name.casefold() in names:
            raise _error(TOOLS_DUPLICATE_NAME, f"{where} repeats an earlier server name")
        names.add(server.name.casefold())
        servers.append(server)
    return ToolDeclarations(tuple(servers))


def http_server(name: str, url: str, headers: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """An ACP ``McpServerHttp`` entry (sent only where ``mcpCapabilities.http`` is advertised)."""
    return {
        "type": "http",
        "name": name,
        "url": url,
        "headers": [{"name": k, "value": v} for k, v in headers],
    }


def sse_server(name: str, url: str, headers: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """An ACP ``McpServerSse`` entry (sent only where ``mcpCapabilities.sse`` is advertised)."""
    return {
        "type": "sse",
        "name": name,
        "url": url,
        "headers": [{"name": k, "value": v} for k, v in headers],
    }


def check_mcp_servers(
    servers: Sequence[Mapping[str, Any]], capabilities: AgentCapabilities, what: str
) -> None:
    """Refuse, before sending ``what``, an http or sse server the agent did not advertise
    (:class:`CapabilityNotAdvertised`) and an entry of no known transport
    (:class:`InvalidArgument`). Entries without ``type`` are stdio: baseline in v1, needing
    ``session.mcp.stdio`` in v2."""
    for index, server in enumerate(servers):
        kind = server.get("type", _STDIO) if isinstance(server, Mapping) else None
        if kind == _STDIO:
            if not capabilities.mcp_stdio:
                raise CapabilityNotAdvertised(
                    "session.mcp.stdio", f"{what} with a stdio MCP server"
                )
            continue
        if kind == "http":
            capabilities.require("mcpCapabilities.http", f"{what} with an http MCP server")
        elif kind == "sse":
            capabilities.require("mcpCapabilities.sse", f"{what} with an sse MCP server")
        else:
            raise InvalidArgument(f"MCP server #{index + 1} has no known transport type")
