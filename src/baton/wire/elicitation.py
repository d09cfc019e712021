"""Elicitation (stable ACP): an agent asks the user structured questions.

``elicitation/create`` is an agent-to-client request in one of two modes:

- ``form``: a flat object schema of primitive fields (string, number, integer, boolean, and a
  multi-select array of strings); the client shows a form and answers ``accept`` with the
  content, or ``decline`` / ``cancel``;
- ``url``: the client shows a URL the user opens themselves (Baton never opens it) and answers;
  the agent later sends ``elicitation/complete`` with the same ``elicitationId``.

A request is scoped to a session (``sessionId``, optionally a ``toolCallId``) or to an
outstanding request (``requestId``). An agent may send it only when the client advertised the
mode (see :class:`baton.wire.capabilities.ElicitationOffer`).

This module parses requests (:func:`parse_elicitation_request`, bounded, raising
:class:`~baton.errors.InvalidElicitationRequest` for a malformed one), validates a form answer
against the request's schema subset (:func:`validate_form_answer`, raising
:class:`~baton.errors.ElicitationAnswerInvalid` naming the field) and builds the three answers.
Nothing here ever accepts on its own: :func:`accept_answer` needs content a person gave.

The schema subset Baton checks: each field's type, ``required``, string ``minLength`` /
``maxLength`` / ``enum`` / ``oneOf`` consts / ``format`` (email, uri, date, date-time: shape
only), number and integer ``minimum`` / ``maximum``, array ``minItems`` / ``maxItems`` and its
item choices. ``pattern`` is *not* evaluated: it is an agent-supplied regular expression, and
running untrusted expressions could take unbounded time (the agent validates it again).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final, Literal

from baton.errors import ElicitationAnswerInvalid, InvalidElicitationRequest

#: The agent-to-client request and the agent's completion notification.
CREATE_METHOD: Final = "elicitation/create"
COMPLETE_METHOD: Final = "elicitation/complete"

FORM: Final = "form"
URL: Final = "url"

FieldType = Literal["string", "number", "integer", "boolean", "array"]
_FIELD_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "array"})

#: Fields kept of one form: a form a person fills in, not a data model.
MAX_FIELDS: Final = 64

#: Characters kept of the request's message, a field title or description, an option title.
MAX_MESSAGE_CHARS: Final = 4096
MAX_TITLE_CHARS: Final = 512

#: Choices kept per field (enum, oneOf, multi-select items).
MAX_CHOICES: Final = 256

#: Characters kept of a choice value or a field name.
MAX_CHOICE_CHARS: Final = 512

#: Characters of a URL-mode URL: longer is not a URL a person should open.
MAX_URL_CHARS: Final = 8192

#: Characters of one answered string value (a person's typed answer).
MAX_ANSWER_CHARS: Final = 64 * 1024

#: Characters kept of an id (elicitationId, toolCallId, sessionId) from the agent.
MAX_ID_CHARS: Final = 256

#: String formats the schema names, each checked for shape only.
_EMAIL: Final = re.compile(r"[^@\s]+@[^@\s]+")
_URI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def _text(value: object, limit: int) -> str | None:
    return value[:limit] if isinstance(value, str) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _int(value: object) -> int | None:
    return value if type(value) is int else None


@dataclass(frozen=True, slots=True)
class Choice:
    """One allowed value of a field, with the title shown for it (the value when untitled)."""

    value: str
    title: str


@dataclass(frozen=True, slots=True)
class FormField:
    """One field of a form, with the constraints Baton checks."""

    name: str
    type: FieldType
    title: str | None = None
    description: str | None = None
    required: bool = False
    choices: tuple[Choice, ...] = ()
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    default: Any = None

    @property
    def label(self) -> str:
        """What a person is shown: the title, else the name."""
        return self.title or self.name


@dataclass(frozen=True, slots=True)
class ElicitationRequest:
    """A parsed ``elicitation/create``. ``mode`` is verbatim (an unknown mode is kept so it
    can be refused by name); ``fields`` is set for ``form``, ``url`` and ``elicitation_id``
    for ``url``."""

    mode: str
    message: str
    session_id: str | None = None
    tool_call_id: str | None = None
    request_id: str | int | None = None
    fields: tuple[FormField, ...] = ()
    url: str | None = None
    elicitation_id: str | None = None
    #: Fields beyond :data:`MAX_FIELDS` or of a type Baton does not model: a form with any is
    #: one Baton cannot fill in completely.
    unsupported_fields: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The bounded view records and events carry (never the raw schema)."""
        view: dict[str, Any] = {
            "mode": self.mode,
            "message": self.message,
            "sessionId": self.session_id,
            "toolCallId": self.tool_call_id,
        }
        if self.mode == FORM:
            view["fields"] = [
                {"name": f.name, "type": f.type, "title": f.title, "required": f.required}
                for f in self.fields
            ]
            if self.unsupported_fields:
                view["unsupportedFields"] = list(self.unsupported_fields)
        if self.mode == URL:
            view["url"] = self.url
            view["elicitationId"] = self.elicitation_id
        return view


def _choices(spec: Mapping[str, Any]) -> tuple[Choice, ...]:
    found: list[Choice] = []
    enum = spec.get("enum")
    if isinstance(enum, list):
        found += [
            Choice(v[:MAX_CHOICE_CHARS], v[:MAX_TITLE_CHARS]) for v in enum if isinstance(v, str)
        ]
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping) and isinstance(option.get("const"), str):
                    value = option["const"][:MAX_CHOICE_CHARS]
                    title = _text(option.get("title"), MAX_TITLE_CHARS) or value
                    found.append(Choice(value, title))
    return tuple(found[:MAX_CHOICES])


def _field(name: str, spec: Mapping[str, Any], required: bool) -> FormField | None:
    kind = spec.get("type")
    if kind not in _FIELD_TYPES:
        return None
    choices: tuple[Choice, ...] = ()
    if kind == "string":
        choices = _choices(spec)
    elif kind == "array":
        items = spec.get("items")
        if not isinstance(items, Mapping):
            return None
        choices = _choices(items)
        if not choices:
            return None  # a multi-select needs its choices
    fmt = spec.get("format")
    return FormField(
        name=name,
        type=kind,
        title=_text(spec.get("title"), MAX_TITLE_CHARS),
        description=_text(spec.get("description"), MAX_MESSAGE_CHARS),
        required=required,
        choices=choices,
        min_length=_int(spec.get("minLength")),
        max_length=_int(spec.get("maxLength")),
        format=fmt if fmt in ("email", "uri", "date", "date-time") else None,
        minimum=_number(spec.get("minimum")),
        maximum=_number(spec.get("maximum")),
        min_items=_int(spec.get("minItems")),
        max_items=_int(spec.get("maxItems")),
        default=spec.get("default"),
    )


def _parse_form(schema: object) -> tuple[tuple[FormField, ...], tuple[str, ...]]:
    if not isinstance(schema, Mapping):
        raise InvalidElicitationRequest("a form elicitation carries no requestedSchema object")
    properties = schema.get("properties", {})
    if not isinstance(properties, Mapping):
        raise InvalidElicitationRequest("the requestedSchema's properties is not an object")
    raw_required = schema.get("required")
    required = (
        {r for r in raw_required if isinstance(r, str)} if isinstance(raw_required, list) else set()
    )
    fields: list[FormField] = []
    unsupported: list[str] = []
    for name, spec in properties.items():
        if not isinstance(name, str):
            continue
        short = name[:MAX_CHOICE_CHARS]
        parsed = _field(name, spec, name in required) if isinstance(spec, Mapping) else None
        if parsed is None or len(fields) >= MAX_FIELDS or len(name) > MAX_CHOICE_CHARS:
            if len(unsupported) < MAX_FIELDS:
                unsupported.append(short)
            continue
        fields.append(parsed)
    for name in sorted(required - {f.name for f in fields} - set(unsupported)):
        # A required field without a definition can never be answered.
        if len(unsupported) < MAX_FIELDS:
            unsupported.append(name[:MAX_CHOICE_CHARS])
    return tuple(fields), tuple(unsupported)


def parse_elicitation_request(params: object) -> ElicitationRequest:
    """Parse ``elicitation/create`` params. Raises :class:`InvalidElicitationRequest` when the
    message, the mode, the scope or the mode's required parts are missing or malformed."""
    if not isinstance(params, Mapping):
        raise InvalidElicitationRequest("elicitation/create params are not an object")
    message, mode = params.get("message"), params.get("mode")
    if not isinstance(message, str):
        raise InvalidElicitationRequest("an elicitation carries no string message")
    if not isinstance(mode, str) or not mode:
        raise InvalidElicitationRequest("an elicitation carries no string mode")
    session_id = params.get("sessionId")
    request_id = params.get("requestId")
    if not isinstance(session_id, str) and not isinstance(request_id, str | int):
        raise InvalidElicitationRequest(
            "an elicitation is scoped to neither a session nor a request"
        )
    tool_call_id = params.get("toolCallId")
    base: dict[str, Any] = {
        "mode": mode[:MAX_ID_CHARS],
        "message": message[:MAX_MESSAGE_CHARS],
        "session_id": session_id[:MAX_ID_CHARS] if isinstance(session_id, str) else None,
        "tool_call_id": _text(tool_call_id, MAX_ID_CHARS),
        "request_id": request_id if isinstance(request_id, str | int) else None,
    }
    if mode == FORM:
        fields, unsupported = _parse_form(params.get("requestedSchema"))
        return ElicitationRequest(**base, fields=fields, unsupported_fields=unsupported)
    if mode == URL:
        url, elicitation_id = params.get("url"), params.get("elicitationId")
        if not isinstance(url, str) or not _URI.fullmatch(url) or len(url) > MAX_URL_CHARS:
            raise InvalidElicitationRequest("a URL elicitation carries no usable url")
        if not isinstance(elicitation_id, str) or not elicitation_id:
            raise InvalidElicitationRequest("a URL elicitation carries no elicitationId")
        return ElicitationRequest(**base, url=url, elicitation_id=elicitation_id[:MAX_ID_CHARS])
    return ElicitationRequest(**base)


def _check_format(form_field: FormField, value: str) -> bool:
    if form_field.format == "email":
        return _EMAIL.fullmatch(value) is not None
    if form_field.format == "uri":
        return _URI.fullmatch(value) is not None
    try:
        if form_field.format == "date":
            date.fromisoformat(value)
        elif form_field.format == "date-time":
            datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _invalid(form_field: FormField, why: str) -> ElicitationAnswerInvalid:
    return ElicitationAnswerInvalid(form_field.name, why)


def _check_value(form_field: FormField, value: object) -> object:
    """``value`` checked (and normalized: an integral float for an integer field) or raise."""
    if form_field.type == "boolean":
        if not isinstance(value, bool):
            raise _invalid(form_field, "expects true or false")
        return value
    if form_field.type in ("number", "integer"):
        number = _number(value)
        if number is None:
            raise _invalid(form_field, f"expects a {form_field.type}")
        if form_field.type == "integer":
            if not number.is_integer():
                raise _invalid(form_field, "expects an integer")
            value = int(number)
        if form_field.minimum is not None and number < form_field.minimum:
            raise _invalid(form_field, f"is below the minimum {form_field.minimum:g}")
        if form_field.maximum is not None and number > form_field.maximum:
            raise _invalid(form_field, f"is above the maximum {form_field.maximum:g}")
        return value
    allowed = {c.value for c in form_field.choices}
    if form_field.type == "array":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _invalid(form_field, "expects a list of choices")
        if len(set(value)) != len(value) or any(v not in allowed for v in value):
            raise _invalid(form_field, "holds a value that is not one of its choices (or twice)")
        if form_field.min_items is not None and len(value) < form_field.min_items:
            raise _invalid(form_field, f"needs at least {form_field.min_items} choices")
        if form_field.max_items is not None and len(value) > form_field.max_items:
            raise _invalid(form_field, f"takes at most {form_field.max_items} choices")
        return list(value)
    if not isinstance(value, str):
        raise _invalid(form_field, "expects text")
    if len(value) > MAX_ANSWER_CHARS:
        raise _invalid(form_field, f"is longer than {MAX_ANSWER_CHARS} characters")
    if allowed and value not in allowed:
        raise _invalid(form_field, "is not one of its choices")
    if form_field.min_length is not None and len(value) < form_field.min_length:
        raise _invalid(form_field, f"needs at least {form_field.min_length} characters")
    if form_field.max_length is not None and len(value) > form_field.max_length:
        raise _invalid(form_field, f"takes at most {form_field.max_length} characters")
    if form_field.format is not None and not _check_format(form_field, value):
        raise _invalid(form_field, f"is not a valid {form_field.format}")
    return value


def validate_form_answer(
    request: ElicitationRequest, content: Mapping[str, object]
) -> dict[str, Any]:
    """Check a person's answer to a form request against its schema subset; return the content
    to send (only the form's fields, integers normalized). Raises
    :class:`ElicitationAnswerInvalid` naming the first field that fails, an unknown key, or a
    missing required field."""
    if request.mode != FORM:
        raise ElicitationAnswerInvalid("", f"a {request.mode} elicitation takes no form content")
    by_name = {f.name: f for f in request.fields}
    answer: dict[str, Any] = {}
    for key, value in content.items():
        form_field = by_name.get(key)
        if form_field is None:
            raise ElicitationAnswerInvalid(
                str(key)[:MAX_CHOICE_CHARS], "is not a field of the form"
            )
        answer[key] = _check_value(form_field, value)
    for form_field in request.fields:
        if form_field.required and form_field.name not in answer:
            raise _invalid(form_field, "is required")
    return answer


def accept_answer(content: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{"action": "accept"}`` with the validated ``content`` (form) or none (URL)."""
    answer: dict[str, Any] = {"action": "accept"}
    if content is not None:
        answer["content"] = dict(content)
    return answer


def decline_answer() -> dict[str, Any]:
    """``{"action": "decline"}``: the user (or Baton, when nobody can answer) said no."""
    return {"action": "decline"}


def cancel_answer() -> dict[str, Any]:
    """``{"action": "cancel"}``: the question was dismissed (the turn was cancelled)."""
    return {"action": "cancel"}


def parse_complete(params: object) -> str | None:
    """The ``elicitationId`` of an ``elicitation/complete`` notification, or None."""
    if not isinstance(params, Mapping):
        return None
    elicitation_id = params.get("elicitationId")
    return elicitation_id[:MAX_ID_CHARS] if isinstance(elicitation_id, str) else None
