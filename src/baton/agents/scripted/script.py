"""The scripted agent's command language: a prompt's text becomes a list of commands.

Syntax (docs/scripted-agent.md has the full reference):

- Commands are separated by newlines or by ``;``. Blank segments are ignored.
- A prompt is a *script* when the first word of its first segment is a command name (names are
  lowercase and exact). Otherwise the prompt is not a script and the agent echoes its text.
- In a script every segment must be a valid command, or the whole prompt is refused before
  anything runs (:class:`ScriptError`).
- A command is its name, then its arguments separated by whitespace. A ``TEXT`` argument is
  always last and takes the rest of the segment, spaces included.
- Backslash escapes work everywhere: ``\\n`` newline, ``\\t`` tab, ``\\;`` a literal semicolon,
  ``\\`` followed by a space a literal space (inside a word), ``\\\\`` a backslash. Any other
  backslash is kept as it is.
- ``BYTES`` arguments take an optional binary suffix: ``k``/``KiB``, ``M``/``MiB``, ``G``/``GiB``.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from baton.errors import ScriptError

#: Commands one prompt may hold. Bounds the work a single prompt can schedule before it runs.
MAX_COMMANDS_PER_PROMPT: Final = 10_000

#: Chunks one ``stream`` may send: a 10-million-update flood, far beyond any benchmark.
MAX_STREAM_CHUNKS: Final = 10_000_000

#: The longest delay between chunks or streamed ticks, in milliseconds.
MAX_DELAY_MS: Final = 60_000

#: The longest ``slow`` pause, in seconds: an hour, for deadline tests that cancel it early.
MAX_SLOW_SECONDS: Final = 3600.0

#: Garbage lines one ``garbage`` may write.
MAX_GARBAGE_LINES: Final = 10_000_000

#: The largest ``bigframe``, in bytes. The frame is streamed, never held in memory whole.
MAX_BIGFRAME_BYTES: Final = 1024 * 1024 * 1024

#: The most bytes one ``stderr_flood`` may write.
MAX_STDERR_FLOOD_BYTES: Final = 1024 * 1024 * 1024

#: Permission requests ``permission many`` may leave pending at once. Above Baton's own limit
#: of concurrent inbound requests (64) on purpose, so that limit can be exercised.
MAX_PENDING_PERMISSIONS: Final = 256

#: Largest usage figure accepted (the schema's uint64 bound, kept to int64 for safety).
MAX_USAGE_TOKENS: Final = 2**63 - 1

#: Requests that pending permission variants can ask for.
PERMISSION_VARIANTS: Final = ("no_tool_call", "cancel_id", "uuid_ids", "always_only", "many")

#: Agent-to-client methods ``client_request`` knows how to fill in (others get ``{sessionId}``).
CLIENT_REQUEST_METHODS: Final = ("fs/read_text_file", "fs/write_text_file", "terminal/create")

_BYTE_SUFFIXES: Final = {
    "": 1,
    "k": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gib": 1024**3,
}
_BYTES_PATTERN: Final = re.compile(r"^([0-9][0-9_]*)([A-Za-z]*)$")
_INT_PATTERN: Final = re.compile(r"^-?[0-9][0-9_]*$")
_ESCAPES: Final = {"n": "\n", "t": "\t", "\\": "\\", ";": ";", " ": " "}


class ArgKind(enum.Enum):
    """How one argument is read."""

    INT = "integer"
    BYTES = "byte count"
    FLOAT = "number"
    WORD = "word"
    CHOICE = "choice"
    TEXT = "text"


ArgValue = int | float | str | None


@dataclass(frozen=True, slots=True)
class Param:
    """One argument of a command."""

    name: str
    kind: ArgKind
    required: bool = True
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    default: ArgValue = None

    def hint(self) -> str:
        """The argument as shown in usage lines: ``N`` or ``[N]``."""
        return self.name if self.required else f"[{self.name}]"


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """A command's name, its arguments and a one-line summary."""

    name: str
    params: tuple[Param, ...]
    summary: str

    def usage(self) -> str:
        """The command's usage line, for errors and ``available_commands_update``."""
        return " ".join([self.name, *(param.hint() for param in self.params)])


def _spec(name: str, summary: str, *params: Param) -> CommandSpec:
    return CommandSpec(name, params, summary)


def _count(name: str, maximum: float, *, required: bool = True, default: int = 0) -> Param:
    return Param(name, ArgKind.INT, required, 0, maximum, default=None if required else default)


_TEXT = Param("TEXT", ArgKind.TEXT, required=False, default="")

#: Every command, in documentation order.
COMMAND_SPECS: Final[tuple[CommandSpec, ...]] = (
    _spec("echo", "send TEXT as one agent_message_chunk", _TEXT),
    _spec(
        "stream",
        "send N agent_message_chunk updates ('chunk 1\\n'...), DELAY_MS apart",
        _count("N", MAX_STREAM_CHUNKS),
        _count("DELAY_MS", MAX_DELAY_MS, required=False),
    ),
    _spec("think", "send TEXT as one agent_thought_chunk", _TEXT),
    _spec("plan", "send a plan; TEXT holds entries separated by '|'", _TEXT),
    _spec(
        "usage",
        "send a usage_update",
        _count("USED", MAX_USAGE_TOKENS, required=False, default=42),
        _count("SIZE", MAX_USAGE_TOKENS, required=False, default=200_000),
    ),
    _spec("title", "send a session_info_update with this title", _TEXT),
    _spec("commands", "send an available_commands_update listing these commands"),
    _spec(
        "write",
        "propose writing TEXT to PATH (inside the session cwd); write it if allowed",
        Param("PATH", ArgKind.WORD),
        _TEXT,
    ),
    _spec(
        "delete",
        "propose deleting PATH (inside the session cwd); delete it if allowed",
        Param("PATH", ArgKind.WORD),
    ),
    _spec(
        "move",
        "propose renaming OLD to NEW (inside the session cwd); rename it if allowed",
        Param("OLD", ArgKind.WORD),
        Param("NEW", ArgKind.WORD),
    ),
    _spec(
        "silent_write",
        "write TEXT to PATH (inside the session cwd) with no tool call and no permission",
        Param("PATH", ArgKind.WORD),
        _TEXT,
    ),
    _spec(
        "shell",
        "propose running CMD; never runs it, reports what it would run",
        Param("CMD", ArgKind.TEXT),
    ),
    _spec(
        "permission",
        "ask permission in an unusual shape: " + ", ".join(PERMISSION_VARIANTS),
        Param("VARIANT", ArgKind.CHOICE, choices=PERMISSION_VARIANTS),
        Param("COUNT", ArgKind.INT, False, 1, MAX_PENDING_PERMISSIONS, default=3),
    ),
    _spec(
        "wait_for_cancel",
        "stream a tick every INTERVAL_MS until session/cancel, then answer cancelled",
        _count("INTERVAL_MS", MAX_DELAY_MS, required=False, default=50),
    ),
    _spec(
        "ignore_cancel",
        "stream a tick every INTERVAL_MS until session/cancel, then never answer",
        _count("INTERVAL_MS", MAX_DELAY_MS, required=False, default=50),
    ),
    _spec(
        "late_update",
        "send TEXT as an agent_message_chunk after the prompt response",
        Param("TEXT", ArgKind.TEXT, required=False, default="late update"),
    ),
    _spec("stop", "end the turn now with stopReason REASON", Param("REASON", ArgKind.WORD)),
    _spec(
        "slow",
        "pause SECONDS (a cancel ends the pause)",
        Param("SECONDS", ArgKind.FLOAT, True, 0, MAX_SLOW_SECONDS),
    ),
    _spec("garbage", "write N lines that are not JSON-RPC", _count("N", MAX_GARBAGE_LINES)),
    _spec("endless", "write one line that never ends"),
    _spec(
        "bigframe",
        "send one valid agent_message_chunk frame of exactly BYTES bytes",
        Param("BYTES", ArgKind.BYTES, True, 1, MAX_BIGFRAME_BYTES),
    ),
    _spec(
        "crash",
        "exit at once with CODE, mid-turn",
        Param("CODE", ArgKind.INT, False, 0, 255, default=1),
    ),
    _spec("hang", "stop answering anything, for good"),
    _spec(
        "stderr_flood",
        "write BYTES bytes of log lines to stderr",
        Param("BYTES", ArgKind.BYTES, True, 0, MAX_STDERR_FLOOD_BYTES),
    ),
    _spec(
        "unknown_id",
        "send a response to a request id the client never sent",
        Param("ID", ArgKind.WORD, required=False, default="999999999"),
    ),
    _spec(
        "foreign_update",
        "send a session/update (KIND text or tool_call) for a session id never created",
        Param("KIND", ArgKind.WORD, required=False, default="text"),
    ),
    _spec(
        "models_update",
        "grok profile: send _x.ai/models/update offering exactly IDS (space-separated; default: "
        "the catalog without its last model, plus grok-next); '!malformed' sends a broken one",
        Param("IDS", ArgKind.TEXT, required=False, default=""),
    ),
    _spec(
        "notice",
        "send a notice (stable ACP session.notices); TEXT is 'title|description'",
        Param("SEVERITY", ArgKind.WORD, required=False, default="info"),
        _TEXT,
    ),
    _spec(
        "compact",
        "send a compaction (in_progress, TEXT as summary chunks, then STATUS)",
        Param("STATUS", ArgKind.WORD, required=False, default="completed"),
        _TEXT,
    ),
    _spec(
        "cost",
        "send a usage_update with a cumulative cost of CENTS/100 CURRENCY",
        _count("CENTS", MAX_USAGE_TOKENS, required=False, default=12),
        Param("CURRENCY", ArgKind.WORD, required=False, default="USD"),
    ),
    _spec(
        "subagent",
        "send Claude's subagent shape: a Task tool call and a nested read (parentToolUseId)",
        _TEXT,
    ),
    _spec(
        "elicit",
        "send elicitation/create in MODE (form or url) and report the answer",
        Param("MODE", ArgKind.CHOICE, required=False, choices=("form", "url"), default="form"),
    ),
    _spec("offered", "report the client's initialize clientCapabilities as JSON"),
    _spec(
        "setup",
        "report the session's additionalDirectories and systemPrompt (mode, size) as JSON",
    ),
    _spec(
        "withdraw",
        "ask (KIND permission or elicit), then cancel the request with $/cancel_request after "
        "SECONDS without an answer; report the client's reply",
        Param("KIND", ArgKind.CHOICE, choices=("permission", "elicit")),
        Param("SECONDS", ArgKind.FLOAT, True, 0, MAX_SLOW_SECONDS),
    ),
    _spec(
        "client_request",
        "send an agent-to-client request and report its answer",
        Param("METHOD", ArgKind.WORD),
        Param("ARGS", ArgKind.TEXT, required=False, default=""),
    ),
)

#: Command specs by name.
COMMANDS: Final[Mapping[str, CommandSpec]] = {spec.name: spec for spec in COMMAND_SPECS}


@dataclass(frozen=True, slots=True)
class Command:
    """One parsed command: its name, its arguments by parameter name (defaults filled in), the
    names the prompt gave explicitly, and its line."""

    name: str
    args: Mapping[str, ArgValue]
    line: int = 1
    given: frozenset[str] = frozenset()

    def get_int(self, key: str) -> int:
        """An integer argument (INT or BYTES)."""
        value = self.args[key]
        if not isinstance(value, int):
            raise TypeError(f"{self.name} {key} is not an integer")
        return value

    def get_float(self, key: str) -> float:
        """A number argument."""
        value = self.args[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{self.name} {key} is not a number")
        return float(value)

    def get_str(self, key: str) -> str:
        """A word, choice or text argument."""
        value = self.args[key]
        if not isinstance(value, str):
            raise TypeError(f"{self.name} {key} is not text")
        return value

    def is_given(self, key: str) -> bool:
        """True when the prompt gave this argument explicitly."""
        return key in self.given


@dataclass(frozen=True, slots=True)
class Script:
    """What a prompt asks for: commands to run, or (when it is not a script) text to echo."""

    commands: tuple[Command, ...]
    echo_text: str | None = None


def decode_escapes(raw: str) -> str:
    """Decode the language's backslash escapes; an unknown escape is kept as written."""
    if "\\" not in raw:
        return raw
    out: list[str] = []
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char == "\\" and index + 1 < length and raw[index + 1] in _ESCAPES:
            out.append(_ESCAPES[raw[index + 1]])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def split_segments(text: str) -> list[tuple[int, str]]:
    """Split prompt text into ``(line number, segment)`` pairs at newlines and unescaped ``;``.

    Segments keep their escapes (decoded later, per argument) and are stripped; blank ones are
    dropped.
    """
    segments: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        start = 0
        index = 0
        length = len(line)
        while index < length:
            char = line[index]
            if char == "\\":
                index += 2
                continue
            if char == ";":
                segments.append((number, line[start:index]))
                start = index + 1
            index += 1
        segments.append((number, line[start:]))
    return [(number, segment.strip()) for number, segment in segments if segment.strip()]


def split_word(raw: str) -> tuple[str, str]:
    """Split off the first word (ended by unescaped whitespace); return it raw and the rest."""
    raw = raw.lstrip()
    index = 0
    length = len(raw)
    while index < length:
        char = raw[index]
        if char == "\\":
            index += 2
            continue
        if char.isspace():
            break
        index += 1
    return raw[:index], raw[index:].lstrip()


def is_script(text: str) -> bool:
    """True when ``text`` starts with a command name, which makes the whole prompt a script."""
    segments = split_segments(text)
    if not segments:
        return False
    first, _rest = split_word(segments[0][1])
    return first in COMMANDS


def parse_prompt(text: str) -> Script:
    """Parse a prompt's text. A prompt that is not a script becomes an echo of its text.

    Raises :class:`ScriptError` when the prompt is a script and any command in it is invalid.
    """
    segments = split_segments(text)
    if not segments or split_word(segments[0][1])[0] not in COMMANDS:
        return Script((), echo_text=text)
    if len(segments) > MAX_COMMANDS_PER_PROMPT:
        raise ScriptError(
            1,
            "",
            "too_many_commands",
            f"{len(segments)} commands; a prompt may hold at most {MAX_COMMANDS_PER_PROMPT}",
        )
    return Script(tuple(parse_command(segment, number) for number, segment in segments))


def parse_command(segment: str, line: int = 1) -> Command:
    """Parse one segment into a :class:`Command`; raise :class:`ScriptError` if invalid."""
    raw_name, rest = split_word(segment)
    name = decode_escapes(raw_name)
    spec = COMMANDS.get(name)
    if spec is None:
        raise ScriptError(line, "", "unknown_command", f"unknown command {name!r}")
    args: dict[str, ArgValue] = {}
    given: set[str] = set()
    for param in spec.params:
        if param.kind is ArgKind.TEXT:
            if not rest and param.required:
                raise _missing(line, spec, param)
            if rest:
                given.add(param.name)
            args[param.name] = decode_escapes(rest) if rest else param.default
            rest = ""
            continue
        raw, rest = split_word(rest)
        if not raw:
            if param.required:
                raise _missing(line, spec, param)
            args[param.name] = param.default
            continue
        args[param.name] = _convert(line, spec, param, decode_escapes(raw))
        given.add(param.name)
    if rest:
        raise ScriptError(
            line,
            spec.name,
            "unexpected_argument",
            f"unexpected argument {decode_escapes(rest)!r}; usage: {spec.usage()}",
        )
    command = Command(spec.name, args, line, frozenset(given))
    _check(command)
    return command


def _missing(line: int, spec: CommandSpec, param: Param) -> ScriptError:
    return ScriptError(
        line, spec.name, "missing_argument", f"missing {param.name}; usage: {spec.usage()}"
    )


def _convert(line: int, spec: CommandSpec, param: Param, token: str) -> ArgValue:
    value: int | float | str
    if param.kind is ArgKind.INT:
        if not _INT_PATTERN.match(token):
            raise ScriptError(
                line, spec.name, "bad_integer", f"{param.name} must be an integer, got {token!r}"
            )
        value = int(token)
    elif param.kind is ArgKind.BYTES:
        value = parse_bytes(token, line, spec.name, param.name)
    elif param.kind is ArgKind.FLOAT:
        try:
            value = float(token)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ScriptError(
                line, spec.name, "bad_number", f"{param.name} must be a number, got {token!r}"
            )
    elif param.kind is ArgKind.CHOICE:
        if token not in param.choices:
            raise ScriptError(
                line,
                spec.name,
                "bad_choice",
                f"{param.name} must be one of {', '.join(param.choices)}, got {token!r}",
            )
        return token
    else:
        return token
    if (param.minimum is not None and value < param.minimum) or (
        param.maximum is not None and value > param.maximum
    ):
        raise ScriptError(
            line,
            spec.name,
            "out_of_range",
            f"{param.name} must be between {param.minimum:g} and {param.maximum:g}, got {token}",
        )
    return value


def parse_bytes(token: str, line: int = 1, command: str = "", name: str = "BYTES") -> int:
    """Parse a byte count with an optional binary suffix (``k``, ``KiB``, ``M``, ``MiB``...)."""
    match = _BYTES_PATTERN.match(token)
    factor = _BYTE_SUFFIXES.get(match.group(2).lower()) if match else None
    if match is None or factor is None:
        raise ScriptError(
            line,
            command,
            "bad_integer",
            f"{name} must be a byte count such as 4096, 64k or 16MiB, got {token!r}",
        )
    return int(match.group(1)) * factor


def _check(command: Command) -> None:
    """Rules that span arguments."""
    if command.name == "permission":
        if command.get_str("VARIANT") != "many" and command.is_given("COUNT"):
            raise ScriptError(
                command.line,
                "permission",
                "unexpected_argument",
                "only 'permission many' takes a COUNT",
            )
    elif command.name == "client_request":
        method = command.get_str("METHOD")
        if method == "fs/write_text_file" and not split_word(command.get_str("ARGS"))[0]:
            raise ScriptError(
                command.line,
                "client_request",
                "missing_argument",
                "fs/write_text_file needs PATH [TEXT]",
            )
        if method == "terminal/create" and not command.get_str("ARGS").strip():
            raise ScriptError(
                command.line, "client_request", "missing_argument", "terminal/create needs CMD"
            )
