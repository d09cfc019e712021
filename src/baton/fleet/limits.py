"""The fleet's bounds and default timings, importable without the job engine (the CLI's
parser reads them; procrastinate and psycopg load only when a worker or submitter runs)."""

from __future__ import annotations

from typing import Final

#: Seconds between two heartbeats of a worker (into the store and the engine).
HEARTBEAT_SECONDS: Final = 2.0
#: Seconds without a heartbeat after which a worker is declared LOST and its turns settled.
#: Several heartbeats long, so a busy moment or a short database restart is not a death;
#: short enough that a dead host's turns are settled promptly.
LEASE_SECONDS: Final = 15.0
#: Seconds between two passes settling lost workers.
SETTLE_SECONDS: Final = 2.0
#: Most turns one worker runs at once, whatever --concurrency asks (each is an agent process
#: or a session on one, with its pipes and buffers).
MAX_CONCURRENCY: Final = 64
#: After SIGTERM, seconds a worker's running turns have to finish before they are
#: interrupted and settled (a second signal does it at once). Bounds how long a stopping
#: worker holds its host; long enough for most turns to end on their own.
SHUTDOWN_GRACE_SECONDS: Final = 60.0
