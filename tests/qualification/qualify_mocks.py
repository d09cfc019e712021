"""Mock model servers for the qualification runs: the Anthropic Messages API (Claude Agent ACP)
and the OpenAI Responses API (Codex ACP), stdlib only, bound to 127.0.0.1 on a free port.

Each server streams Server-Sent Events scripted by markers in the prompt, and logs every request
it receives (method, path, headers, parsed body) so tests can assert on what the agent sent.

The script language (markers anywhere in the prompt text, in order):

``[[text:T]]``
    stream ``T`` as assistant text (in several small deltas).
``[[think:T]]``
    a thinking block with ``T`` (Anthropic only; ignored by the Responses mock).
``[[write:PATH:CONTENT]]``
    a tool call that creates the file ``PATH`` (absolute) holding ``CONTENT``: Claude's ``Write``,
    Codex's ``apply_patch`` (``*** Add File``). Ends the model response (``tool_use``).
``[[bash:CMD]]``
    a shell tool call: Claude's ``Bash``, Codex's ``exec_command`` asking for escalation (which
    makes Codex ask permission before any ``tool_call``). Ends the model response.
``[[agent:PROMPT]]``
    a subagent call (Anthropic only; ignored by the Responses mock): Claude Code's ``Agent`` tool (``Task`` before Claude Code
    2.1; :data:`SUBAGENT_TOOL`) with ``PROMPT`` as the subagent's task, type
    :data:`SUBAGENT_TYPE`, in the foreground (the parent waits for its result). ``PROMPT``
    scripts the subagent in the same language with ``{{`` and ``}}`` in place of ``[[`` and
    ``]]`` (a marker cannot nest), e.g. ``[[agent:{{bash:echo hi}}{{text:said hi}}]]``: the
    subagent's own requests carry the unescaped prompt as their conversation, so the mock
    answers them from it as from any prompt. Ends the model response.
``[[slow:SECONDS]]``
    stream ``tick N`` chunks every :data:`SLOW_TICK_SECONDS` for ``SECONDS`` (default and at most
    :data:`MAX_SLOW_SECONDS`); a client that goes away ends the stream early.
``[[leak]]``
    stream the credential the request carried (``x-api-key`` or the Bearer token): checks that
    Baton keeps an agent-echoed secret out of its data directory.

The markers before the first tool marker are the first model response; each tool marker ends a
response. After the agent sends a tool result, the next request gets the next response; past the
last response the mock answers :data:`DONE_TEXT`. A request whose conversation carries no marker
(an agent's side request) is answered :data:`PLAIN_TEXT`. Malformed bodies get HTTP 400.
"""

from __future__ import annotations

import abc
import json
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Final

#: Seconds between two chunks of a ``[[slow]]`` stream.
SLOW_TICK_SECONDS: Final = 0.25
#: Longest ``[[slow]]`` stream (seconds): bounds a test whose cancel never arrives.
MAX_SLOW_SECONDS: Final = 60.0
#: Characters per text delta: a reply arrives as several chunks, as from a real model.
TEXT_DELTA_CHARS: Final = 8
#: Largest request body read (bytes): protects the mock against a runaway client.
MAX_BODY_BYTES: Final = 32 * 1024 * 1024
#: Requests kept in the log, at most (oldest dropped): bounds the mock's memory.
MAX_LOGGED_REQUESTS: Final = 2000
#: What the mock says once the script is used up, and to requests without markers.
DONE_TEXT: Final = "done."
PLAIN_TEXT: Final = "ok"

MARKER: Final = re.compile(r"\[\[(text|think|write|bash|agent|slow|leak)(?::(.*?))?\]\]", re.DOTALL)
#: The markers that end a model response with a tool call.
TOOL_MARKERS: Final = frozenset({"write", "bash", "agent"})
#: Claude Code's subagent tool, as the Claude Code of claude-agent-acp 0.23.1 and 0.101.0 lists it
#: in ``tools`` (older Claude Code called it ``Task``, the title the adapter still gives it).
SUBAGENT_TOOL: Final = "Agent"
#: The subagent type an ``[[agent]]`` marker asks for: Claude Code's built-in default.
SUBAGENT_TYPE: Final = "general-purpose"


@dataclass
class Block:
    """One content block of a scripted model response."""

    kind: str  # text, think, write, bash, agent, slow, leak
    arg: str = ""


@dataclass
class Response:
    """One scripted model response: its blocks; the last may be a tool call."""

    blocks: list[Block] = field(default_factory=list)

    @property
    def tool(self) -> Block | None:
        """The tool call that ends this response, if any."""
        if self.blocks and self.blocks[-1].kind in TOOL_MARKERS:
            return self.blocks[-1]
        return None


def parse_script(text: str) -> list[Response]:
    """The model responses the markers in ``text`` script (empty when there is no marker)."""
    responses: list[Response] = []
    current = Response()
    for match in MARKER.finditer(text):
        kind, arg = match.group(1), match.group(2) or ""
        current.blocks.append(Block(kind, arg))
        if kind in TOOL_MARKERS:
            responses.append(current)
            current = Response()
    if current.blocks:
        responses.append(current)
    return responses


def split_write(arg: str) -> tuple[str, str]:
    """``PATH:CONTENT`` of a write marker."""
    path, _sep, content = arg.partition(":")
    return path, content


def subagent_prompt(arg: str) -> str:
    """The subagent's task of an ``[[agent:PROMPT]]`` marker: its ``{{``/``}}`` made markers."""
    return arg.replace("{{", "[[").replace("}}", "]]")


def chunks(text: str) -> list[str]:
    """``text`` cut into deltas of :data:`TEXT_DELTA_CHARS`."""
    return [text[i : i + TEXT_DELTA_CHARS] for i in range(0, len(text), TEXT_DELTA_CHARS)] or [""]


class ClientGone(Exception):
    """The agent closed the connection mid-stream (a cancel)."""


@dataclass
class LoggedRequest:
    """One request the mock received."""

    at: float
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    reply: str = ""  # what the mock answered: plain, script[i], done, error, head

    def credential(self) -> str | None:
        """The API key the request carried (``x-api-key`` or a Bearer token)."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None


class MockServer(abc.ABC):
    """A threaded HTTP server on 127.0.0.1:0; subclasses speak one provider API."""

    name = "mock"

    def __init__(self) -> None:
        self.requests: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The bound port."""
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> MockServer:
        """Start serving in a daemon thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> MockServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def log(self, entry: LoggedRequest) -> None:
        """Keep ``entry`` (bounded)."""
        with self._lock:
            self.requests.append(entry)
            if len(self.requests) > MAX_LOGGED_REQUESTS:
                del self.requests[0]

    def posts(self) -> list[LoggedRequest]:
        """The model requests received so far (POSTs), oldest first."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST"]

    def clear(self) -> None:
        """Forget the logged requests."""
        with self._lock:
            self.requests.clear()

    # --- what a subclass provides ----------------------------------------------------------

    @abc.abstractmethod
    def model_path(self, path: str) -> bool:
        """True when ``path`` is this API's model endpoint."""

    @abc.abstractmethod
    def locate(self, body: Any) -> tuple[list[Response], int] | None:
        """The script of the conversation in ``body`` and the index of the response due now,
        or None when the conversation has no marker."""

    @abc.abstractmethod
    def stream(self, out: _Stream, response: Response, credential: str | None) -> None:
        """Write ``response`` as this API's events."""

    # --- the handler -----------------------------------------------------------------------

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _headers(self) -> dict[str, str]:
                return {k.lower(): v for k, v in self.headers.items()}

            def do_HEAD(self) -> None:
                mock.log(
                    LoggedRequest(time.time(), "HEAD", self.path, self._headers(), None, "head")
                )
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                mock.log(LoggedRequest(time.time(), "GET", self.path, self._headers(), None, "404"))
                self._error(404, "not found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY_BYTES:
                    self._error(413, "body too large")
                    return
                raw = self.rfile.read(length)
                entry = LoggedRequest(time.time(), "POST", self.path, self._headers(), None)
                mock.log(entry)
                try:
                    entry.body = json.loads(raw)
                except ValueError:
                    entry.reply = "error"
                    self._error(400, "the body is not JSON")
                    return
                if not mock.model_path(self.path):
                    entry.reply = "404"
                    self._error(404, "not a model endpoint")
                    return
                located = mock.locate(entry.body)
                if located is None:
                    entry.reply = "plain"
                    response = Response([Block("text", PLAIN_TEXT)])
                else:
                    script, index = located
                    if index < len(script):
                        entry.reply = f"script[{index}]"
                        response = script[index]
                    else:
                        entry.reply = "done"
                        response = Response([Block("text", DONE_TEXT)])
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                out = _Stream(self)
                try:
                    mock.stream(out, response, entry.credential())
                    out.finish()
                except ClientGone:
                    entry.reply += " (client gone)"
                    self.close_connection = True

            def _error(self, status: int, message: str) -> None:
                body = json.dumps({"error": {"type": "mock_error", "message": message}}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


class _Stream:
    """Chunked SSE output of one response."""

    def __init__(self, handler: BaseHTTPRequestHandler) -> None:
        self._handler = handler

    def _write(self, data: bytes) -> None:
        try:
            self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self._handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise ClientGone() from exc

    def event(self, name: str, data: dict[str, Any]) -> None:
        """One SSE event."""
        self._write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())

    def finish(self) -> None:
        """The last chunk."""
        try:
            self._handler.wfile.write(b"0\r\n\r\n")
            self._handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, OSError) as exc:
            raise ClientGone() from exc


def slow_seconds(arg: str) -> float:
    """The duration of a ``[[slow:SECONDS]]`` marker, bounded."""
    try:
        seconds = float(arg) if arg else MAX_SLOW_SECONDS
    except ValueError:
        seconds = MAX_SLOW_SECONDS
    return max(0.0, min(seconds, MAX_SLOW_SECONDS))


def slow_ticks(arg: str) -> int:
    """How many chunks a ``[[slow]]`` stream sends."""
    return max(1, int(slow_seconds(arg) / SLOW_TICK_SECONDS))


def _text_of(content: Any) -> str:
    """The text of a message content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "\n".join(parts)
    return ""


# --- Anthropic Messages API ----------------------------------------------------------------


class AnthropicMock(MockServer):
    """``POST /v1/messages`` with ``stream: true``, as Claude Code calls it."""

    name = "anthropic"
    model = "claude-sonnet-4-6"

    def model_path(self, path: str) -> bool:
        """``/v1/messages`` (with or without ``?beta=true``)."""
        return path.split("?", 1)[0] == "/v1/messages"

    def locate(self, body: Any) -> tuple[list[Response], int] | None:
        """The last user message with markers is the prompt; tool results after it count."""
        if not isinstance(body, dict) or not body.get("tools"):
            return None  # a side request (no tools offered): answered plainly
        messages = body.get("messages")
        if not isinstance(messages, list):
            return None
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            script = parse_script(_text_of(message.get("content")))
            if script:
                later = messages[index + 1 :]
                results = sum(
                    1
                    for m in later
                    if isinstance(m, dict)
                    and m.get("role") == "user"
                    and isinstance(m.get("content"), list)
                    and any(
                        isinstance(b, dict) and b.get("type") == "tool_result" for b in m["content"]
                    )
                )
                return script, results
        return None

    def stream(self, out: _Stream, response: Response, credential: str | None) -> None:
        """message_start, the blocks, message_delta (end_turn or tool_use), message_stop."""
        message_id = f"msg_mock_{uuid.uuid4().hex[:16]}"
        out.event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": self.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 12, "output_tokens": 1},
                },
            },
        )
        out.event("ping", {"type": "ping"})
        for index, block in enumerate(response.blocks):
            if block.kind == "think":
                self._thinking(out, index, block.arg)
            elif block.kind in ("text", "leak", "slow"):
                self._text(out, index, block, credential)
            else:
                self._tool(out, index, block)
        stop = "tool_use" if response.tool is not None else "end_turn"
        out.event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 20},
            },
        )
        out.event("message_stop", {"type": "message_stop"})

    def _text(self, out: _Stream, index: int, block: Block, credential: str | None) -> None:
        out.event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "text", "text": ""},
            },
        )
        if block.kind == "slow":
            for tick in range(slow_ticks(block.arg)):
                delta = {"type": "text_delta", "text": f"tick {tick} "}
                out.event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
                time.sleep(SLOW_TICK_SECONDS)
        else:
            text = block.arg if block.kind == "text" else f"the key is {credential}"
            for piece in chunks(text):
                delta = {"type": "text_delta", "text": piece}
                out.event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
        out.event("content_block_stop", {"type": "content_block_stop", "index": index})

    def _thinking(self, out: _Stream, index: int, text: str) -> None:
        out.event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        )
        for piece in chunks(text):
            delta = {"type": "thinking_delta", "thinking": piece}
            out.event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        delta = {"type": "signature_delta", "signature": "bW9jay1zaWduYXR1cmU="}
        out.event(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )
        out.event("content_block_stop", {"type": "content_block_stop", "index": index})

    def _tool(self, out: _Stream, index: int, block: Block) -> None:
        if block.kind == "write":
            path, content = split_write(block.arg)
            name, tool_input = "Write", {"file_path": path, "content": content}
        elif block.kind == "agent":
            name, tool_input = (
                SUBAGENT_TOOL,
                {
                    "description": "run the scripted subagent",
                    "prompt": subagent_prompt(block.arg),
                    "subagent_type": SUBAGENT_TYPE,
                    "run_in_background": False,
                },
            )
        else:
            name, tool_input = "Bash", {"command": block.arg, "description": "run a command"}
        out.event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": {
                    "type": "tool_use",
                    "id": f"toolu_mock_{uuid.uuid4().hex[:12]}",
                    "name": name,
                    "input": {},
                },
            },
        )
        encoded = json.dumps(tool_input)
        for piece in chunks(encoded):
            delta = {"type": "input_json_delta", "partial_json": piece}
            out.event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        out.event("content_block_stop", {"type": "content_block_stop", "index": index})


# --- OpenAI Responses API ------------------------------------------------------------------

_OUTPUT_TYPES: Final = frozenset({"function_call_output", "custom_tool_call_output"})


class ResponsesMock(MockServer):
    """``POST /v1/responses`` with ``stream: true``, as Codex's custom model provider calls it."""

    name = "responses"

    def model_path(self, path: str) -> bool:
        """``/v1/responses``."""
        return path.split("?", 1)[0] == "/v1/responses"

    def locate(self, body: Any) -> tuple[list[Response], int] | None:
        """The last user message with markers is the prompt; tool outputs after it count."""
        if not isinstance(body, dict):
            return None
        items = body.get("input")
        if not isinstance(items, list):
            return None
        for index in range(len(items) - 1, -1, -1):
            item = items[index]
            if not isinstance(item, dict) or item.get("role") != "user":
                continue
            script = parse_script(_text_of(item.get("content")))
            if script:
                later = items[index + 1 :]
                outputs = sum(
                    1 for i in later if isinstance(i, dict) and i.get("type") in _OUTPUT_TYPES
                )
                return script, outputs
        return None

    def stream(self, out: _Stream, response: Response, credential: str | None) -> None:
        """response.created, one output item per block, response.completed."""
        response_id = f"resp_mock_{uuid.uuid4().hex[:16]}"
        out.event(
            "response.created",
            {
                "type": "response.created",
                "response": {
                    "id": response_id,
                    "object": "response",
                    "status": "in_progress",
                    "output": [],
                },
            },
        )
        items: list[dict[str, Any]] = []
        anthropic_only = ("think", "agent")
        shown = (b for b in response.blocks if b.kind not in anthropic_only)
        for output_index, block in enumerate(shown):
            if block.kind in ("text", "leak", "slow"):
                items.append(self._message(out, output_index, block, credential))
            else:
                items.append(self._tool(out, output_index, block))
        out.event(
            "response.completed",
            {
                "type": "response.completed",
                "response": {
                    "id": response_id,
                    "object": "response",
                    "status": "completed",
                    "output": items,
                    "usage": {
                        "input_tokens": 12,
                        "input_tokens_details": {"cached_tokens": 0},
                        "output_tokens": 20,
                        "output_tokens_details": {"reasoning_tokens": 0},
                        "total_tokens": 32,
                    },
                },
            },
        )

    def _message(
        self, out: _Stream, output_index: int, block: Block, credential: str | None
    ) -> dict[str, Any]:
        item_id = f"msg_mock_{uuid.uuid4().hex[:12]}"
        added = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        out.event(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": output_index, "item": added},
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        out.event(
            "response.content_part.added",
            {
                "type": "response.content_part.added",
                "item_id": item_id,
                "output_index": output_index,
                "content_index": 0,
                "part": part,
            },
        )
        sent: list[str] = []

        def delta(text: str) -> None:
            sent.append(text)
            out.event(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item_id,
                    "output_index": output_index,
                    "content_index": 0,
                    "delta": text,
                },
            )

        if block.kind == "slow":
            for tick in range(slow_ticks(block.arg)):
                delta(f"tick {tick} ")
                time.sleep(SLOW_TICK_SECONDS)
        else:
            text = block.arg if block.kind == "text" else f"the key is {credential}"
            for piece in chunks(text):
                delta(piece)
        full = "".join(sent)
        out.event(
            "response.output_text.done",
            {
                "type": "response.output_text.done",
                "item_id": item_id,
                "output_index": output_index,
                "content_index": 0,
                "text": full,
            },
        )
        done = {
            "type": "message",
            "id": item_id,
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": full, "annotations": []}],
        }
        out.event(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": output_index, "item": done},
        )
        return done

    def _tool(self, out: _Stream, output_index: int, block: Block) -> dict[str, Any]:
        call_id = f"call_mock_{uuid.uuid4().hex[:12]}"
        item: dict[str, Any]
        if block.kind == "write":
            path, content = split_write(block.arg)
            lines = "".join(f"+{line}\n" for line in content.split("\n"))
            patch = f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"
            item = {
                "type": "custom_tool_call",
                "id": f"ctc_{call_id}",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": patch,
            }
        else:
            arguments = json.dumps(
                {
                    "cmd": block.arg,
                    "sandbox_permissions": "require_escalated",
                    "justification": "The qualification script asks for this command.",
                }
            )
            item = {
                "type": "function_call",
                "id": f"fc_{call_id}",
                "status": "completed",
                "call_id": call_id,
                "name": "exec_command",
                "arguments": arguments,
            }
        out.event(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": output_index, "item": item},
        )
        out.event(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": output_index, "item": item},
        )
        return item
