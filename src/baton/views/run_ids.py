"""A run named the way people name it: its full id, or a unique prefix of it (with or
without ``run-``), as every verb and route that takes a run accepts."""

from __future__ import annotations

from typing import Final

from baton.errors import AmbiguousRunId, RunNotFound
from baton.store import Store
from baton.store.models import Run

#: Candidates named when a run id prefix is ambiguous.
MAX_PREFIX_CANDIDATES: Final = 10
#: Runs searched for a prefix (the store lists at most this many, newest first).
PREFIX_SEARCH_ROWS: Final = 100_000
#: The prefix every run id starts with; a prefix may leave it out (``3f2a`` = ``run-3f2a``).
RUN_ID_PREFIX: Final = "run-"


def resolve_run(store: Store, text: str) -> Run:
    """The run ``text`` names: its full id, or a prefix of exactly one run's id (with or
    without ``run-``). :class:`~baton.errors.RunNotFound` when none matches,
    :class:`~baton.errors.AmbiguousRunId` listing the candidates when several do."""
    exact = store.find_run(text)
    if exact is not None:
        return exact
    prefixes = {text} if text.startswith(RUN_ID_PREFIX) else {text, RUN_ID_PREFIX + text}
    # The prefix is matched in SQL (issue 34): no listing of every run to filter here.
    matches = store.list_runs(id_prefixes=sorted(prefixes), limit=PREFIX_SEARCH_ROWS)
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
