"""The success bodies of the API's operations, for the OpenAPI document.

:data:`RESPONSES` maps an operationId to the media type and schema of its success answer. The
schemas name each body's top-level fields (the nested views are the CLI's JSON contract,
described in docs/api.md and docs/journal.md); the service's tests check every JSON answer
they receive against its operation's schema, so a field renamed in a route and not here fails.
"""

from __future__ import annotations

from typing import Any, Final

_STRING: Final = {"type": "string"}
_NULLABLE_STRING: Final = {"type": ["string", "null"]}
_INTEGER: Final = {"type": "integer"}
_BOOLEAN: Final = {"type": "boolean"}
_OBJECT: Final = {"type": "object"}
_OBJECTS: Final = {"type": "array", "items": _OBJECT}
_NULLABLE_OBJECT: Final = {"type": ["object", "null"]}


def _shape(required: dict[str, Any], description: str) -> dict[str, Any]:
    """An object schema whose ``required`` fields have the given schemas."""
    return {
        "type": "object",
        "description": description,
        "required": sorted(required),
        "properties": required,
    }


_JSON: Final = "application/json"
_HTML: Final = "text/html"
_SSE: Final = "text/event-stream"

_RUN_STARTED: Final = _shape(
    {"runId": _STRING, "events": _STRING}, "the new run's id and its event stream's path"
)
_RUN_VIEW: Final = _shape(
    {"id": _STRING, "status": _STRING, "schemaVersion": _INTEGER},
    "a run's record, as `baton show --json` prints it",
)
_RUN_ROW: Final = _shape(
    {"id": _STRING, "status": _STRING, "agent": _NULLABLE_STRING, "schemaVersion": _INTEGER},
    "a run, as `baton runs --json` prints it",
)
_WORKSPACE: Final = _shape(
    {"name": _STRING, "kind": {"enum": ["worktree", "dir"]}, "path": _STRING, "state": _STRING},
    "a workspace, as `baton workspace list --json` prints it",
)
_BATCH: Final = _shape(
    {
        "batchId": _STRING,
        "state": {"enum": ["RUNNING", "COMPLETED", "STOPPED", "CANCELLED"]},
        "specHash": _STRING,
        "cells": _INTEGER,
        "counts": _OBJECT,
        "cost": _OBJECT,
        "matrix": _OBJECT,
    },
    "a batch, as `baton batch list --json` prints it (docs/batches.md)",
)
_RUN_ROWS: Final = _shape({"runs": {"type": "array", "items": _RUN_ROW}}, "runs, newest first")
_READINESS: Final = _shape(
    {"profile": _STRING, "state": _STRING}, "one profile's readiness (`baton doctor --json`)"
)
_SESSION: Final = _shape(
    {"name": _STRING, "status": _STRING},
    "a session, as `baton session show --json` prints its record",
)
_TICKET: Final = _shape(
    {
        "promptId": _STRING,
        "state": {"enum": ["queued", "running", "ended", "failed"]},
        "position": _INTEGER,
        "runId": _NULLABLE_STRING,
        "error": _NULLABLE_OBJECT,
    },
    "where a prompt sent to a session is",
)
_JOURNAL_PAGE: Final = _shape(
    {
        "serverInstanceId": _STRING,
        "runId": _NULLABLE_STRING,
        "records": _OBJECTS,
        "next": {"type": ["integer", "null"]},
    },
    "a page of redacted journal records (`next`: the `after` of the next page, or null)",
)
_TRAJECTORY: Final = _shape(
    {
        "schema_version": _STRING,
        "trajectory_id": _STRING,
        "agent": _OBJECT,
        "steps": {"type": "array", "items": _OBJECT, "minItems": 1},
        "final_metrics": _OBJECT,
    },
    "an ATIF trajectory (Harbor's Agent Trajectory Interchange Format; docs/trajectories.md)",
)
_NDJSON: Final = "application/x-ndjson"
_EVENT_LINES: Final = {
    "type": "string",
    "description": "the runs' normalized events, one JSON object per line (docs/events.md)",
}
_CONTROLS: Final = _shape(
    {"revision": _STRING, "controls": _OBJECTS}, "the session's safe controls and their revision"
)

#: operationId -> (media type, schema) of the success answer.
RESPONSES: Final[dict[str, tuple[str, dict[str, Any]]]] = {
    "describe": (
        _JSON,
        _shape(
            {
                "service": {"const": "baton"},
                "version": _STRING,
                "apiVersion": _INTEGER,
                "schemaVersion": _INTEGER,
                "pid": _INTEGER,
                "policy": _STRING,
                "stopping": _BOOLEAN,
                "activeRuns": {"type": "array", "items": _STRING},
            },
            "what this service is",
        ),
    ),
    "openapi": (_JSON, _shape({"openapi": _STRING, "paths": _OBJECT}, "this document")),
    "login": (_HTML, _STRING),
    "loginForm": (_HTML, _STRING),
    "issueLoginCode": (
        _JSON,
        _shape(
            {"code": _STRING, "path": _STRING, "expiresInSeconds": {"type": "number"}},
            "a login code, good once within expiresInSeconds, and the path that redeems it",
        ),
    ),
    "inspector": (_HTML, _STRING),
    "inspectorAsset": ("*/*", _STRING),
    "readiness": (_JSON, _shape({"profiles": {"type": "array", "items": _READINESS}}, "profiles")),
    "liveReadiness": (_JSON, _READINESS),
    "listRuns": (_JSON, _RUN_ROWS),
    "startRun": (_JSON, _RUN_STARTED),
    "showRun": (_JSON, _RUN_VIEW),
    "runEvents": (_SSE, _STRING),
    "cancelRun": (
        _JSON,
        _shape({"runId": _STRING, "cancelling": {"const": True}}, "the interrupt was sent"),
    ),
    "runJournal": (_JSON, _JOURNAL_PAGE),
    "serverJournal": (_JSON, _JOURNAL_PAGE),
    "listPermissions": (_JSON, _shape({"permissions": _OBJECTS}, "pending requests")),
    "answerPermission": (
        _JSON,
        _shape(
            {
                "id": _STRING,
                "runId": _STRING,
                "outcome": {"enum": ["selected", "cancelled"]},
                "optionId": _NULLABLE_STRING,
            },
            "the answer given",
        ),
    ),
    "listElicitations": (_JSON, _shape({"elicitations": _OBJECTS}, "pending elicitations")),
    "answerElicitation": (
        _JSON,
        _shape(
            {"id": _STRING, "runId": _STRING, "action": {"enum": ["accept", "decline", "cancel"]}},
            "the answer given",
        ),
    ),
    "listSessions": (
        _JSON,
        _shape(
            {"sessions": {"type": "array", "items": _SESSION}, "queued": _OBJECTS},
            "sessions, most recently used first, and the sessions of queued turns",
        ),
    ),
    "createSession": (_JSON, _SESSION),
    "showSession": (
        _JSON,
        _shape(
            {
                "session": _SESSION,
                "runs": {"type": "array", "items": _RUN_ROW},
                "attachedHere": _BOOLEAN,
                "queue": {"type": "array", "items": _TICKET},
                "schemaVersion": _INTEGER,
            },
            "a session: its record, runs, native state and prompt queue",
        ),
    ),
    "sessionHistory": (_JSON, _shape({"turns": _OBJECTS}, "the session's turns, oldest first")),
    "promptSession": (_JSON, _TICKET),
    "promptStatus": (_JSON, _TICKET),
    "cancelSession": (
        _JSON,
        _shape({"session": _STRING, "cancelling": {"const": True}}, "the interrupt was sent"),
    ),
    "steerSession": (
        _JSON,
        _shape(
            {"session": _STRING, "outcome": _STRING, "reason": _STRING},
            "the agent's steering outcome (200), or the text queued as the next turn (202, "
            "outcome queued, with the prompt's ticket)",
        ),
    ),
    "forkSession": (_JSON, _SESSION),
    "closeSession": (_JSON, _SESSION),
    "getControls": (_JSON, _CONTROLS),
    "setControl": (_JSON, _CONTROLS),
    "listRecovery": (_JSON, _RUN_ROWS),
    "markFailed": (_JSON, _RUN_ROW),
    "attachToLook": (
        _JSON,
        _shape(
            {"runId": _STRING, "of": _STRING, "events": _STRING},
            "the looking run's id, the run it looks at, and its event stream's path",
        ),
    ),
    "listWorkers": (
        _JSON,
        _shape({"workers": _OBJECTS, "shared": _BOOLEAN}, "the fleet's workers"),
    ),
    "listWorkspaces": (
        _JSON,
        _shape({"workspaces": {"type": "array", "items": _WORKSPACE}}, "workspaces, newest first"),
    ),
    "showWorkspace": (_JSON, {**_WORKSPACE, "description": "one workspace and its runs"}),
    "listBatches": (
        _JSON,
        _shape({"batches": {"type": "array", "items": _BATCH}}, "batches, newest first"),
    ),
    "showBatch": (
        _JSON,
        {
            **_BATCH,
            # Every required name is a declared property (openapi-spec-validator's lowest
            # allowed release refuses one that is not).
            "properties": {**_BATCH["properties"], "rows": _OBJECTS},
            "required": [*_BATCH["required"], "rows"],
            "description": "one batch and its rows",
        },
    ),
    "runChanges": (
        _JSON,
        _shape(
            {
                "runId": _STRING,
                "workspace": _NULLABLE_STRING,
                "side": {"enum": ["turn", "base"]},
                "counts": _NULLABLE_OBJECT,
                "truncated": {"type": "array", "items": _STRING},
                "provisional": _BOOLEAN,
                "atRecover": _BOOLEAN,
                "total": _INTEGER,
                "offset": _INTEGER,
                "files": _OBJECTS,
                "nextOffset": {"type": ["integer", "null"]},
            },
            "a run's recorded workspace changes: counts, markers, one page of files",
        ),
    ),
    "runFileDiff": (
        _JSON,
        _shape(
            {"runId": _STRING, "kind": _STRING, "path": _STRING, "diff": _STRING},
            "one changed file with its recorded, redacted diff",
        ),
    ),
    "runPatch": ("text/x-diff", _STRING),
    "runTrajectory": (_JSON, _TRAJECTORY),
    "sessionTrajectory": (_JSON, _TRAJECTORY),
}

#: operationId -> the other media types (and schemas) its success answer may have, chosen by
#: a query parameter (``format=acp-jsonl``).
ALTERNATE_RESPONSES: Final[dict[str, tuple[tuple[str, dict[str, Any]], ...]]] = {
    "runTrajectory": ((_NDJSON, _EVENT_LINES),),
    "sessionTrajectory": ((_NDJSON, _EVENT_LINES),),
}
