"""`baton session fork NAME NEW [--at-turn N]`: a new session holding NAME's context, opened
by the agent's ``session/fork`` (unstable ACP, issue 29; docs/sessions.md, Forking).

A thin call of :meth:`baton.runtime.conversations.Conversations.fork`, through the local
service when one runs on the data directory (the parent's provider session may be attached
there, and the fork's stays attached there, warm), else in this process.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any
from urllib.parse import quote

from baton.cli import exit_codes
from baton.cli.json_output import write_json
from baton.cli.service_link import service_for
from baton.cli.terminal import visible
from baton.runtime.agents.config_file import load_config
from baton.runtime.conversations import Conversations, SessionSetupFailed
from baton.store.owner import current_host
from baton.views.sessions import record_json


def register_fork(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``session fork``."""
    from baton.cli.commands.session import _common, _positive

    fork = verbs.add_parser(
        "fork",
        help="a new session holding another's context (the agent's session/fork)",
        description="Fork session NAME as NEW: a session of its own (its own record, runs and "
        "provider session, opened by the agent's session/fork), whose history starts with "
        "NAME's turns; with a workspace, its own worktree branched from NAME's as it is now. "
        "Refused (SESSION_FORK_NOT_ADVERTISED) when the agent does not advertise session/fork.",
    )
    fork.add_argument("name", metavar="NAME", help="the session to fork")
    fork.add_argument("new_name", metavar="NEW", help="the fork's name")
    fork.add_argument(
        "--at-turn",
        type=_positive,
        metavar="N",
        help="keep only NAME's first N turns (where the agent supports it: "
        "SESSION_FORK_AT_TURN_UNSUPPORTED otherwise)",
    )
    fork.add_argument(
        "--config", "--config-file", metavar="FILE", dest="config_file", help="config file"
    )
    _common(fork)
    fork.set_defaults(handler=_fork)


def _fork(args: argparse.Namespace) -> int:
    from baton.cli.commands.session import (
        _local_only,
        _runtime,
        _with_conversations,
        setup_failed,
    )

    client = service_for(args.data_dir, no_server=_local_only(args))
    if client is not None:
        body: dict[str, Any] = {"name": args.new_name, "atTurn": args.at_turn}
        path = f"/api/v1/sessions/{quote(args.name, safe='')}/fork"
        shown = client.request("POST", path, body)
    else:
        config = load_config(args.config_file)

        async def forking(conversations: Conversations) -> dict[str, Any]:
            record = await conversations.fork(args.name, args.new_name, at_turn=args.at_turn)
            return record_json(record, 0, host=current_host())

        try:
            shown = _with_conversations(
                args, forking, reading=True, runtime=_runtime(args, config=config)
            )
        except SessionSetupFailed as exc:
            return setup_failed(exc, json=args.json)
    if args.json:
        write_json(sys.stdout, shown)
    else:
        turns = shown.get("forkTurns")
        print(
            f"{visible(shown['name'], None)} (forked from {visible(args.name, None)}, "
            f"{turns} turn{'s' if turns != 1 else ''} of context)"
        )
    return exit_codes.OK
