"""Every bound the service keeps, each with what it protects (docs/api.md lists them)."""

from __future__ import annotations

from typing import Final

from baton.store.database import MAX_LIST_ROWS as STORE_LIST_ROWS

#: Largest request body accepted (1 MiB): a prompt and its settings. Protects the service's
#: memory from a client that streams without end; larger bodies are API_BODY_TOO_LARGE (413).
MAX_BODY_BYTES: Final = 1024 * 1024

#: Events one SSE subscriber may have queued and not yet written. A consumer that falls this
#: far behind is dropped with a ``dropped`` marker instead of slowing the run (the feed never
#: waits for a subscriber); it can reconnect with Last-Event-ID. As many as the feed keeps
#: (:data:`FEED_EVENTS`): one read of the agent's output can publish thousands of events before
#: any writer runs, so a smaller count dropped even a client that keeps up; the byte bound
#: below is what bounds a subscriber's memory, and a client dropped at this count can still
#: resume from the feed's memory.
SUBSCRIBER_QUEUE_EVENTS: Final = 8192
#: Bytes of encoded events one SSE subscriber may have queued (whichever bound is hit first).
SUBSCRIBER_QUEUE_BYTES: Final = 4 * 1024 * 1024

#: Events one run's feed keeps in memory for Last-Event-ID resume (its newest). Runs publish
#: coalesced events (75 ms / 64 KiB of text per event), so this covers long turns; older ids
#: are served from the store instead.
FEED_EVENTS: Final = 8192
#: Bytes of encoded events one run's feed keeps (its newest), whichever bound is hit first.
FEED_BYTES: Final = 8 * 1024 * 1024
#: Finished runs whose feeds stay in memory (the newest); an older run resumes from the store.
FINISHED_FEEDS: Final = 64

#: Seconds between SSE comment lines on a quiet stream, so a proxy or a client notices a dead
#: connection and a live one is not closed for idleness.
SSE_KEEPALIVE_SECONDS: Final = 15.0

#: Seconds a permission request waits for an answer through the API when its turn has no
#: budget; then it is answered cancelled as "no user available" (with a budget, the budget
#: bounds the wait, exactly as in the CLI). Protects a turn from waiting forever on a page
#: nobody looks at.
DEFAULT_PERMISSION_WAIT_SECONDS: Final = 600.0

#: Seconds a graceful shutdown (SIGTERM, SIGINT) lets running turns finish before it cancels
#: them (session/cancel, then the interrupt deadline); a second signal cancels at once.
DEFAULT_SHUTDOWN_GRACE_SECONDS: Final = 10.0

#: Most runs one listing returns (``limit`` above it is clamped): the store's own bound, so
#: `baton runs` through the service lists what it lists in-process.
MAX_LIST_ROWS: Final = STORE_LIST_ROWS
#: Most journal records one page returns.
MAX_JOURNAL_PAGE: Final = 500
#: Pending permission requests held at once, service-wide; past it a request is answered
#: cancelled at once (an agent that floods requests cannot grow the service's memory).
MAX_PENDING_PERMISSIONS: Final = 256

#: Seconds an elicitation waits for an answer through the API; then it is declined as "no user
#: available" (``no_user``, chosen by Baton: never accepted on anyone's behalf). The turn's own
#: budget still applies (its expiry withdraws the question). Protects a turn from waiting
#: forever on a page nobody looks at; as long as a permission's wait, since a person filling in
#: a form needs at least as long.
DEFAULT_ELICITATION_WAIT_SECONDS: Final = 600.0
#: Pending elicitations held at once, service-wide; past it a question is declined at once
#: (``no_user``): an agent that floods questions cannot grow the service's memory.
MAX_PENDING_ELICITATIONS: Final = 256

# The idle bound of a service started in the background (DEFAULT_IDLE_STOP_SECONDS) lives in
# runtime_file: the CLI that starts the service reads it too.
#: Seconds between two looks of the idle watch: how late past its bound an idle service stops.
IDLE_CHECK_SECONDS: Final = 1.0
