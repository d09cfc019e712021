"""The run store: Baton's own records in one SQLite database (stdlib sqlite3, WAL mode).

:class:`Store` is one facade over a mixin per table group, each in its own module:
opening, pragmas, migrations and the shared helpers (:mod:`baton.store.database`, whose
docstring states the durability, compare-and-set, redaction, read-only and thread rules),
server instances (:mod:`~baton.store.servers`), sessions (:mod:`~baton.store.sessions`), runs
and their status table (:mod:`~baton.store.runs`, :mod:`~baton.store.run_status`), items
(:mod:`~baton.store.items`), interactions and observations
(:mod:`~baton.store.interactions`), readiness (:mod:`~baton.store.readiness`), conversations (named sessions, with their status table:
:mod:`~baton.store.conversations`, :mod:`~baton.store.conversation_status`), the queue's
submissions, workers and pinned sessions (:mod:`~baton.store.fleet`), workspaces and their runs'
snapshots (:mod:`~baton.store.workspaces`) and the journal
references the store cites (:mod:`~baton.store.citations`). Batches and their cells
(:mod:`~baton.store.batches`, with their state tables: :mod:`~baton.store.batch_states`) are
read and written through ``BatchRecords(store)``, imported only where batches are used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

from baton.redaction import SecretValues
from baton.store.citations import CitationChecks
from baton.store.conversations import ConversationRecords
from baton.store.database import MAX_DIAGNOSTIC_CHARS as MAX_DIAGNOSTIC_CHARS
from baton.store.database import Clock, FlushRefs, new_id, utc_now
from baton.store.datadir import STORE_FILENAME, existing_data_dir
from baton.store.fleet import FleetRecords
from baton.store.interactions import InteractionRecords
from baton.store.items import ItemRecords
from baton.store.readiness import ReadinessRecords
from baton.store.runs import RunRecords
from baton.store.servers import ServerRecords
from baton.store.sessions import SessionRecords
from baton.store.workspaces import WorkspaceRecords

__all__ = ["MAX_DIAGNOSTIC_CHARS", "FlushRefs", "Store", "new_id"]


class Store(
    ServerRecords,
    SessionRecords,
    RunRecords,
    ItemRecords,
    InteractionRecords,
    ReadinessRecords,
    CitationChecks,
    ConversationRecords,
    FleetRecords,
    WorkspaceRecords,
):
    """Baton's run store. Open with :meth:`open` (a data directory), :meth:`open_read_only`
    or the constructor (a path).

    ``flush`` is the journal flush callback (``Journal.flush_refs``): required for the async
    methods that cite journal references. ``secrets`` adds exact values to the defensive
    redaction of every text column. ``read_only`` opens without creating or migrating
    anything; every write then raises StorageReadOnly.
    """

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        flush: FlushRefs | None = None,
        secrets: SecretValues | None = None,
        clock: Clock = utc_now,
        read_only: bool = False,
    ) -> Store:
        """The store of Baton's data directory (``<data_dir>/baton.sqlite3``)."""
        return cls(
            data_dir / STORE_FILENAME,
            flush=flush,
            secrets=secrets,
            clock=clock,
            read_only=read_only,
        )

    @classmethod
    def open_read_only(cls, data_dir: Path) -> Store:
        """The store of an existing data directory, for reading only: nothing is created (no
        directory, database, WAL file or migration). A data directory without a store file
        reads as an empty store. Raises DataDirNotFound when ``data_dir`` does not exist and
        UnsafePath when it is not a private directory of this user."""
        return cls.open(existing_data_dir(data_dir), read_only=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
