"""`baton session new|show|history|export|fork|close|rm` and `baton sessions`: named, persistent
conversations (docs/sessions.md). The next turn of one is `baton run --session NAME PROMPT`.

Every verb is a thin call of :class:`baton.runtime.conversations.Conversations`, the same API
library users and `baton serve` call. Reading verbs on a data directory that does not exist
create nothing (`sessions` lists nothing; the others are DATA_DIR_NOT_FOUND).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar
from urllib.parse import quote

import orjson

from baton.cli import exit_codes
from baton.cli.commands.session_fork import register_fork
from baton.cli.json_output import write_json
from baton.cli.options import add_record_options
from baton.cli.service_link import service_for
from baton.cli.service_start import service_or_start
from baton.cli.store_access import store_url
from baton.cli.terminal import error_line, visible
from baton.cli.workspace_options import add_workspace_options, workspace_ask
from baton.errors import DataDirNotFound, ExportExists, UsageError
from baton.runtime.agents.config_file import load_config
from baton.runtime.conversations import (
    Conversations,
    ConversationView,
    HistoryTurn,
    NewConversation,
    SessionSetupFailed,
)
from baton.runtime.conversations.history import history_markdown
from baton.runtime.runtime import Runtime
from baton.store import (
    CONVERSATION_STATUSES,
    Conversation,
    existing_data_dir,
    resolve_data_dir,
)
from baton.store.owner import current_host
from baton.views.contract import SCHEMA_VERSION, document, error_document
from baton.views.sessions import queued_session_rows, record_json, view_json

_T = TypeVar("_T")

#: Characters of the working directory shown per row of `baton sessions` (its end).
CWD_COLUMN_CHARS: Final = 30
#: Characters of the holding host shown per row of `baton sessions`.
HOST_COLUMN_CHARS: Final = 16
#: Characters of a prompt or reply line `session history` prints per turn (the JSON and the
#: export have all of it).
HISTORY_TEXT_CHARS: Final = 2000
#: Bytes `session export` writes at most (the history of 10,000 runs of 4 MiB prompts is far
#: beyond any real conversation; this bound keeps one command from filling a disk).
MAX_EXPORT_BYTES: Final = 256 * 1024 * 1024

SESSION_EXAMPLES: Final = """examples:
  baton session new fix-login --agent claude --cwd ~/src/app
  baton run --session fix-login "Find the failing test"
  baton run --session fix-login "Now fix it"          # same conversation, even after a restart
  baton session history fix-login --limit 5
  baton session export fix-login --format md
  baton session fork fix-login try-other-fix           # its own session, the same context
  baton session close fix-login
"""
SESSIONS_EXAMPLES: Final = """examples:
  baton sessions
  baton sessions --status recovery_required
  baton sessions --agent claude --json | jq -r .name
  baton sessions --store postgresql://baton@db/baton     # every host's, with its HOST
"""


def _common(parser: argparse.ArgumentParser, *, json_flag: bool = True) -> None:
    add_record_options(
        parser,
        json_help="one JSON object per line" if json_flag else None,
        no_server_help="work in this process even when a `baton serve` runs on the data directory",
        store=True,
    )


def _store(args: argparse.Namespace) -> str | None:
    """The shared store named by ``--store``, BATON_STORE or the config file, or None."""
    return store_url(args.store, getattr(args, "config_file", None))


def setup_failed(exc: SessionSetupFailed, *, json: bool) -> int:
    """Say why a session's setup run failed (stderr, and the JSON error line with --json);
    the exit code of that run."""
    print(error_line(exc), file=sys.stderr)
    if json:
        write_json(
            sys.stdout,
            error_document(
                exc.result.error_code or exc.code,
                exc.result.message or exc.message,
                exc.result.exit_code or exit_codes.TURN_FAILED,
                runId=exc.result.run_id,
            ),
        )
    return exc.result.exit_code or exit_codes.TURN_FAILED


def _runtime(args: argparse.Namespace, *, config: Any = None) -> Runtime:
    """A runtime on the data directory and the chosen store (with the config file's profiles
    when ``config`` is given)."""
    if config is None:
        return Runtime(data_dir=args.data_dir, store=_store(args))
    return Runtime(
        data_dir=args.data_dir,
        store=_store(args),
        profiles=config.all_profiles(),
        config_overrides=dict(config.executables),
        workspace_root=config.workspace_root,
    )


def _workspace_body(args: argparse.Namespace) -> dict[str, Any]:
    """The workspace fields of an API request, a directory resolved here."""
    return {
        "workspace": workspace_ask(args.workspace),
        "base": args.base,
        "requireClean": args.require_clean,
    }


def _local_only(args: argparse.Namespace) -> bool:
    """Work in this process, not through a local service: ``--no-server``, or an explicit
    ``--store`` (the local service serves the store it was started on)."""
    return bool(args.no_server or args.store)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``session`` verb and its subcommands."""
    parser = subparsers.add_parser(
        "session",
        help="create, show and close named sessions (conversations)",
        description="Named, persistent sessions: a conversation that continues across "
        "`baton run --session NAME` and across restarts.",
        epilog=SESSION_EXAMPLES + "\n" + exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = parser.add_subparsers(dest="session_command", metavar="SUBCOMMAND", required=True)

    new = verbs.add_parser("new", help="create a session and its provider session")
    new.add_argument("name", nargs="?", metavar="NAME", help="its name (default: generated)")
    agent = new.add_mutually_exclusive_group(required=True)
    agent.add_argument("--agent", metavar="NAME", help="a profile: claude, codex, cursor, ...")
    agent.add_argument(
        "--agent-command", metavar='"CMD ARGS"', help="a custom ACP agent command (no shell)"
    )
    new.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY",
        help="pass this environment variable to an --agent-command agent (repeatable; the "
        "name is recorded, never the value)",
    )
    new.add_argument("--cwd", metavar="DIR", help="the session's working directory (default: .)")
    add_workspace_options(new)
    new.add_argument("--mode", metavar="ID", help="the session mode (exact id)")
    new.add_argument("--model", metavar="ID", help="the model (exact advertised id)")
    new.add_argument("--effort", metavar="LEVEL", help="reasoning effort")
    new.add_argument(
        "--set-option",
        "--option",
        action="append",
        default=[],
        metavar="ID=VALUE",
        dest="option_values",
        help="a session config option, applied before every prompt (repeatable)",
    )
    new.add_argument("--tools", metavar="FILE", help="trusted MCP stdio server declarations")
    new.add_argument(
        "--max-cost",
        type=float,
        default=None,
        metavar="AMOUNT",
        help="refuse the next prompt once the session's reported cost reaches AMOUNT (the "
        "agent's currency); a running turn is never stopped",
    )
    new.add_argument(
        "--allow-unattended",
        action="store_true",
        help="let an --agent-command agent use auto-edits and full",
    )
    new.add_argument(
        "--config", "--config-file", metavar="FILE", dest="config_file", help="config file"
    )
    _common(new)
    new.set_defaults(handler=_new)

    show = verbs.add_parser("show", help="a session's record, settings, controls and runs")
    show.add_argument("name", metavar="NAME")
    _common(show)
    show.set_defaults(handler=_show)

    history = verbs.add_parser("history", help="the conversation as prompts and replies")
    history.add_argument("name", metavar="NAME")
    history.add_argument("--limit", type=_positive, metavar="N", help="only the last N turns")
    _common(history)
    history.set_defaults(handler=_history)

    export = verbs.add_parser("export", help="write the conversation to a file")
    export.add_argument("name", metavar="NAME")
    export.add_argument("--format", choices=("md", "json"), default="md", help="default: md")
    export.add_argument(
        "-o", "--output", metavar="FILE", help="the file to write (default: NAME.md or NAME.json)"
    )
    _common(export, json_flag=False)
    export.set_defaults(handler=_export)

    close = verbs.add_parser("close", help="close a session (session/close when it can)")
    close.add_argument("name", metavar="NAME")
    _common(close)
    close.set_defaults(handler=_close)

    remove = verbs.add_parser("rm", help="delete Baton's record of a session (runs stay)")
    remove.add_argument("name", metavar="NAME")
    _common(remove)
    remove.set_defaults(handler=_remove)

    register_fork(verbs)


def register_list(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``sessions`` verb."""
    parser = subparsers.add_parser(
        "sessions",
        help="list named sessions",
        description="List named sessions, most recently used first.",
        epilog=SESSIONS_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--status",
        type=str.upper,
        choices=sorted(CONVERSATION_STATUSES),
        metavar="STATUS",
        help="only sessions in this status (idle, active, recovery_required, closed)",
    )
    parser.add_argument("--agent", metavar="NAME", help="only sessions of this profile (or custom)")
    parser.add_argument(
        "--remote",
        action="store_true",
        help="list the agent's own sessions through session/list (starts the agent; needs "
        "--agent or --agent-command), marking those Baton knows",
    )
    parser.add_argument(
        "--agent-command", metavar='"CMD ARGS"', help="with --remote: a custom ACP agent command"
    )
    parser.add_argument(
        "--env", action="append", default=[], metavar="KEY", help="with --remote --agent-command"
    )
    parser.add_argument("--cwd", metavar="DIR", help="with --remote: only sessions of this cwd")
    parser.add_argument(
        "--delete",
        metavar="PROVIDER_SESSION_ID",
        help="with --remote: delete this session of the agent's (session/delete, when the agent "
        "advertises it; refused while a Baton session that is not closed holds it)",
    )
    parser.add_argument(
        "--config", "--config-file", metavar="FILE", dest="config_file", help="config file"
    )
    _common(parser)
    parser.set_defaults(handler=_list)


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive number")
    return number


# --- running the API ---------------------------------------------------------------------


def _with_conversations(
    args: argparse.Namespace,
    call: Callable[[Conversations], Awaitable[_T]],
    *,
    reading: bool = False,
    runtime: Runtime | None = None,
) -> _T:
    """Run ``call`` on the data directory's conversations (or the shared store's). ``reading``
    verbs on the data directory's own store create nothing: a missing data directory is
    DATA_DIR_NOT_FOUND. On a shared store this host's data directory is prepared (it holds
    this host's journal), like any verb that opens the runtime."""
    if reading and _store(args) is None:
        existing_data_dir(resolve_data_dir(args.data_dir))

    async def go() -> _T:
        async with runtime or _runtime(args) as opened:
            if opened.data_dir_notice is not None:
                print(f"baton: {visible(opened.data_dir_notice, None)}", file=sys.stderr)
            return await call(Conversations(opened))

    return asyncio.run(go())


def _agent_of(record: Conversation) -> str:
    if record.agent_command is None:
        return record.profile
    command = record.agent_command
    return command if isinstance(command, str) else " ".join(command)


# --- the verbs -----------------------------------------------------------------------------


def _new(args: argparse.Namespace) -> int:
    config = load_config(args.config_file)
    options: dict[str, str] = {}
    for item in args.option_values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--set-option takes ID=VALUE, got {item!r}")
        options[key] = value
    client = service_or_start(
        args.data_dir, no_server=_local_only(args), config=config, note=sys.stderr
    )
    if client is not None:
        # The service creates it, so its provider session stays attached there, warm.
        body: dict[str, Any] = {
            "name": args.name,
            "agent": args.agent,
            "agentCommand": args.agent_command,
            "envKeys": list(args.env),
            "cwd": os.path.realpath(args.cwd or os.getcwd()),
            "mode": args.mode,
            "model": args.model,
            "effort": args.effort,
            "config": options,
            "allowUnattended": args.allow_unattended,
            "toolsFile": args.tools,
            **_workspace_body(args),
        }
        made = client.request("POST", "/api/v1/sessions", body)
        if args.json:
            write_json(sys.stdout, made)
        else:
            print(made["name"])
        return exit_codes.OK
    new = NewConversation(
        name=args.name,
        agent=args.agent,
        agent_command=args.agent_command,
        env_keys=tuple(args.env),
        cwd=args.cwd,
        mode=args.mode,
        model=args.model,
        effort=args.effort,
        config=options,
        allow_unattended=args.allow_unattended,
        tools_file=args.tools,
        workspace=workspace_ask(args.workspace),
        base=args.base,
        require_clean=args.require_clean,
        max_cost=args.max_cost,
    )
    runtime = _runtime(args, config=config)
    try:
        record = _with_conversations(args, lambda c: c.create(new), runtime=runtime)
    except SessionSetupFailed as exc:
        return setup_failed(exc, json=args.json)
    if args.json:
        write_json(sys.stdout, record_json(record, 0, host=current_host()))
    else:
        print(record.name)
    return exit_codes.OK


def _remote(args: argparse.Namespace) -> int:
    if (args.agent is None) == (args.agent_command is None):
        raise UsageError("--remote needs exactly one of --agent and --agent-command")
    if args.status is not None:
        raise UsageError("--status filters Baton's records; it does not apply to --remote")
    config = load_config(args.config_file)
    runtime = _runtime(args, config=config)
    if args.delete is not None:
        return _delete_remote(args, runtime)
    listing = _with_conversations(
        args,
        lambda c: c.remote(
            agent=args.agent,
            agent_command=args.agent_command,
            env_keys=tuple(args.env),
            cwd=args.cwd,
        ),
        runtime=runtime,
    )
    if listing.truncated:
        print(
            f"baton: the agent's list was cut at {len(listing.sessions)} sessions",
            file=sys.stderr,
        )
    if args.json:
        for entry in listing.sessions:
            write_json(sys.stdout, {**entry.to_json(), "schemaVersion": SCHEMA_VERSION})
        return exit_codes.OK
    if not listing.sessions:
        print("no sessions")
        return exit_codes.OK
    out = sys.stdout
    out.write(f"{'PROVIDER SESSION':<38} {'BATON NAME':<24} {'UPDATED':<20}  TITLE\n")
    for entry in listing.sessions:
        out.write(
            f"{visible(entry.session_id, 38):<38} {visible(entry.known_as or '-', 24):<24} "
            f"{visible((entry.updated_at or '-')[:19], 20):<20}  {visible(entry.title or '', 60)}\n"
        )
    out.flush()
    return exit_codes.OK


def _delete_remote(args: argparse.Namespace, runtime: Runtime) -> int:
    _with_conversations(
        args,
        lambda c: c.delete_remote(
            args.delete,
            agent=args.agent,
            agent_command=args.agent_command,
            env_keys=tuple(args.env),
        ),
        runtime=runtime,
    )
    if args.json:
        write_json(
            sys.stdout,
            {"sessionId": args.delete, "deleted": True, "schemaVersion": SCHEMA_VERSION},
        )
    else:
        print(f"deleted the agent's session {visible(args.delete, None)}")
    return exit_codes.OK


def _list(args: argparse.Namespace) -> int:
    if args.delete is not None and not args.remote:
        raise UsageError("--delete names a session of the agent's own: use it with --remote")
    if args.remote:
        return _remote(args)
    if args.agent_command is not None or args.env or args.cwd is not None:
        raise UsageError("--agent-command, --env and --cwd go with --remote")

    async def listing(
        conversations: Conversations,
    ) -> tuple[list[tuple[Conversation, int, str | None]], list[dict[str, Any]]]:
        records = await conversations.list(status=args.status, agent=args.agent)
        store = conversations.runtime.store
        assert store is not None
        counts = store.turn_counts_by_conversation()
        hosts = await conversations.holding_hosts()
        rows = [(record, counts.get(record.name, 0), hosts.get(record.name)) for record in records]
        # Queued sessions (`baton submit --session`) are listed unfiltered by status or agent:
        # they have neither (each submission names its own agent).
        filtered = args.status is not None or args.agent is not None
        return rows, [] if filtered else queued_session_rows(store)

    try:
        rows, queued = _with_conversations(args, listing, reading=True)
    except DataDirNotFound as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        rows, queued = [], []
    if args.json:
        for record, turns, host in rows:
            write_json(sys.stdout, record_json(record, turns, host=host))
        for entry in queued:
            write_json(sys.stdout, entry)
        return exit_codes.OK
    if not rows and not queued:
        print("no sessions")
        return exit_codes.OK
    out = sys.stdout
    with_host = False
    if rows:
        # Like `baton runs`: a HOST column on a shared store, or when the rows name two hosts.
        with_host = _store(args) is not None or len({host for _r, _t, host in rows}) > 1
        host_header = f"{'HOST':<{HOST_COLUMN_CHARS}} " if with_host else ""
        out.write(
            f"{'NAME':<24} {'AGENT':<12} {'STATUS':<18} {host_header}{'TURNS':>5}  "
            f"{'LAST USED':<20}  CWD\n"
        )
    for record, turns, host in rows:
        cwd = visible(record.cwd, None)
        if len(cwd) > CWD_COLUMN_CHARS:
            cwd = "…" + cwd[-(CWD_COLUMN_CHARS - 1) :]
        shown = ""
        if with_host:
            shown = f"{visible(host or '-', HOST_COLUMN_CHARS):<{HOST_COLUMN_CHARS}} "
        out.write(
            f"{record.name:<24} {visible(_agent_of(record), 12):<12} {record.status:<18} "
            f"{shown}{turns:>5}  {record.last_used_at[:19]:<20}  {cwd}\n"
        )
    if queued:
        if rows:
            out.write("\n")
        out.write(
            f"{'QUEUED SESSION':<24} {'WORKER':<24} {'HOST':<{HOST_COLUMN_CHARS}} "
            f"{'QUEUE':<20}  LAST USED\n"
        )
        for entry in queued:
            out.write(
                f"{visible(entry['name'], 24):<24} {visible(entry['worker'], 24):<24} "
                f"{visible(entry['host'] or '-', HOST_COLUMN_CHARS):<{HOST_COLUMN_CHARS}} "
                f"{visible(entry['queue'], 20):<20}  {entry['updatedAt'][:19]}\n"
            )
    out.flush()
    return exit_codes.OK


def _show(args: argparse.Namespace) -> int:
    async def showing(conversations: Conversations) -> tuple[ConversationView, str | None]:
        return await conversations.show(args.name), await conversations.holding_host(args.name)

    view, host = _with_conversations(args, showing, reading=True)
    if args.json:
        write_json(sys.stdout, view_json(view, host))
        return exit_codes.OK
    record = view.record
    settings = {k: v for k, v in record.settings.items() if v not in (None, {}, "")}
    capabilities = ", ".join(k for k, v in sorted(record.capabilities.items()) if v) or "none"
    print(f"session    {record.name}")
    print(f"status     {record.status}")
    print(f"agent      {visible(_agent_of(record), None)}")
    if record.env_keys:
        print(f"env keys   {', '.join(visible(k, 64) for k in record.env_keys)}")
    print(f"cwd        {visible(record.cwd, None)}")
    print(f"host       {visible(host or '-', None)}")
    print(f"provider   {visible(record.provider_session_id or '-', 200)}")
    if record.forked_from is not None:
        print(f"forked     from {visible(record.forked_from, None)} ({record.fork_turns} turns)")
    print(f"can        {capabilities}")
    print(f"settings   {visible(orjson.dumps(settings).decode(), 400) if settings else '-'}")
    native = view.native_state
    if isinstance(native, dict):
        for key, label in (("modes", "mode"), ("models", "model")):
            value = native.get(key)
            if isinstance(value, dict):
                current = value.get("currentModeId") or value.get("currentModelId")
                print(f"{label:<10} {visible(str(current), 120)}")
        for option in native.get("configOptions") or []:
            if isinstance(option, dict):
                print(
                    f"option     {visible(str(option.get('id')), 60)} = "
                    f"{visible(str(option.get('currentValue')), 120)}"
                )
    print(f"created    {record.created_at}")
    print(f"last used  {record.last_used_at}")
    if record.note:
        print(f"note       {visible(record.note, None)}")
    for index, run in enumerate(view.runs, 1):
        prompt = visible(run.prompt_text.replace("\n", " "), 60)
        print(f"turn {index:<5} {run.id}  {run.status:<18} {prompt}")
    return exit_codes.OK


def _history(args: argparse.Namespace) -> int:
    turns = _with_conversations(args, lambda c: c.history(args.name, args.limit), reading=True)
    if args.json:
        for turn in turns:
            write_json(
                sys.stdout,
                {**turn.to_json(), "session": args.name, "schemaVersion": SCHEMA_VERSION},
            )
        return exit_codes.OK
    if not turns:
        print("no turns yet")
    for index, turn in enumerate(turns, 1):
        _print_turn(index, turn)
    return exit_codes.OK


def _print_turn(index: int, turn: HistoryTurn) -> None:
    origin = f" · in {visible(turn.inherited_from, None)}" if turn.inherited_from else ""
    print(f"— turn {index} · {turn.run_id} · {turn.status}{origin}")
    print(f"> {visible(turn.prompt, HISTORY_TEXT_CHARS, newlines=True)}")
    for call in turn.tool_calls:
        print(f"  ⚙ {visible(call.kind, 20)} {visible(call.title, 120)} [{call.status}]")
    for decision in turn.permissions:
        print(
            f"  permission {decision.state.lower()}: {visible(str(decision.choice), 80)} "
            f"(by {decision.chosen_by or '-'})"
        )
    if turn.reply:
        print(visible(turn.reply, HISTORY_TEXT_CHARS, newlines=True))
    if turn.error_code:
        print(f"  {turn.error_code}")


def _export(args: argparse.Namespace) -> int:
    turns = _with_conversations(args, lambda c: c.history(args.name), reading=True)
    if args.format == "md":
        data = history_markdown(args.name, turns).encode()
    else:
        body = {
            "session": args.name,
            "turns": [t.to_json() for t in turns],
            "schemaVersion": SCHEMA_VERSION,
        }
        data = orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"
    if len(data) > MAX_EXPORT_BYTES:
        raise UsageError(f"the export is {len(data)} bytes; the bound is {MAX_EXPORT_BYTES}")
    path = args.output or f"{args.name}.{args.format}"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        raise ExportExists(f"{path} exists; pass another --output") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot be written ({exc.strerror})") from None
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    print(path)
    return exit_codes.OK


def _close(args: argparse.Namespace) -> int:
    client = service_for(args.data_dir, no_server=_local_only(args))
    if client is not None:
        # Through the service, where its provider session is attached (session/close).
        shown = client.request("POST", f"/api/v1/sessions/{quote(args.name, safe='')}/close")
    else:

        async def closing(conversations: Conversations) -> dict[str, Any]:
            record = await conversations.close(args.name)
            return record_json(record, host=await conversations.holding_host(args.name))

        shown = _with_conversations(args, closing, reading=True)
    if args.json:
        write_json(sys.stdout, shown)
    else:
        print(f"{shown['name']}: {shown['status'].lower()}; {visible(shown['note'] or '', None)}")
    return exit_codes.OK


def _remove(args: argparse.Namespace) -> int:
    async def remove(conversations: Conversations) -> None:
        await conversations.remove(args.name)

    _with_conversations(args, remove, reading=True)
    if args.json:
        write_json(sys.stdout, document({"name": args.name, "removed": True}))
    else:
        print(f"{args.name}: removed (its runs stay; `baton runs` lists them)")
    return exit_codes.OK
