"""`baton compare --agent A --agent B … PROMPT`: one prompt across several agents, each in
its own workspace (a worktree when the directory is in a git repository), their outcomes side
by side. It is a one-task batch (docs/batches.md): `baton batch show|export ID` read it again,
and `baton diff RUN` prints each agent's changes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from typing import Any, Final

from baton.cli import exit_codes
from baton.cli.commands.batch import follow, make_runtime
from baton.cli.options import add_record_options
from baton.cli.terminal import visible
from baton.runtime.permissions.policies import POLICIES

EXAMPLES: Final = """examples:
  baton compare --agent claude --agent codex "Fix the failing test"
  baton compare --agent-command "baton agent scripted" --agent claude "echo hi" --json
"""

#: The rows of the side-by-side view: (label, result field).
SIDE_BY_SIDE: Final = (
    ("state", "state"),
    ("stop reason", "stopReason"),
    ("exit code", "exitCode"),
    ("wall time (ms)", "wallMs"),
    ("first output (ms)", "firstOutputMs"),
    ("tool calls", "toolCalls"),
    ("permissions +", "permissionsGranted"),
    ("permissions -", "permissionsDenied"),
    ("tokens", "tokens"),
    ("cost", "cost"),
    ("files changed", "filesChanged"),
    ("lines +", "linesAdded"),
    ("lines -", "linesRemoved"),
    ("unreported", "unreportedChanges"),
    ("run", "runId"),
    ("diff", "diff"),
)
#: Width of one agent's column in the side-by-side view.
COLUMN_WIDTH: Final = 28


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``compare`` verb."""
    parser = subparsers.add_parser(
        "compare",
        help="run one prompt across several agents, each in its own workspace, side by side",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", metavar="PROMPT")
    parser.add_argument(
        "--agent", action="append", default=[], metavar="PROFILE", help="a profile (repeatable)"
    )
    parser.add_argument(
        "--agent-command",
        action="append",
        default=[],
        metavar='"CMD ARGS"',
        help="a custom ACP agent command (repeatable)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="the directory (default: .)")
    parser.add_argument(
        "--workspace",
        choices=("worktree", "none"),
        default=None,
        help="worktree (default in a git repository) or none (the directory as it is)",
    )
    parser.add_argument("--base", metavar="REF", help="the commit each worktree starts from")
    parser.add_argument("--policy", choices=POLICIES, default="ask")
    parser.add_argument("--allow-unattended", action="store_true")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS")
    parser.add_argument("--repeats", type=int, default=1, metavar="N")
    parser.add_argument("--jobs", "-j", type=int, default=None, metavar="N")
    parser.add_argument("--max-cost", type=float, default=None, metavar="AMOUNT")
    add_record_options(
        parser, json_help="one JSON line per agent's run, then a summary", store=True
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    """Run the comparison."""
    from baton.batches.spec import parse_document

    agents: list[dict[str, Any]] = [
        {"id": _agent_id(profile, i), "profile": profile} for i, profile in enumerate(args.agent)
    ]
    agents += [
        {"id": f"command-{i + 1}", "command": command}
        for i, command in enumerate(args.agent_command)
    ]
    if len(agents) < 1:
        print("baton compare: name at least one --agent or --agent-command", file=sys.stderr)
        return exit_codes.USAGE
    cwd = os.path.realpath(args.cwd or os.getcwd())
    workspace = args.workspace or ("worktree" if _in_git(cwd) else "none")
    task: dict[str, Any] = {"id": "compare", "prompt": args.prompt, "workspace": workspace}
    task["repo" if workspace == "worktree" else "cwd"] = cwd
    if args.base:
        task["base"] = args.base
    spec = parse_document(
        {
            "batch": {"name": f"compare: {args.prompt[:60]}"},
            "run": {
                "policy": args.policy,
                "allow_unattended": args.allow_unattended,
                **({"timeout": args.timeout} if args.timeout else {}),
            },
            "matrix": {"repeats": args.repeats},
            "tasks": [task],
            "agents": agents,
        },
        source="compare",
        base_dir=None,
    )
    args.jobs = args.jobs or len(agents) * args.repeats
    return asyncio.run(_compare(args, spec))


def _agent_id(profile: str, index: int) -> str:
    return profile if profile.isidentifier() else f"agent-{index + 1}"


def _in_git(directory: str) -> bool:
    path = directory
    while True:
        if os.path.exists(os.path.join(path, ".git")):
            return True
        parent = os.path.dirname(path)
        if parent == path:
            return False
        path = parent


async def _compare(args: argparse.Namespace, spec: Any) -> int:
    from baton.batches.batch import Batch

    async with make_runtime(args) as runtime:
        batch = Batch.create(runtime, spec)
        code = await follow(_Quiet(batch) if not args.json else batch, args)
        if not args.json:
            _side_by_side(batch.rows())
        return code


class _Quiet:
    """The batch, with its table replaced by the side-by-side view ``compare`` prints."""

    def __init__(self, batch: Any) -> None:
        self._batch = batch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._batch, name)

    def table(self) -> str:
        return ""


def _side_by_side(rows: list[dict[str, Any]]) -> None:
    out = sys.stdout
    label_width = max(len(label) for label, _ in SIDE_BY_SIDE)
    heads = [
        f"{row['agent']}" + (f" #{row['repeat']}" if row["repeat"] > 1 else "") for row in rows
    ]
    out.write(
        " " * label_width
        + "  "
        + "  ".join(h[:COLUMN_WIDTH].ljust(COLUMN_WIDTH) for h in heads).rstrip()
        + "\n"
    )
    for label, name in SIDE_BY_SIDE:
        values = [_cell_text(row, name) for row in rows]
        out.write(
            label.ljust(label_width)
            + "  "
            + "  ".join(
                visible(v, COLUMN_WIDTH)[:COLUMN_WIDTH].ljust(COLUMN_WIDTH) for v in values
            ).rstrip()
            + "\n"
        )
    for row, head in zip(rows, heads, strict=True):
        reply = row.get("reply") or ""
        out.write(f"\n── {head} ──\n{visible(reply, 500)}\n")


def _cell_text(row: dict[str, Any], name: str) -> str:
    value = row.get(name)
    if name == "cost" and isinstance(value, int | float):
        return f"{value:.4f} {row.get('currency')}"
    return "" if value is None else str(value)
