"""Opening Baton's store from a CLI verb: the data directory, the journal, and the passive
startup reconciliation every process performs before it reports anything (the views of what
it holds are :mod:`baton.views`)."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

from baton.journal import Journal
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
