"""The scripted agent's ACP v2 dialect: its v1 frames, translated at the edge.

The agent's logic speaks v1 internally. When it negotiates v2 (``--protocol 2``, or ``auto``
when the client offers 2), :class:`V2Dialect` rewrites what goes out and what comes in:

- out: ``initialize`` answers with ``info``/``capabilities`` (support markers) and ``methodId``
  auth methods; text chunks carry a ``messageId``; ``tool_call`` becomes the first
  ``tool_call_update``; v1 diffs become ``changes[]`` plus a ``git_patch``; ``plan`` becomes
  ``plan_update``; permission requests carry a ``title`` and a ``tool_call`` subject (after a
  ``requires_action`` state, and ``running`` again once answered); a prompt is acknowledged with
  its user message's id as soon as its turn starts, and its v1 answer becomes the turn's
  ``idle`` state (an error answer: ``idle`` with the ``error`` stop reason; ``--prompt-usage``'s
  ``usage`` rides on that state, where the draft's unstable ``IdleStateUpdate.usage`` puts it);
  ``session/resume`` sends its state snapshot before answering; modes are dropped.
- in: ``auth/login``/``auth/logout`` become ``authenticate``/``logout``, ``session/resume``
  with ``replayFrom`` becomes ``session/load``, a select ``set_config_option`` loses its
  ``type: "id"``; ``session/load``, ``session/set_mode`` and ``authenticate`` do not exist.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any, Final

from baton.wire.jsonrpc import Message, RequestId, notification, result_response

#: The protocol versions the dialect answers.
V2: Final = 2

#: v1 methods the v2 surface does not have (answered -32601).
_REMOVED: Final = frozenset({"session/load", "session/set_mode", "authenticate", "logout"})

#: v2 method -> the agent's internal (v1) method.
_RENAMED: Final[Mapping[str, str]] = {"auth/login": "authenticate", "auth/logout": "logout"}

#: The stop reason (from ``stop none``) the dialect sends as an idle state without one.
UNREPORTED_STOP: Final = "none"

#: A permission request's title when the tool call has none.
DEFAULT_PERMISSION_TITLE: Final = "Permission requested"


def _marker(value: object) -> bool:
    return value is not None and value is not False


def v2_capabilities(v1: Mapping[str, Any]) -> dict[str, Any]:
    """The v2 ``capabilities`` for the agent's v1 ``agentCapabilities``: ``session`` is
    baseline; each advertised v1 leaf becomes an object marker in its v2 place."""
    session: dict[str, Any] = {}
    prompt_v1 = v1.get("promptCapabilities")
    if isinstance(prompt_v1, Mapping):
        prompt: dict[str, Any] = {
            k: {} for k in ("image", "audio", "embeddedContext") if _marker(prompt_v1.get(k))
        }
        if prompt:
            session["prompt"] = prompt
    mcp: dict[str, Any] = {"stdio": {}}
    mcp_v1 = v1.get("mcpCapabilities")
    if isinstance(mcp_v1, Mapping) and _marker(mcp_v1.get("http")):
        mcp["http"] = {}
    session["mcp"] = mcp
    sessions_v1 = v1.get("sessionCapabilities")
    if isinstance(sessions_v1, Mapping):
        for key in ("delete", "additionalDirectories"):
            if _marker(sessions_v1.get(key)):
                session[key] = {}
        # The draft's unstable session.systemPrompt has v1's shape ({} or {"mode": {...}}).
        system_prompt = sessions_v1.get("systemPrompt")
        if _marker(system_prompt):
            session["systemPrompt"] = (
                dict(system_prompt) if isinstance(system_prompt, Mapping) else {}
            )
    result: dict[str, Any] = {"session": session}
    if isinstance(v1.get("_meta"), Mapping):
        result["_meta"] = v1["_meta"]
    return result


def git_patch(path: str, old: str | None, new: str) -> str:
    """A git-style unified diff of one file (``old`` None: a new file)."""
    name = path.lstrip("/")
    header = [f"diff --git a/{name} b/{name}"]
    old_lines = (old or "").splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    body = difflib.unified_diff(
        old_lines,
        new_lines,
        fromfile="/dev/null" if old is None else f"a/{name}",
        tofile=f"b/{name}",
        lineterm="\n",
    )
    lines = [line if line.endswith("\n") else line + "\n" for line in body]
    return "".join([*(h + "\n" for h in header), *lines])


def _content(items: object) -> object:
    if not isinstance(items, list):
        return items
    out: list[Any] = []
    for item in items:
        if isinstance(item, Mapping) and item.get("type") == "diff" and "changes" not in item:
            path = str(item.get("path"))
            old = item.get("oldText")
            new = str(item.get("newText") or "")
            out.append(
                {
                    "type": "diff",
                    "changes": [
                        {"operation": "modify" if old is not None else "add", "path": path}
                    ],
                    "patch": {
                        "format": "git_patch",
                        "text": git_patch(path, old if isinstance(old, str) else None, new),
                    },
                }
            )
        else:
            out.append(item)
    return out


def config_options(options: object) -> object:
    """v1 config options in v2 spelling: ``configId`` for ``id``, ``groupId`` for ``group``."""
    if not isinstance(options, list):
        return options
    out: list[Any] = []
    for option in options:
        if not isinstance(option, Mapping):
            out.append(option)
            continue
        renamed = {("configId" if k == "id" else k): v for k, v in option.items()}
        choices = renamed.get("options")
        if isinstance(choices, list):
            renamed["options"] = [
                {("groupId" if k == "group" else k): v for k, v in c.items()}
                if isinstance(c, Mapping)
                else c
                for c in choices
            ]
        out.append(renamed)
    return out


def _v2_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A session result without v1-only fields (modes, legacy models), options renamed."""
    trimmed = {k: v for k, v in result.items() if k not in ("modes", "models")}
    if "configOptions" in trimmed:
        trimmed["configOptions"] = config_options(trimmed["configOptions"])
    return trimmed


def _tool_call(update: Mapping[str, Any]) -> dict[str, Any]:
    fields = {k: v for k, v in update.items() if k != "sessionUpdate"}
    if "content" in fields:
        fields["content"] = _content(fields["content"])
    return fields


class V2Dialect:
    """Per-connection translation state (which requests are prompts, resumes, permissions)."""

    def __init__(self) -> None:
        self._inbound: dict[RequestId, str] = {}
        self._acked: dict[RequestId, str] = {}  # prompt request id -> session id
        self._permissions: dict[RequestId, str] = {}  # permission request id -> session id
        self._agent_message: dict[str, str] = {}  # session id -> current agent message id
        self._user_message: dict[str, str] = {}
        self._resumed: dict[RequestId, str] = {}
        self._turns = 0

    # --- inbound ---------------------------------------------------------------------------

    def inbound(self, request_id: RequestId, method: str, params: Any) -> tuple[str, Any, bool]:
        """The internal method and params of a v2 request, and whether the v1 capability check
        is skipped (a v2 baseline method). A removed method maps to itself, unknown."""
        if method in _REMOVED:
            return f"{method} (not in ACP v2)", params, True
        self._inbound[request_id] = method
        if method in _RENAMED:
            return _RENAMED[method], params, True
        if method == "session/resume" and isinstance(params, dict):
            if params.get("replayFrom") is not None:
                rest = {k: v for k, v in params.items() if k != "replayFrom"}
                rest.setdefault("mcpServers", [])
                return "session/load", rest, True
            return method, params, True
        if (
            method == "session/set_config_option"
            and isinstance(params, dict)
            and params.get("type") == "id"
        ):
            return method, {k: v for k, v in params.items() if k != "type"}, False
        if method in ("session/list", "session/close"):
            return method, params, True
        return method, params, False

    def answered(self, request_id: RequestId) -> list[Message]:
        """Frames to send after the client answered the agent's request ``request_id``."""
        session_id = self._permissions.pop(request_id, None)
        if session_id is None:
            return []
        return [self._state(session_id, "running")]

    # --- turns -----------------------------------------------------------------------------

    def prompt_started(self, request_id: RequestId, session_id: str, text: str) -> list[Message]:
        """The acknowledgement of a prompt whose turn starts, with the user message echo and
        the ``running`` state."""
        self._turns += 1
        user_id = f"user-{self._turns}"
        self._user_message[session_id] = user_id
        self._agent_message[session_id] = f"agent-{self._turns}"
        self._acked[request_id] = session_id
        return [
            result_response(request_id, {"messageId": user_id}),
            self._update(
                session_id,
                {
                    "sessionUpdate": "user_message",
                    "messageId": user_id,
                    "content": [{"type": "text", "text": text}],
                },
            ),
            self._state(session_id, "running"),
        ]

    def agent_message_id(self, session_id: str) -> str:
        """The id of the session's current agent message (a replay outside turns: ``replay``)."""
        return self._agent_message.get(session_id, "replay")

    # --- outbound --------------------------------------------------------------------------

    def outbound(self, message: Message) -> list[Message]:
        """The v2 frames for one v1 frame the agent sends (none, one or several)."""
        method = message.get("method")
        if method == "session/update":
            return self._session_update(message)
        if method == "session/request_permission" and "id" in message:
            return self._permission(message)
        if method is None and "id" in message:
            return self._response(message)
        return [message]

    def _update(self, session_id: str, update: Message) -> Message:
        return notification("session/update", {"sessionId": session_id, "update": update})

    def _state(self, session_id: str, state: str, **extra: Any) -> Message:
        return self._update(session_id, {"sessionUpdate": "state_update", "state": state, **extra})

    def _session_update(self, message: Message) -> list[Message]:
        params = message.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("update"), dict):
            return [message]
        session_id = str(params.get("sessionId"))
        update: dict[str, Any] = dict(params["update"])
        kind = update.get("sessionUpdate")
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            if "messageId" not in update:
                base = self.agent_message_id(session_id)
                if kind == "agent_thought_chunk":
                    update["messageId"] = f"{base}-thought"
                elif kind == "user_message_chunk":
                    update["messageId"] = self._user_message.get(session_id, "replay-user")
                else:
                    update["messageId"] = base
        elif kind in ("tool_call", "tool_call_update"):
            update = {"sessionUpdate": "tool_call_update", **_tool_call(update)}
        elif kind == "plan":
            update = {
                "sessionUpdate": "plan_update",
                "plan": {
                    "type": "items",
                    "planId": f"plan-{session_id}",
                    "entries": update.get("entries", []),
                },
            }
        elif kind == "current_mode_update":
            return []
        elif kind == "config_option_update":
            update["configOptions"] = config_options(update.get("configOptions"))
        elif kind == "available_commands_update" and isinstance(
            update.get("availableCommands"), list
        ):
            update["availableCommands"] = [
                {"type": "command", **c} if isinstance(c, Mapping) else c
                for c in update["availableCommands"]
            ]
        return [self._update(session_id, update)]

    def _permission(self, message: Message) -> list[Message]:
        params = message.get("params")
        if not isinstance(params, dict):
            return [message]
        session_id = str(params.get("sessionId"))
        tool_call = params.get("toolCall")
        fields = _tool_call(tool_call) if isinstance(tool_call, Mapping) else {}
        title = fields.get("title")
        v2_params = {
            "sessionId": session_id,
            "title": title if isinstance(title, str) and title else DEFAULT_PERMISSION_TITLE,
            "subject": {"type": "tool_call", "toolCall": fields},
            "options": params.get("options"),
        }
        self._permissions[message["id"]] = session_id
        return [
            self._state(session_id, "requires_action"),
            {**message, "params": v2_params},
        ]

    def _response(self, message: Message) -> list[Message]:
        request_id = message["id"]
        session_id = self._acked.pop(request_id, None)
        if session_id is not None:
            result = message.get("result")
            if isinstance(result, Mapping):
                reason = result.get("stopReason", "end_turn")
                # v2 reports the turn's token usage on the ending idle state (unstable).
                usage = result.get("usage")
                extra = {"usage": usage} if isinstance(usage, Mapping) else {}
                if reason == UNREPORTED_STOP:
                    return [self._state(session_id, "idle", **extra)]  # no stop reason
                return [self._state(session_id, "idle", stopReason=reason, **extra)]
            error = message.get("error")
            detail = error if isinstance(error, Mapping) else {"code": -32603, "message": "error"}
            return [
                self._state(
                    session_id,
                    "idle",
                    stopReason="error",
                    error={
                        "code": detail.get("code", -32603),
                        "message": str(detail.get("message")),
                    },
                )
            ]
        method = self._inbound.pop(request_id, None)
        result = message.get("result")
        if not isinstance(result, dict):
            return [message]
        if method == "initialize":
            return [{**message, "result": self._initialize(result)}]
        if method == "session/set_config_option":
            return [{**message, "result": _v2_result(result)}]
        if method in ("session/new", "session/resume", "session/load"):
            trimmed = _v2_result(result)
            out: list[Message] = []
            if method == "session/resume":
                session_id = self._resumed.pop(request_id, "")
                if session_id:
                    out.append(self._state(session_id, "idle"))
            return [*out, {**message, "result": trimmed}]
        return [message]

    def note_resume(self, request_id: RequestId, session_id: object) -> None:
        """A ``session/resume`` is being served: its answer follows a state snapshot."""
        if isinstance(session_id, str):
            self._resumed[request_id] = session_id

    def _initialize(self, result: Mapping[str, Any]) -> dict[str, Any]:
        info = result.get("agentInfo")
        info = dict(info) if isinstance(info, Mapping) else {"name": "scripted"}
        info.setdefault("version", "0")
        capabilities = result.get("agentCapabilities")
        methods = []
        for method in result.get("authMethods") or []:
            if isinstance(method, Mapping):
                entry = {k: v for k, v in method.items() if k not in ("id", "type")}
                entry["methodId"] = method.get("id")
                entry["type"] = method.get("type", "agent")
                methods.append(entry)
        v2: dict[str, Any] = {
            "protocolVersion": V2,
            "info": info,
            "capabilities": v2_capabilities(
                capabilities if isinstance(capabilities, Mapping) else {}
            ),
            "authMethods": methods,
        }
        if "_meta" in result:
            v2["_meta"] = result["_meta"]
        return v2
