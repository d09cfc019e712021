"""Workspaces (issue 31): a git worktree per run or session, and the independent comparison
of what a turn really changed in it (docs/workspaces.md).

- :mod:`~baton.runtime.workspaces.git`: every git command hardened against a hostile
  repository's config (no hooks, fsmonitor, filters, textconv, external diff, pager...).
- :mod:`~baton.runtime.workspaces.limits`: the comparison's bounds.
- :mod:`~baton.runtime.workspaces.worktrees`: checking the ask, creating and removing.
- :mod:`~baton.runtime.workspaces.objects`, :mod:`~baton.runtime.workspaces.snapshot`: a
  workspace's state as a git tree, fingerprinted without following a symlink out.
- :mod:`~baton.runtime.workspaces.changes`: two states compared, bounded, redacted.
- :mod:`~baton.runtime.workspaces.reported`: the changes matched with the agent's reports.
- :mod:`~baton.runtime.workspaces.tracking`: the runtime's side (before and after a turn).
- :mod:`~baton.runtime.workspaces.lifecycle`: list, show, remove, collect, export.

A worktree isolates the files of concurrent runs from each other and from the user's
checkout; it does not confine the agent process (it is not a sandbox).
"""
