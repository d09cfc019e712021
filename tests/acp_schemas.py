"""The pinned official ACP schemas every test validates against.

Two stable v1 schemas are pinned side by side: release 1.21.0 (``fixtures/schema/schema.json``)
and the current stable schema of ``@agentclientprotocol/sdk@2.4.0``
(``fixtures/schema/sdk-2.4.0/schema.json``). Everything Baton sends must validate against both:
an agent built on either accepts it. The SDK's ``schema.unstable.json`` is pinned too, for the
one unstable field Baton sends behind its capability gate (``systemPrompt``).

This module is importable from every test directory because ``tests/conftest.py`` puts
``tests/`` on ``sys.path``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

import jsonschema

SCHEMA_DIR: Final = Path(__file__).parent / "fixtures" / "schema"

#: Stable schema release -> its file. Outbound messages validate against every one of them.
STABLE_SCHEMAS: Final = {
    "1.21.0": SCHEMA_DIR / "schema.json",
    "sdk-2.4.0": SCHEMA_DIR / "sdk-2.4.0" / "schema.json",
}

#: The SDK 2.4.0 unstable schema (a superset of its stable one).
UNSTABLE_SCHEMA: Final = SCHEMA_DIR / "sdk-2.4.0" / "schema.unstable.json"

#: The SDK 2.4.0 ACP v2 draft schema (stable part): everything Baton sends a v2 agent, and
#: everything the scripted agent sends in v2, validates against it.
V2_SCHEMA: Final = SCHEMA_DIR / "sdk-2.4.0" / "v2" / "schema.json"

#: The SDK 2.4.0 v2 draft's unstable schema (a superset of its stable one): the end-of-turn
#: ``usage`` on an ``idle`` state (``IdleStateUpdate.usage``) is only defined here.
V2_UNSTABLE_SCHEMA: Final = SCHEMA_DIR / "sdk-2.4.0" / "v2" / "schema.unstable.json"

#: The release key of the v2 draft schema.
V2: Final = "v2"

#: The release key of the v2 draft's unstable schema.
V2_UNSTABLE: Final = "v2-unstable"

#: The newest stable release, for inbound shapes only it defines (notices, compaction).
CURRENT: Final = "sdk-2.4.0"

_DOCUMENTS: dict[str, dict[str, Any]] = {}
_VALIDATORS: dict[tuple[str, str], jsonschema.Draft202012Validator] = {}


def _path(release: str) -> Path:
    if release == V2:
        return V2_SCHEMA
    if release == V2_UNSTABLE:
        return V2_UNSTABLE_SCHEMA
    return UNSTABLE_SCHEMA if release == "unstable" else STABLE_SCHEMAS[release]


def document(release: str) -> dict[str, Any]:
    """The parsed schema of ``release`` (a key of :data:`STABLE_SCHEMAS`, ``unstable``, ``v2``
    or ``v2-unstable``)."""
    doc = _DOCUMENTS.get(release)
    if doc is None:
        doc = _DOCUMENTS[release] = json.loads(_path(release).read_text())
    return doc


def has_definition(release: str, definition: str) -> bool:
    """Whether ``release`` defines ``definition``."""
    return definition in document(release)["$defs"]


def validate_in(release: str, definition: str, instance: Any) -> None:
    """Validate ``instance`` against ``$defs/definition`` of one schema release."""
    key = (release, definition)
    validator = _VALIDATORS.get(key)
    if validator is None:
        doc = document(release)
        schema = {"$schema": doc["$schema"], "$defs": doc["$defs"], "$ref": f"#/$defs/{definition}"}
        validator = _VALIDATORS[key] = jsonschema.Draft202012Validator(schema)
    validator.validate(instance)


def validate_stable(definition: str, instance: Any) -> None:
    """Validate ``instance`` against ``definition`` in every pinned stable schema that defines
    it (a definition only the newer schema has, such as ``Notice``, is checked there)."""
    checked = False
    for release in STABLE_SCHEMAS:
        if has_definition(release, definition):
            validate_in(release, definition, instance)
            checked = True
    if not checked:
        raise KeyError(f"no pinned stable schema defines {definition!r}")


def validate_v2(definition: str, instance: Any) -> None:
    """Validate ``instance`` against ``definition`` of the pinned v2 draft schema."""
    validate_in(V2, definition, instance)
