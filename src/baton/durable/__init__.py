"""What Baton's durable records share, below the journal and the run store (layer 2.5).

- :mod:`baton.durable.files`: owner-only files and directories, opened through directory
  descriptors without following symlinks, durable syncs, and the classification of storage
  failures (a full disk, a read-only file system) into stable error codes;
- :mod:`baton.durable.refs`: :class:`JournalRef`, the reference the journal returns and the
  store keeps as evidence;
- :mod:`baton.durable.timestamps`: the one timestamp format of both.

The journal and the store import this package; neither imports the other.
"""

from baton.durable.refs import JournalRef, make_ref, validate_server_id
from baton.durable.timestamps import format_timestamp

__all__ = ["JournalRef", "format_timestamp", "make_ref", "validate_server_id"]
