"""A session setup cut short by a shared store's outage (baton/runtime/sessions/setup.py): a
queued run's setup lets STORE_UNAVAILABLE through, so the fleet worker running it waits for
the store and starts the turn again (nothing was prompted); any other run's setup fails as
before, and other errors are setup failures either way."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from baton.errors import ConfigurationError, StoreUnavailable
from baton.runtime.sessions.setup import _raise_for_queued_run


def _ctx(queued_run_id: str | None) -> Any:
    return SimpleNamespace(request=SimpleNamespace(queued_run_id=queued_run_id))


def test_only_a_queued_runs_setup_lets_a_store_outage_through() -> None:
    outage = StoreUnavailable("the database cannot be reached")
    with pytest.raises(StoreUnavailable):
        _raise_for_queued_run(_ctx("run-1"), outage)
    _raise_for_queued_run(_ctx(None), outage)  # `baton run`: a setup failure, as before
    _raise_for_queued_run(_ctx("run-1"), ConfigurationError("bad cwd"))
