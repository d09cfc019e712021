"""The workspace flags ``run``, ``session new`` and ``submit`` share: ``--workspace``,
``--base`` and ``--require-clean`` (docs/workspaces.md)."""

from __future__ import annotations

import argparse
import os
from typing import Final

from baton.errors import UnsupportedExecutionSetting
from baton.runtime.workspaces.tracking import split_workspace_flag

#: The sentence every surface says about what a worktree is not.
NOT_A_SANDBOX: Final = (
    "a worktree isolates the files of concurrent runs from each other and from your "
    "checkout; it does not confine the agent process (it is not a sandbox)"
)


def workspace_ask(value: str | None) -> str | None:
    """``--workspace VALUE`` as a request carries it: ``worktree``, a directory made
    absolute here (a service or worker elsewhere resolves nothing relative), or None; a
    sandbox setting is refused (EXECUTION_SETTING_UNSUPPORTED)."""
    workspace, execution = split_workspace_flag(value)
    if execution != "danger-full-access":
        raise UnsupportedExecutionSetting(
            "workspace",
            execution,
            f"--workspace {execution} asks for a restricted or read-only workspace, which Baton "
            f"cannot provide: ACP attests no sandbox for the agent process ({NOT_A_SANDBOX})",
        )
    if workspace is None or workspace == "worktree":
        return workspace
    return os.path.realpath(workspace)


def add_workspace_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--workspace worktree|DIR|none``, ``--base REF`` and ``--require-clean``."""
    parser.add_argument(
        "--workspace",
        metavar="worktree|DIR|none",
        default=None,
        help="where the agent works: worktree (a new git worktree of the repository holding "
        "--cwd, on a branch of its own, compared after each turn), DIR (this directory), or "
        f"none (default: --cwd); {NOT_A_SANDBOX}. Restricted or read-only settings are refused",
    )
    parser.add_argument(
        "--base",
        metavar="REF",
        default=None,
        help="with --workspace worktree: the commit to start from (default: HEAD)",
    )
    parser.add_argument(
        "--require-clean",
        action="store_true",
        help="with --workspace worktree: refuse when the checkout has uncommitted or "
        "untracked changes",
    )
