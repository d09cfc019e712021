"""Opening Baton's store from a CLI verb: the data directory, the journal, and the passive
startup reconciliation every process performs before it reports anything; run ids by unique
prefix; a run's record as the JSON contract shows it."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from datetime import datetime
from typing import Any, Final

from baton.errors import RecordNotFound, UsageError
from baton.journal import Journal, JournalRef
from baton.journal.directory import JOURNALS_DIRNAME
from baton.runtime.lanes.reconcile import reconcile
from baton.store import (
    STORE_FILENAME,
    Store,
    existing_data_dir,
    prepare_data_dir,
    resolve_data_dir,
)
from baton.store.location import STORE_ENV, resolve_store
from baton.store.models import Run
from baton.store.owner import owner_host

#: Candidates named when a run id prefix is ambiguous.
MAX_PREFIX_CANDIDATES: Final = 10
#: Runs searched for a prefix (the store lists at most this many, newest first).
PREFIX_SEARCH_ROWS: Final = 100_000
#: The prefix every run id starts with; a prefix may leave it out (``3f2a`` = ``run-3f2a``).
RUN_ID_PREFIX: Final = "run-"


STORE_HELP: Final = (
    "the run store: a postgresql:// URL shared by hosts (or BATON_STORE, or the config "
    "file's [store] url); default: the data directory's SQLite file"
)


def add_store_option(parser: Any) -> None:
    """Add ``--store URL`` (docs/fleet.md) to a verb's parser."""
    parser.add_argument("--store", metavar="URL", help=STORE_HELP)


def store_url(flag: str | None, config_file: str | None = None) -> str | None:
    """The PostgreSQL store chosen by ``--store``, ``BATON_STORE`` or the config file's
    ``[store] url``, or None for the data directory's SQLite store."""
    config_url: str | None = None
    if not flag and not os.environ.get(STORE_ENV):
        from baton.runtime.agents.config_file import load_config

        config_url = load_config(config_file).store_url
    return resolve_store(flag, os.environ, config_url).url


@contextmanager
def open_store(
    flag: str | None, *, read_only: bool = False, store_flag: str | None = None
) -> Iterator[tuple[Store, Journal]]:
    """The store and journal of the data directory (``--data-dir`` > ``BATON_HOME`` >
    platform default), reconciled: stale runs of a dead Baton become RECOVERY_REQUIRED.
    ``store_flag`` (``--store``) names a shared PostgreSQL store instead of the data directory's
    (see :func:`store_url`); the journal is this host's either way.

    ``read_only`` (``runs``, ``show``) creates nothing: a missing data directory is
    DATA_DIR_NOT_FOUND, one without a store reads as empty, and one this user cannot write
    is read as it is, without the reconciliation (which writes)."""
    url = store_url(store_flag)
    if url is not None:
        with _open_shared(flag, url, read_only=read_only) as opened:
            yield opened
        return
    if read_only:
        path = existing_data_dir(resolve_data_dir(flag))
        if not (path / STORE_FILENAME).exists() or not os.access(path, os.W_OK):
            journal = Journal.open_read_only(path)
            with Store.open_read_only(path) as store:
                yield store, journal
            return
    prepared = prepare_data_dir(resolve_data_dir(flag))
    if prepared.notice is not None:
        print(f"baton: {prepared.notice}", file=sys.stderr)
    path = prepared.path
    journal = Journal.in_data_dir(path)
    store = Store.open(path, flush=journal.flush_refs)
    try:
        asyncio.run(reconcile(store))
        yield store, journal
    finally:
        store.close()


@contextmanager
def _open_shared(flag: str | None, url: str, *, read_only: bool) -> Iterator[tuple[Store, Journal]]:
    """A shared store and this host's journal (which may not exist: a host that only reads)."""
    path = resolve_data_dir(flag)
    if read_only:
        journal = Journal(path / JOURNALS_DIRNAME, read_only=True)
        with Store(url, read_only=True) as store:
            yield store, journal
        return
    prepared = prepare_data_dir(path)
    if prepared.notice is not None:
        print(f"baton: {prepared.notice}", file=sys.stderr)
    journal = Journal.in_data_dir(prepared.path)
    with Store(url, flush=journal.flush_refs) as store:
        asyncio.run(reconcile(store))
        yield store, journal


class RunNotFound(RecordNotFound):
    """No run has this id or starts with this prefix."""

    code = "RUN_NOT_FOUND"


class AmbiguousRunId(UsageError):
    """A run id prefix matches more than one run; the message lists the candidates."""

    code = "RUN_ID_AMBIGUOUS"


def resolve_run(store: Store, text: str) -> Run:
    """The run ``text`` names: its full id, or a prefix of exactly one run's id (with or
    without ``run-``). :class:`RecordNotFound` when none matches, :class:`AmbiguousRunId`
    listing the candidates when several do."""
    exact = store.find_run(text)
    if exact is not None:
        return exact
    prefixes = {text} if text.startswith(RUN_ID_PREFIX) else {text, RUN_ID_PREFIX + text}
    matches = [
        run
        for run in store.list_runs(limit=PREFIX_SEARCH_ROWS)
        if any(run.id.startswith(p) for p in prefixes)
    ]
    if not matches:
        raise RunNotFound(f"no run {text!r}; `baton runs` lists them")
    if len(matches) > 1:
        shown = ", ".join(run.id for run in matches[:MAX_PREFIX_CANDIDATES])
        more = len(matches) - MAX_PREFIX_CANDIDATES
        raise AmbiguousRunId(
            f"{text!r} is the start of {len(matches)} run ids: {shown}"
            + (f" and {more} more" if more > 0 else "")
            + "; give more of the id"
        )
    return matches[0]


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


def duration_seconds(run: Run) -> float | None:
    """Seconds from the run's creation to its end (None while it has not ended)."""
    if run.ended_at is None:
        return None
    try:
        start = datetime.fromisoformat(run.created_at.replace("Z", "+00:00"))
        end = datetime.fromisoformat(run.ended_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (end - start).total_seconds())


def run_context(store: Store, run: Run) -> dict[str, Any]:
    """What the run's own row does not say: its agent profile, its cwd, its duration, and
    the host of the Baton process that owns it (the host whose disk holds its journal;
    None for a run recorded before hosts were: docs/fleet.md)."""
    server = store.find_server_instance(run.server_instance_id) if run.server_instance_id else None
    session = store.find_session(run.session_id) if run.session_id else None
    return {
        # The run's id under the name every other object uses (``id`` is kept, deprecated,
        # until the next schema version: docs/events.md).
        "run_id": run.id,
        "agent": server.profile if server is not None else (session.profile if session else None),
        "cwd": session.cwd if session is not None else None,
        "duration_seconds": duration_seconds(run),
        "host": owner_host(run.owner),
    }
