"""The journal directory: every server instance's journal under ``<data>/journals/``."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Final

from baton.durable import files
from baton.durable.refs import JournalRef, validate_server_id
from baton.errors import JournalSyncFailed, StorageReadOnly, UsageError
from baton.journal import reader
from baton.journal.limits import DEFAULT_LIMITS, MAX_TAIL_RECORDS, JournalLimits
from baton.journal.reader import VerifyReport
from baton.journal.records import JournalRecord
from baton.journal.segments import PinnedFloor
from baton.journal.writer import Clock, ServerJournal, utc_now
from baton.redaction import SecretValues

#: The journal directory's name inside Baton's data directory.
JOURNALS_DIRNAME: Final = "journals"


class Journal:
    """All server journals in one private directory (created 0700 if missing).

    One process writes a given server's journal: :meth:`open_server` refuses a second writer
    for an id that is open here, and server instance ids are unique per process, so two Baton
    processes never share a writer. Reading (:meth:`read`, :meth:`records`, :meth:`verify`,
    :meth:`tail`) is safe at any time, also from other processes.
    """

    def __init__(self, directory: Path, *, read_only: bool = False) -> None:
        #: True when opened for reading only: nothing is created, and no writer can open.
        self.read_only = read_only
        if read_only:
            directory = directory.absolute()
            # A data directory without journals yet reads as one without servers.
            self._exists = os.path.lexists(directory)
            if self._exists:
                files.check_private_dir(directory, os.lstat(directory))
            self.directory = directory
        else:
            self._exists = True
            self.directory = files.ensure_private_dir(directory)
        self._open: dict[str, ServerJournal] = {}
        # Writers that closed with a sticky failure and unsynced records: their refs past the
        # synced sequence must never be cited as durable.
        self._failed: dict[str, ServerJournal] = {}
        self._pinned_floor: PinnedFloor | None = None

    @classmethod
    def in_data_dir(cls, data_dir: Path) -> Journal:
        """The journal of Baton's data directory ``data_dir`` (``<data_dir>/journals``); both
        directories are created 0700 if missing and checked."""
        return cls(files.ensure_private_dir(data_dir) / JOURNALS_DIRNAME)

    def set_pinned_floor(self, provider: PinnedFloor | None) -> None:
        """Tell retention which records must stay: ``provider(server_id)`` returns the oldest
        sequence of that server's journal that a stored record cites (the run store's
        ``pinned_sequence_floor``), or None. Writers open now and later ask it before they
        prune a segment. The store cannot be imported here (it is beside the journal), so the
        runtime plugs it in."""
        self._pinned_floor = provider

    def _floor(self, server_id: str) -> int | None:
        return None if self._pinned_floor is None else self._pinned_floor(server_id)

    @classmethod
    def open_read_only(cls, data_dir: Path) -> Journal:
        """The journal of an existing data directory, for reading only (``baton journal``,
        ``runs``, ``show``): creates nothing. Raises DataDirNotFound when ``data_dir`` does
        not exist, UnsafePath when it or its journal directory is not private and ours."""
        return cls(files.existing_private_dir(data_dir) / JOURNALS_DIRNAME, read_only=True)

    async def open_server(
        self,
        server_id: str,
        *,
        secrets: SecretValues | None = None,
        limits: JournalLimits = DEFAULT_LIMITS,
        clock: Clock = utc_now,
    ) -> ServerJournal:
        """Open (create or repair and continue) the journal of ``server_id`` for appending.

        ``secrets`` are the profile's sensitive values, redacted from every record.
        """
        validate_server_id(server_id)
        if self.read_only:
            raise StorageReadOnly(f"{self.directory}: the journal was opened read-only")
        if server_id in self._open:
            raise UsageError(f"the journal of {server_id} is already open for writing")
        journal = await ServerJournal.open(
            self.directory,
            server_id,
            secrets=secrets,
            limits=limits,
            clock=clock,
            on_close=self._forget,
            pinned_floor=self._floor,
        )
        self._open[server_id] = journal
        self._failed.pop(server_id, None)  # reopening synced what the failed writer left
        return journal

    def _forget(self, journal: ServerJournal) -> None:
        if self._open.get(journal.server_id) is journal:
            del self._open[journal.server_id]
        if journal.failure is not None and journal.synced_sequence < journal.last_sequence:
            self._failed[journal.server_id] = journal

    def writer(self, server_id: str) -> ServerJournal | None:
        """The open writer of ``server_id`` in this process, if any."""
        return self._open.get(server_id)

    async def flush_refs(self, refs: Iterable[JournalRef]) -> None:
        """Make every record in ``refs`` durable before the caller publishes a record citing
        them (the store's flush callback). Journals not open here were synced when closed;
        a sticky failure of an open one raises."""
        refs = list(refs)
        for ref in refs:
            failed = self._failed.get(ref.server)
            if (
                failed is not None
                and failed.failure is not None
                and ref.sequence > failed.synced_sequence
            ):
                raise JournalSyncFailed(
                    f"journal record {ref} was never synced: {failed.failure.message}"
                )
        for server in sorted({ref.server for ref in refs}):
            journal = self._open.get(server)
            if journal is not None:
                await journal.flush()

    async def close(self) -> None:
        """Close every writer this directory opened (each syncs first)."""
        for journal in list(self._open.values()):
            await journal.close()

    def servers(self) -> list[str]:
        """Server instance ids that have a journal here, sorted."""
        return reader.list_servers(self.directory) if self._exists else []

    def _write_pending(self, server_id: str) -> None:
        # An open writer may hold appended records in its write buffer: readers here see them.
        journal = self._open.get(server_id)
        if journal is not None:
            journal.write_pending()

    def read(self, ref: JournalRef) -> JournalRecord:
        """The record ``ref`` names, re-validated against every field (see
        :func:`baton.journal.reader.read_ref`)."""
        self._write_pending(ref.server)
        return reader.read_ref(self.directory, ref)

    def records(self, server_id: str) -> Iterator[JournalRecord]:
        """Every record of ``server_id`` in order, validated in place."""
        self._write_pending(server_id)
        return reader.iter_records(self.directory, server_id)

    def verify(self, server_id: str) -> VerifyReport:
        """Re-validate every record, hash and the sequence chain of ``server_id``."""
        self._write_pending(server_id)
        return reader.verify_server(self.directory, server_id)

    def verify_all(self) -> list[VerifyReport]:
        """:meth:`verify` every server here; raises at the first bad record."""
        return [self.verify(server) for server in self.servers()]

    def tail(self, server_id: str, count: int = MAX_TAIL_RECORDS) -> list[JournalRecord]:
        """The bounded diagnostic tail of ``server_id`` (see :func:`baton.journal.reader.tail`)."""
        self._write_pending(server_id)
        return reader.tail(self.directory, server_id, count)
