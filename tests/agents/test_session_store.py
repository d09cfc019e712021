"""The scripted agent's session store: the bound on the files a state directory keeps."""

from __future__ import annotations

import os
from pathlib import Path

from baton.agents.scripted.session import MAX_KEPT_SESSION_FILES, SessionStore


def _files(directory: Path, count: int) -> None:
    for index in range(count):
        path = directory / f"old-{index:05d}.json"
        path.write_text("{}")
        os.utime(path, (1_000_000 + index, 1_000_000 + index))


def test_a_new_session_keeps_the_directory_within_its_bound(tmp_path: Path) -> None:
    _files(tmp_path, MAX_KEPT_SESSION_FILES + 5)
    SessionStore(tmp_path).new_id()
    kept = sorted(p.name for p in tmp_path.glob("*.json"))
    # Room for the new session: the least recently written go first.
    assert len(kept) == MAX_KEPT_SESSION_FILES - 1
    assert kept[0] == "old-00006.json"


def test_below_the_bound_nothing_is_deleted(tmp_path: Path) -> None:
    _files(tmp_path, MAX_KEPT_SESSION_FILES - 1)
    SessionStore(tmp_path).new_id()
    assert len(list(tmp_path.glob("*.json"))) == MAX_KEPT_SESSION_FILES - 1
    _files(tmp_path, MAX_KEPT_SESSION_FILES)  # one more than room for a new one
    SessionStore(tmp_path).new_id()
    assert len(list(tmp_path.glob("*.json"))) == MAX_KEPT_SESSION_FILES - 1
