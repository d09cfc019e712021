"""The recorded comparisons, read back from the store (any host's, on a shared store): a
run's last ``workspace_changes`` item, a session's, and their patch (``baton diff``, the
API's diff route).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from baton.errors import RecordNotFound, WorkspaceDiffIncomplete
from baton.runtime.workspaces.tracking import ITEM_KIND, patch_of
from baton.store import Store

#: Which comparison a patch is of: the turn's own changes, or everything since the base.
Side = Literal["turn", "base"]


@dataclass(frozen=True, slots=True)
class RecordedChanges:
    """A run's last ``workspace_changes`` item."""

    run_id: str
    seq: int
    content: dict[str, Any]


def run_changes(store: Store, run_id: str) -> RecordedChanges | None:
    """The run's last comparison (``recover`` may have added one after the turn's), or None."""
    found: RecordedChanges | None = None
    for item in store.list_items(run_id):
        if (
            item.kind == ITEM_KIND
            and isinstance(item.content, dict)
            and "error" not in item.content
        ):
            found = RecordedChanges(run_id, item.seq, item.content)
    return found


def session_changes(store: Store, name: str) -> RecordedChanges | None:
    """The last comparison of the session's runs, newest run first, or None: a Baton
    session's runs, or (a fleet session) the runs of the workspace its first turn made."""
    run_ids = (
        [run.id for run in store.conversation_runs(name)]
        if store.find_conversation(name) is not None
        else []
    )
    workspace = store.session_workspace(name)
    if workspace is not None:
        run_ids += [run.run_id for run in store.workspace_runs(workspace.name)]
    for run_id in sorted(set(run_ids), key=run_ids.index, reverse=True):
        found = run_changes(store, run_id)
        if found is not None:
            return found
    return None


def is_session(store: Store, name: str) -> bool:
    """Whether ``name`` is a Baton session or a fleet session holding a workspace."""
    return store.find_conversation(name) is not None or store.session_workspace(name) is not None


def recorded_patch(changes: RecordedChanges, side: Side, *, partial: bool = False) -> str:
    """The patch of ``changes`` in git's format. WORKSPACE_DIFF_INCOMPLETE when a bound cut
    it, unless ``partial`` (then the cut diffs end with their marker)."""
    text, whole = patch_of(changes.content, side)
    if not whole and not partial:
        name = changes.content.get("workspace")
        raise WorkspaceDiffIncomplete(
            f"the recorded diff of run {changes.run_id} was cut by a bound; "
            f"`baton workspace export {name} --patch FILE` writes the whole change from the "
            "workspace's files, or pass --partial",
            workspace=str(name) if name else None,
        )
    return text


def changes_for(store: Store, target: str) -> RecordedChanges:
    """The recorded changes of ``target``: a run id, else a session name. RecordNotFound
    when neither has any."""
    if store.find_run(target) is not None:
        found = run_changes(store, target)
    elif is_session(store, target):
        found = session_changes(store, target)
    else:
        raise RecordNotFound(f"no run or session named {target!r}")
    if found is None:
        raise RecordNotFound(f"{target} has no recorded workspace changes")
    return found
