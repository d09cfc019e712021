"""The one JSON contract of every `baton` verb's ``--json`` output and of the service's API.

- One key casing everywhere: camelCase, as the run events have always used (store records,
  whose fields are snake_case in Python, are converted on the way out by :func:`camel`).
- A schema version: every top-level object a verb prints (each line of ``runs --json``,
  ``journal show --json``, ``doctor --json``; the object of ``show``, ``recover``, ``journal
  verify``; the ``run_started`` and ``result`` events of ``run --json``) carries
  ``schemaVersion``: :data:`SCHEMA_VERSION`. Fields are only added within one version; a
  rename or a removal raises it.
- Records (dataclasses, journal references) become JSON types through :func:`plain`.
"""

from __future__ import annotations

from dataclasses import asdict, is_dataclass
from typing import Any, Final

from baton.durable.refs import JournalRef

#: The version of the JSON output contract (docs/events.md).
SCHEMA_VERSION: Final = 1


def camel_key(key: str) -> str:
    """``server_instance_id`` -> ``serverInstanceId`` (already camel keys stay as they are)."""
    if "_" not in key.strip("_"):
        return key
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


#: Fields whose values are payloads kept as the agent (or the protocol) sent them: their own
#: keys are not Baton's to rename.
OPAQUE_FIELDS: Final = frozenset(
    {"content", "tool_call", "offered_options", "payload", "native_state", "result", "checks"}
)


def camel(value: Any) -> Any:
    """``value`` with every key of Baton's own records in camelCase, recursively; the values
    of :data:`OPAQUE_FIELDS` (agent payloads) are kept verbatim."""
    if isinstance(value, dict):
        return {
            camel_key(str(k)): (v if str(k) in OPAQUE_FIELDS else camel(v))
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [camel(v) for v in value]
    return value


def snake_key(key: str) -> str:
    """``serverInstanceId`` -> ``server_instance_id`` (the inverse of :func:`camel_key`)."""
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)


def uncamel(value: Any) -> Any:
    """The inverse of :func:`camel`: a contract object (what the service sends) with Baton's
    own keys back in snake_case, for the printers that read store records; agent payloads
    (:data:`OPAQUE_FIELDS`) are kept verbatim."""
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for k, v in value.items():
            key = snake_key(str(k))
            result[key] = v if key in OPAQUE_FIELDS else uncamel(v)
        return result
    if isinstance(value, list):
        return [uncamel(v) for v in value]
    return value


def document(value: dict[str, Any]) -> dict[str, Any]:
    """A top-level object of the contract: camelCase keys and the ``schemaVersion``."""
    return {**camel(value), "schemaVersion": SCHEMA_VERSION}


def plain(value: Any) -> Any:
    """A record as JSON types (journal references as dicts)."""
    if isinstance(value, JournalRef):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return {key: plain(item) for key, item in asdict(value).items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


def error_document(code: str, message: str, exit_code: int, **extra: Any) -> dict[str, Any]:
    """The one JSON error line every verb prints on stdout with ``--json`` when it fails
    (a refused run, a usage error, any Baton error): ``{"type": "error", "errorCode",
    "message", "exitCode", ..., "schemaVersion"}``; ``extra`` adds fields (``hint``,
    ``runId``)."""
    return document(
        {"type": "error", "errorCode": code, "message": message, "exitCode": exit_code, **extra}
    )
