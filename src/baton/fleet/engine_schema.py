"""The job engine's schema in the store's database: installed once, migrated when
procrastinate is upgraded.

procrastinate ships its full schema (for a new database) and one SQL migration per change,
named after the release that brought it (``03.01.00_01_pre_add_heartbeat.sql``), and leaves
applying them to the application. Baton records which procrastinate release the schema is at
(``baton_engine_schema``, one row) and, under one advisory lock so hosts starting together
do it once, installs the schema on a new database or applies, in one transaction, every
migration newer than the recorded release up to the installed one. A database whose schema
is newer than this host's procrastinate, or whose release was never recorded (installed by
a Baton before this table), is refused with a stable code naming what to do.

All of a release's migrations (procrastinate's ``pre`` and ``post`` steps) are applied
together: a worker still running an older procrastinate on the migrated database should be
upgraded too (docs/fleet.md, "Upgrading").
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib import metadata, resources
from typing import Final

import psycopg

from baton.errors import (
    EngineSchemaTooNew,
    EngineSchemaUnknown,
    InvalidArgument,
    StoreUnavailable,
)
from baton.store.location import display_url

LOG = logging.getLogger("baton.fleet")

#: The advisory lock held while procrastinate's schema is installed or migrated, so two hosts
#: starting together do it once (the ASCII of "baton-jq").
SCHEMA_LOCK_KEY: Final = 0x6261746F6E2D6A71
#: The table recording the procrastinate release the engine's schema is at (one row).
SCHEMA_TABLE: Final = "baton_engine_schema"
#: The package whose migrations these are.
MIGRATIONS_PACKAGE: Final = "procrastinate.sql.migrations"
#: The option of `baton worker` that records the release of a schema installed before
#: SCHEMA_TABLE existed (named by ENGINE_SCHEMA_UNKNOWN).
FROM_OPTION: Final = "--engine-schema-from"

_MIGRATION_NAME: Final = re.compile(r"^(\d+)\.(\d+)\.(\d+)_(\d+)_.*\.sql$")
_RELEASE: Final = re.compile(r"^(\d+)\.(\d+)\.(\d+)")

Release = tuple[int, int, int]


@dataclass(frozen=True)
class Migration:
    """One of procrastinate's schema migrations."""

    release: Release
    step: int
    name: str

    def sql(self) -> str:
        """The migration's statements."""
        return resources.files(MIGRATIONS_PACKAGE).joinpath(self.name).read_text("utf-8")


def parse_release(text: str) -> Release:
    """``3.10.0`` (or ``3.11.0rc1``) as ``(3, 10, 0)``; ValueError when it is not one."""
    match = _RELEASE.match(text.strip())
    if match is None:
        raise ValueError(f"not a procrastinate release: {text!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def release_text(release: Release) -> str:
    """``(3, 10, 0)`` as ``3.10.0``."""
    return ".".join(str(part) for part in release)


def installed_release() -> Release:
    """The release of the procrastinate this process imports."""
    return parse_release(metadata.version("procrastinate"))


def migrations() -> list[Migration]:
    """Every migration procrastinate ships, in the order they apply."""
    found = []
    for entry in resources.files(MIGRATIONS_PACKAGE).iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match is not None:
            major, minor, patch, step = (int(part) for part in match.groups())
            found.append(Migration((major, minor, patch), step, entry.name))
    return sorted(found, key=lambda m: (m.release, m.step))


def pending(recorded: Release, target: Release) -> list[Migration]:
    """The migrations that take a schema at ``recorded`` to ``target``."""
    return [m for m in migrations() if recorded < m.release <= target]


def full_schema() -> str:
    """procrastinate's whole schema for a new database."""
    return resources.files("procrastinate.sql").joinpath("schema.sql").read_text("utf-8")


def ensure_engine_schema(url: str, *, assume_from: str | None = None) -> Release | None:
    """Install or migrate procrastinate's schema in the store's database (see the module
    docstring); the release it was migrated from, or None when nothing was migrated.

    ``assume_from``: the release that installed a schema this table never recorded
    (``baton worker --engine-schema-from``). Raises EngineSchemaUnknown, EngineSchemaTooNew,
    and StoreUnavailable when the server is unreachable."""
    target = installed_release()
    try:
        assumed = None if assume_from is None else parse_release(assume_from)
    except ValueError as exc:
        raise InvalidArgument(f"{FROM_OPTION}: {exc} (a release such as 3.1.0)") from exc
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_advisory_lock(%s)", (SCHEMA_LOCK_KEY,))
            try:
                return _ensure_locked(conn, url, target, assumed)
            finally:
                conn.execute("SELECT pg_advisory_unlock(%s)", (SCHEMA_LOCK_KEY,))
    except psycopg.OperationalError as exc:
        raise StoreUnavailable(
            f"{display_url(url)}: the database cannot be reached ({exc})"
        ) from exc


def _ensure_locked(
    conn: psycopg.Connection[tuple[object, ...]],
    url: str,
    target: Release,
    assumed: Release | None,
) -> Release | None:
    conn.execute(
        f"CREATE TABLE IF NOT EXISTS {SCHEMA_TABLE} ("
        " id integer PRIMARY KEY CHECK (id = 1),"
        " release text NOT NULL,"
        " migrated_at timestamptz NOT NULL DEFAULT now())"
    )
    row = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
    installed = row is not None and row[0] is not None
    found = conn.execute(f"SELECT release FROM {SCHEMA_TABLE} WHERE id = 1").fetchone()
    recorded = None if found is None else parse_release(str(found[0]))
    if not installed:
        with conn.transaction():
            conn.execute(full_schema())
            _record(conn, target)
        return None
    if recorded is None:
        recorded = assumed
    if recorded is None:
        raise EngineSchemaUnknown(
            f"{display_url(url)}: the job engine's schema was installed by a Baton that did not "
            "record procrastinate's release; start one worker with "
            f"`baton worker {FROM_OPTION} RELEASE` (the procrastinate release that installed "
            f"it; this host has {release_text(target)}) to migrate it from there"
        )
    if recorded > target:
        raise EngineSchemaTooNew(
            f"{display_url(url)}: the job engine's schema is at procrastinate "
            f"{release_text(recorded)}, newer than this host's {release_text(target)}; "
            f"install procrastinate>={release_text(recorded)} here (pip install -U "
            "'baton-acp[fleet]')"
        )
    if recorded == target:
        if found is None:
            _record(conn, target)
        return None
    steps = pending(recorded, target)
    with conn.transaction():
        for step in steps:
            conn.execute(step.sql())
        _record(conn, target)
    LOG.warning(
        "migrated the job engine's schema from procrastinate %s to %s (%d migrations)",
        release_text(recorded),
        release_text(target),
        len(steps),
    )
    return recorded


def _record(conn: psycopg.Connection[tuple[object, ...]], release: Release) -> None:
    conn.execute(
        f"INSERT INTO {SCHEMA_TABLE} (id, release) VALUES (1, %s) "
        "ON CONFLICT (id) DO UPDATE SET release = excluded.release, migrated_at = now()",
        (release_text(release),),
    )
