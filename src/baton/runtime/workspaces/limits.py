"""The bounds of a workspace comparison, each with what it protects and what happens past it.

Every bound past which something is left out leaves a visible marker in the recorded
``workspace_changes`` item (``truncated`` names the bound, a file's ``diffTruncated`` or
``notHashed`` says which file): a comparison is never silently cut.

Memory arithmetic: a comparison holds at most :data:`MAX_FILES_COMPARED` stat records
(about 200 bytes each: 20 MB at the bound) and at most :data:`MAX_DIFF_BYTES_PER_TURN` of
diff text, plus one git output read bounded by :data:`MAX_GIT_OUTPUT_BYTES`.
"""

from __future__ import annotations

from typing import Final

#: Files (tracked and untracked, not ignored) fingerprinted per snapshot. Protects memory and
#: the time of a turn's end on a huge checkout; past it the rest are not compared and the
#: item's ``truncated`` lists ``files`` (the count seen is in ``filesSeen``).
MAX_FILES_COMPARED: Final = 100_000

#: Bytes of file content hashed per snapshot. Protects the turn's end from re-reading a
#: checkout of many gigabytes; past it the remaining files are compared by size, mode and
#: modification time only and listed ``notHashed`` (``truncated`` lists ``hashed_bytes``).
MAX_HASHED_BYTES: Final = 512 * 1024 * 1024

#: Bytes of one file hashed at most. A larger file is compared by size, mode and modification
#: time only (``notHashed``) and its diff is a marker.
MAX_HASHED_FILE_BYTES: Final = 32 * 1024 * 1024

#: Bytes of unified diff kept per file. Past it the file's diff is cut at a line boundary
#: and marked ``diffTruncated`` (its +/- counts stay whole).
MAX_DIFF_BYTES_PER_FILE: Final = 256 * 1024

#: Bytes of unified diff kept per comparison (all files). Past it later files keep their
#: counts but no diff (``diffTruncated``; ``truncated`` lists ``diff_bytes``).
MAX_DIFF_BYTES_PER_TURN: Final = 4 * 1024 * 1024

#: Changed files listed per comparison. Past it the rest are counted (``changesOmitted``)
#: and ``truncated`` lists ``changes``.
MAX_CHANGES_LISTED: Final = 5_000

#: Bytes read from one git command's output (the file list, the raw diff, a patch). Protects
#: memory from a command whose output is unbounded; a longer output fails the step with
#: WORKSPACE_GIT_FAILED rather than being parsed cut.
MAX_GIT_OUTPUT_BYTES: Final = 256 * 1024 * 1024

#: Seconds one git command may run. Protects a turn's end from a git that hangs (a lock
#: held, a network filesystem); past it the command is killed and the step fails.
GIT_COMMAND_TIMEOUT_SECONDS: Final = 300.0

#: Seconds within which a file's modification time makes its cached fingerprint untrusted
#: (git's "racy" rule): a write in the same clock tick as the snapshot may not change the
#: stat, so such a file is always hashed again.
RACY_WINDOW_SECONDS: Final = 2.0
