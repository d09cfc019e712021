"""The OpenAPI 3.1 document of the API, served at ``/api/v1/openapi.json``.

One table, :data:`OPERATIONS`, names every route with its summary and the statuses it may
answer; a test checks it against the application's routes, so the document cannot drift. The
request bodies are :data:`SCHEMAS` (tests/service/test_body_schemas.py checks each against what
its route accepts and rejects); the success bodies are
:data:`~baton.service.openapi_responses.RESPONSES` (the service's tests check every JSON answer
against them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from baton._version import __version__
from baton.service.openapi_responses import ALTERNATE_RESPONSES, RESPONSES
from baton.store.models import RUN_STATUSES


@dataclass(frozen=True)
class Operation:
    """One route: method, path, operationId, summary, success status, error statuses (besides
    the guard's) and the request body's schema name."""

    method: str
    path: str
    id: str
    summary: str
    ok: int = 200
    errors: tuple[int, ...] = ()
    body: str | None = None


_op = Operation
#: Every route of the API (one line each: the table reads as a table).
# fmt: off
OPERATIONS: Final = (
    _op("get", "/api/v1", "describe", "What this service is"),
    _op("get", "/api/v1/openapi.json", "openapi", "This document"),
    _op("get", "/login", "login", "How to authenticate (public, HTML)"),
    _op("post", "/login", "loginForm", "The login page's form: the token or a login code in the body; a session cookie", 303, (401, 413)),
    _op("post", "/api/v1/login-codes", "issueLoginCode", "A single-use, short-lived login code for the inspector's URL", 201, (403,)),
    _op("get", "/", "inspector", "The inspector's page (HTML)"),
    _op("get", "/inspector/{name}", "inspectorAsset", "One of the inspector's files", 200, (404,)),
    _op("get", "/api/v1/readiness", "readiness", "Readiness of every (or each named) profile", 200, (400,)),
    _op("post", "/api/v1/readiness/{profile}/live", "liveReadiness", "A live check of one profile", 200, (400, 403), "LiveCheck"),
    _op("get", "/api/v1/runs", "listRuns", "Runs, newest first (filters: status, sessionId, agent, cwd, limit)", 200, (400,)),
    _op("post", "/api/v1/runs", "startRun", "Start a run; its id at once", 202, (400, 403, 413, 424, 503), "RunRequest"),
    _op("get", "/api/v1/runs/{run}", "showRun", "One run's record (`baton show --json`)", 200, (404, 409)),
    _op("get", "/api/v1/runs/{run}/events", "runEvents", "The run's events as Server-Sent Events (Last-Event-ID resumes)", 200, (400, 404, 409)),
    _op("post", "/api/v1/runs/{run}/cancel", "cancelRun", "Interrupt the run's turn", 202, (403, 404, 409)),
    _op("get", "/api/v1/runs/{run}/journal", "runJournal", "A run's redacted journal records, paged", 200, (400, 404)),
    _op("get", "/api/v1/servers/{server}/journal", "serverJournal", "A server instance's redacted journal records, paged", 200, (400, 404)),
    _op("get", "/api/v1/permissions", "listPermissions", "Pending permission requests (filter: runId)"),
    _op("post", "/api/v1/permissions/{permission}/answer", "answerPermission", "Answer one offered optionId, or cancel", 200, (400, 403, 404, 409, 422), "PermissionAnswer"),
    _op("get", "/api/v1/elicitations", "listElicitations", "Pending elicitations of runs under ask (filter: runId)"),
    _op("post", "/api/v1/elicitations/{elicitation}/answer", "answerElicitation", "Accept (with a form's content), decline or cancel", 200, (400, 403, 404, 409, 422), "ElicitationAnswer"),
    _op("get", "/api/v1/sessions", "listSessions", "Sessions, most recently used first (filters: status, agent)", 200, (400,)),
    _op("post", "/api/v1/sessions", "createSession", "Create a session (its provider session too)", 201, (400, 403, 409, 413, 503), "NewSession"),
    _op("get", "/api/v1/sessions/{name}", "showSession", "A session: record, runs, native state, queue", 200, (404,)),
    _op("get", "/api/v1/sessions/{name}/history", "sessionHistory", "A session's turns, oldest first", 200, (400, 404)),
    _op("post", "/api/v1/sessions/{name}/prompt", "promptSession", "The next turn: run id at once, or its place in the FIFO queue", 202, (400, 403, 404, 409, 429, 503), "SessionPrompt"),
    _op("get", "/api/v1/sessions/{name}/prompts/{prompt}", "promptStatus", "Where a queued prompt is", 200, (404,)),
    _op("post", "/api/v1/sessions/{name}/cancel", "cancelSession", "Interrupt the session's running turn", 202, (403, 404, 409)),
    _op("post", "/api/v1/sessions/{name}/steer", "steerSession", "Add text to the running turn (_session/steering), else queue it as the next turn (202)", 200, (400, 403, 404, 409, 429, 503), "SessionSteer"),
    _op("post", "/api/v1/sessions/{name}/fork", "forkSession", "A new session holding this one's context (session/fork, unstable ACP)", 201, (400, 403, 404, 409, 422, 503), "SessionFork"),
    _op("post", "/api/v1/sessions/{name}/close", "closeSession", "Close the session", 200, (403, 404, 409)),
    _op("get", "/api/v1/sessions/{name}/controls", "getControls", "The session's safe controls and their revision", 200, (400, 404)),
    _op("post", "/api/v1/sessions/{name}/controls", "setControl", "Apply {controlId, value, revision}", 200, (400, 403, 404, 409, 422), "ControlChange"),
    _op("get", "/api/v1/recovery", "listRecovery", "RECOVERY_REQUIRED runs (or one: runId)", 200, (400, 404)),
    _op("post", "/api/v1/recovery/{run}/fail", "markFailed", "Settle an ambiguous run as FAILED", 200, (403, 404, 409)),
    _op("post", "/api/v1/recovery/{run}/attach", "attachToLook", "Attach to the run's session to look (no prompt)", 202, (400, 403, 404, 409, 503)),
    _op("get", "/api/v1/workers", "listWorkers", "The fleet's workers on a shared store (`baton workers --json`)"),
    _op("get", "/api/v1/workspaces", "listWorkspaces", "Workspaces, newest first (all: removed too; limit)", 200, (400,)),
    _op("get", "/api/v1/workspaces/{name}", "showWorkspace", "One workspace's record and runs", 200, (404,)),
    _op("get", "/api/v1/runs/{run}/changes", "runChanges", "A run's recorded workspace changes: counts, markers, a page of files", 200, (400, 404, 409)),
    _op("get", "/api/v1/runs/{run}/changes/file", "runFileDiff", "One changed file's recorded diff", 200, (400, 404, 409)),
    _op("get", "/api/v1/runs/{run}/diff", "runPatch", "The run's patch in git's format (text/x-diff)", 200, (400, 404, 409)),
    _op("get", "/api/v1/batches", "listBatches", "Batches, newest first, with their counts (limit)", 200, (400,)),
    _op("get", "/api/v1/batches/{batch}", "showBatch", "One batch and its cells' result rows", 200, (404, 409)),
    _op("get", "/api/v1/runs/{run}/trajectory", "runTrajectory", "The run as an ATIF trajectory, or its events as JSON lines (format=acp-jsonl)", 200, (400, 404, 409)),
    _op("get", "/api/v1/sessions/{name}/trajectory", "sessionTrajectory", "The session's turns as one ATIF trajectory, or their events as JSON lines", 200, (400, 404)),
)
# fmt: on

_STRING: Final = {"type": "string"}
_SECONDS: Final = {"type": "number", "exclusiveMinimum": 0}
#: The options of a session prompt (``POST .../prompt``, and ``.../steer`` when it queues).
_PROMPT_OPTIONS: Final[dict[str, Any]] = {
    "policy": {"enum": ["ask", "auto-edits", "full"]},
    "allowUnattended": {"type": "boolean"},
    "toolsFile": _STRING,
    "idleTimeout": _SECONDS,
    "timeout": _SECONDS,
    "attachments": {"type": "array", "items": _STRING},
    # Whether the sender can answer the turn's questions itself (a CLI with a terminal): false
    # and nobody else following the run answers them at once "no user available".
    "callerAnswers": {"type": "boolean"},
}

#: The query parameters of the operations that take some, by operationId.
QUERY_PARAMETERS: Final[dict[str, tuple[dict[str, Any], ...]]] = {
    "listRuns": (
        {
            "name": "status",
            "in": "query",
            "description": "only runs in this status (repeatable; case does not matter)",
            "schema": {"type": "array", "items": {"$ref": "#/components/schemas/RunStatus"}},
            "style": "form",
            "explode": True,
        },
        {"name": "sessionId", "in": "query", "schema": _STRING},
        {"name": "agent", "in": "query", "schema": _STRING},
        {"name": "cwd", "in": "query", "schema": _STRING},
        {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
    ),
}

_SIDE: Final = {"name": "side", "in": "query", "schema": {"enum": ["turn", "base"]}}
_FORMAT: Final = {
    "name": "format",
    "in": "query",
    "description": "atif (one JSON document, the default) or acp-jsonl (application/x-ndjson)",
    "schema": {"enum": ["atif", "acp-jsonl"]},
}
QUERY_PARAMETERS.update(
    {
        "runEvents": (
            {
                "name": "answers",
                "in": "query",
                "description": "none: this client cannot answer the run's questions",
                "schema": {"enum": ["none"]},
            },
        ),
        "listWorkspaces": (
            {"name": "all", "in": "query", "schema": {"type": "boolean"}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
        ),
        "runTrajectory": (_FORMAT,),
        "sessionTrajectory": (_FORMAT,),
        "runChanges": (
            _SIDE,
            {"name": "offset", "in": "query", "schema": {"type": "integer", "minimum": 0}},
            {"name": "limit", "in": "query", "schema": {"type": "integer", "minimum": 1}},
        ),
        "runFileDiff": (
            _SIDE,
            {"name": "path", "in": "query", "required": True, "schema": _STRING},
        ),
        "runPatch": (_SIDE, {"name": "partial", "in": "query", "schema": {"type": "boolean"}}),
    }
)

#: The workspace fields of a run's or a session's creation (docs/workspaces.md).
_WORKSPACE_FIELDS: Final = {
    "workspace": {
        **_STRING,
        "description": "worktree (a new git worktree of the repository holding cwd), an "
        "absolute directory, or none; not a sandbox: restricted settings are refused",
    },
    "base": {**_STRING, "description": "with workspace=worktree: the commit to start from"},
    "requireClean": {"type": "boolean", "description": "with workspace=worktree"},
}

#: The request bodies and shared values, by schema name.
SCHEMAS: Final[dict[str, dict[str, Any]]] = {
    "RunStatus": {
        "enum": sorted(RUN_STATUSES),
        "description": "a run's status (docs/journal.md: the run-status table)",
    },
    "RunRequest": {
        "type": "object",
        "required": ["prompt"],
        "properties": {
            "prompt": _STRING,
            "agent": {
                **_STRING,
                "description": "a profile id; exactly one of agent and agentCommand",
            },
            "agentCommand": {
                **_STRING,
                "description": "only with `baton serve --allow-agent-command`",
            },
            "cwd": {**_STRING, "description": "an absolute path"},
            "policy": {"enum": ["ask", "auto-edits", "full"]},
            "allowUnattended": {"type": "boolean"},
            "mode": _STRING,
            "model": _STRING,
            "effort": _STRING,
            "config": {"type": "object", "additionalProperties": _STRING},
            "toolsFile": _STRING,
            "idleTimeout": _SECONDS,
            "timeout": _SECONDS,
            "attachments": {"type": "array", "items": _STRING},
            "envKeys": {"type": "array", "items": _STRING},
            **_WORKSPACE_FIELDS,
        },
    },
    "PermissionAnswer": {
        "type": "object",
        "properties": {"optionId": _STRING, "cancel": {"const": True}},
        "description": "exactly one of optionId (one the request offered) and cancel",
    },
    "ElicitationAnswer": {
        "type": "object",
        "required": ["action"],
        "properties": {
            "action": {"enum": ["accept", "decline", "cancel"]},
            "content": {
                "type": "object",
                "description": "a form's answer (accept only), checked against the form",
            },
        },
    },
    "NewSession": {
        "type": "object",
        "properties": {
            "name": _STRING,
            "agent": _STRING,
            "agentCommand": _STRING,
            "cwd": _STRING,
            "mode": _STRING,
            "model": _STRING,
            "effort": _STRING,
            "config": {"type": "object", "additionalProperties": _STRING},
            "allowUnattended": {"type": "boolean"},
            "toolsFile": _STRING,
            "envKeys": {"type": "array", "items": _STRING},
            **_WORKSPACE_FIELDS,
        },
    },
    # A steering text queued as the next turn takes a prompt's options.
    "SessionSteer": {
        "type": "object",
        "required": ["text"],
        "properties": {"text": _STRING, **_PROMPT_OPTIONS},
    },
    "SessionFork": {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": _STRING,
            "atTurn": {
                "type": "integer",
                "minimum": 1,
                "description": "keep only the first N turns (where the agent supports it)",
            },
        },
    },
    "SessionPrompt": {
        "type": "object",
        "required": ["prompt"],
        "properties": {"prompt": _STRING, **_PROMPT_OPTIONS},
    },
    "ControlChange": {
        "type": "object",
        "required": ["controlId", "value", "revision"],
        "additionalProperties": False,
        "properties": {"controlId": _STRING, "value": {}, "revision": _STRING},
    },
    "LiveCheck": {"type": "object", "properties": {"timeout": _SECONDS}},
    "Error": {
        "type": "object",
        "required": ["error", "schemaVersion"],
        "properties": {
            "error": {
                "type": "object",
                "required": ["code", "message", "fault"],
                "properties": {
                    "code": _STRING,
                    "message": _STRING,
                    "fault": {"enum": ["agent", "caller", "transport", "budget", "baton"]},
                },
            },
            "schemaVersion": {"type": "integer"},
        },
    },
}

#: Statuses every authenticated route may answer (the guard's).
GUARD_STATUSES: Final = (401, 421)


def _parameters(path: str) -> list[dict[str, Any]]:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    return [{"name": n, "in": "path", "required": True, "schema": _STRING} for n in names]


def openapi_document() -> dict[str, Any]:
    """The document."""
    paths: dict[str, dict[str, Any]] = {}
    error = {"$ref": "#/components/schemas/Error"}
    for op in OPERATIONS:
        method, path, operation_id, summary, ok, errors, body = (
            op.method,
            op.path,
            op.id,
            op.summary,
            op.ok,
            op.errors,
            op.body,
        )
        statuses = errors if path == "/login" else (*errors, *GUARD_STATUSES)
        media, returned = RESPONSES[operation_id]
        responses: dict[str, Any] = {
            str(ok): {
                "description": returned.get("description", "success"),
                "content": {
                    media: {"schema": returned},
                    **{m: {"schema": a} for m, a in ALTERNATE_RESPONSES.get(operation_id, ())},
                },
            }
        }
        for status in sorted(set(statuses)):
            responses[str(status)] = {
                "description": "error",
                "content": {"application/json": {"schema": error}},
            }
        operation: dict[str, Any] = {
            "operationId": operation_id,
            "summary": summary,
            "responses": responses,
        }
        if path != "/login":
            operation["security"] = [{"bearer": []}, {"cookie": []}]
        parameters = _parameters(path) + list(QUERY_PARAMETERS.get(operation_id, ()))
        if parameters:
            operation["parameters"] = parameters
        if body is not None:
            operation["requestBody"] = {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": f"#/components/schemas/{body}"}}
                },
            }
        paths.setdefault(path, {})[method] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "Baton service API", "version": __version__},
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "baton_session"},
            },
        },
    }
