"""Structural redaction of parsed JSON: decided by where a value sits, not only by what it says.

Rules, for every object in the tree:

- a value under a credential-named key (see :mod:`~baton.redaction.names`) or an
  ``email`` key becomes ``[REDACTED]``, unless it carries no secret at all (``true``, ``null``,
  ``""``, or containers of only those, such as ACP's ``auth: {"logout": {}}`` capability), in
  which case it is kept so the journal still shows the shape;
- a paired entry ``{name|key|header|env|id...: X, value|currentValue: V}`` has ``V`` redacted
  when ``X`` is credential-like (``{"name": "OPENAI_API_KEY", "value": ...}``) and is otherwise
  kept (``{"name": "Auto", "value": "default"}`` is a model choice, not a secret);
- inside an environment or header container (``env``, ``headers``, ``*_HEADERS``...) every value
  is redacted whatever its name: ``[{name, value}]`` arrays keep the names, ``{NAME: value}``
  maps keep the keys, ``"NAME=value"`` strings keep ``NAME=``;
- anything deeper than :data:`MAX_REDACTION_DEPTH` becomes ``[REDACTED]``;
- every remaining string (keys included) goes through
  :func:`~baton.redaction.text.redact_text`, except text marked as redacted already by the
  same secrets (:class:`~baton.redaction.marked.RedactedText`), which is kept as it is.

The input is never modified; the result shares no mutable container with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from baton.redaction.marked import RedactedText
from baton.redaction.markers import REDACTED, STREAM_CONTENT_MARKER
from baton.redaction.names import (
    PAIR_NAME_KEYS,
    PAIR_VALUE_KEYS,
    is_credential_name,
    is_email_name,
    is_env_header_container,
    normalize_name,
)
from baton.redaction.secret_values import SecretValues
from baton.redaction.text import redact_text

#: Deepest nesting kept: a value nested deeper than this many containers becomes ``[REDACTED]``.
#: Bounds the recursion (and so the stack) whatever the agent sends; real ACP messages nest
#: fewer than 16 levels.
MAX_REDACTION_DEPTH: Final = 64

#: The free-form fields of a ``session/update`` that are replaced by
#: :data:`~baton.redaction.markers.STREAM_CONTENT_MARKER` in the journal.
STREAM_FIELDS: Final = frozenset({"content", "text", "rawInput", "rawOutput", "title", "data"})


def _carries_no_secret(value: Any, depth: int) -> bool:
    """True for values with no string or number in them: ``true``, ``null``, ``""``, ``{}``..."""
    if value is None or isinstance(value, bool) or value == "":
        return True
    if depth >= MAX_REDACTION_DEPTH:
        return False
    if isinstance(value, Mapping):
        return all(_carries_no_secret(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_carries_no_secret(v, depth + 1) for v in value)
    return False


class _Walker:
    """One redaction pass over a tree, with the secrets and the stream mode it was asked for."""

    __slots__ = ("_secrets",)

    def __init__(self, secrets: SecretValues | None) -> None:
        self._secrets = secrets

    def text(self, value: str) -> str:
        if type(value) is RedactedText and value.trusted_by(self._secrets):
            return value  # redacted once already, by these rules and these secrets
        return redact_text(value, self._secrets)

    def value(
        self, value: Any, depth: int, stream: bool = False, path: tuple[str, ...] = ()
    ) -> Any:
        """Redact any JSON value found ``depth`` containers deep.

        ``stream``: free-form stream fields in this subtree become the stream marker. ``path``:
        the keys leading from here to a subtree that is to be redacted in stream mode.
        """
        if depth > MAX_REDACTION_DEPTH:
            return REDACTED
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return self.mapping(value, depth, stream, path=path)
        if isinstance(value, list | tuple):
            return [self.value(item, depth + 1, stream) for item in value]
        if value is None or isinstance(value, bool | int | float):
            return value
        return REDACTED  # not JSON: nothing here can vouch for what it holds

    def masked(self, value: Any, depth: int) -> Any:
        """``value`` where a credential is expected: kept only if it carries no secret."""
        if _carries_no_secret(value, depth):
            return self.value(value, depth)
        return REDACTED

    def key(self, key: Any) -> Any:
        return self.text(key) if isinstance(key, str) else key

    def mapping(
        self,
        obj: Mapping[Any, Any],
        depth: int,
        stream: bool,
        env_entry: bool = False,
        path: tuple[str, ...] = (),
    ) -> dict[Any, Any]:
        """Redact one object. ``env_entry``: it is an item of an env/header array."""
        paired = env_entry or self._is_sensitive_pair(obj)
        out: dict[Any, Any] = {}
        for key, item in obj.items():
            if not isinstance(key, str):
                out[key] = self.value(item, depth + 1, stream)
                continue
            if path and key == path[0]:
                if len(path) > 1:
                    result: Any = self.value(item, depth + 1, stream, path=path[1:])
                elif isinstance(item, str):
                    result = STREAM_CONTENT_MARKER  # a bare string update is free-form text
                else:
                    result = self.value(item, depth + 1, stream=True)
            elif stream and key in STREAM_FIELDS and item is not None:
                result = STREAM_CONTENT_MARKER
            elif self._masks(key, paired):
                result = self.masked(item, depth + 1)
            elif is_env_header_container(key):
                result = self.container(item, depth + 1)
            else:
                result = self.value(item, depth + 1, stream)
            out[self.key(key)] = result
        return out

    @staticmethod
    def _masks(key: str, paired: bool) -> bool:
        """True when the value under ``key`` is expected to be a credential."""
        if paired and normalize_name(key) in PAIR_VALUE_KEYS:
            return True
        return is_credential_name(key) or is_email_name(key)

    def _is_sensitive_pair(self, obj: Mapping[Any, Any]) -> bool:
        """True when ``obj`` is ``{name: X, value: V}`` with a credential-like ``X``."""
        has_value = False
        names: list[str] = []
        for key, item in obj.items():
            if not isinstance(key, str):
                continue
            normalized = normalize_name(key)
            if normalized in PAIR_VALUE_KEYS:
                has_value = True
            elif normalized in PAIR_NAME_KEYS and isinstance(item, str):
                names.append(item)
        return has_value and any(is_credential_name(name) for name in names)

    def container(self, value: Any, depth: int) -> Any:
        """An environment or header set: every value redacted, names kept."""
        if depth > MAX_REDACTION_DEPTH:
            return REDACTED
        if isinstance(value, Mapping):
            return {self.key(k): self.masked(v, depth + 1) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._container_item(item, depth + 1) for item in value]
        return self.masked(value, depth)

    def _container_item(self, item: Any, depth: int) -> Any:
        if depth > MAX_REDACTION_DEPTH:
            return REDACTED
        if isinstance(item, Mapping):
            return self.mapping(item, depth, stream=False, env_entry=True)
        if isinstance(item, str):
            return _mask_assignment(item, self)
        return self.masked(item, depth)


def _mask_assignment(entry: str, walker: _Walker) -> str:
    """``"NAME=value"`` or ``"Name: value"`` keeps its name; any other string is redacted."""
    for separator in ("=", ":"):
        name, found, rest = entry.partition(separator)
        if found and name.strip() and " " not in name.strip():
            return f"{walker.text(name)}{separator}{' ' if rest.startswith(' ') else ''}{REDACTED}"
    return REDACTED if entry else entry


def redact_json(value: Any, secrets: SecretValues | None = None) -> Any:
    """Return a redacted copy of the parsed JSON ``value`` (see the module docstring).

    ``secrets`` are exact values removed from every string as well. Never mutates ``value``.
    """
    return _Walker(secrets).value(value, 0)


def redact_json_with_stream(
    value: Any, stream_path: tuple[str, ...], secrets: SecretValues | None = None
) -> Any:
    """:func:`redact_json`, except that the subtree at ``stream_path`` (a chain of object keys
    from the root, such as ``("params", "update")``) is redacted in stream mode: every free-form
    stream field in it (:data:`STREAM_FIELDS`, at any depth) becomes the stream content marker,
    and a bare string there is replaced as a whole."""
    return _Walker(secrets).value(value, 0, path=stream_path)
