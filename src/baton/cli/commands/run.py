"""`baton run [OPTIONS] PROMPT`: run one prompt against an agent.

Output, text (the default): the agent's reply streams to stdout as it arrives; tool calls, plans
and permission decisions go to stderr, one line each, with a spinner while waiting on a
terminal, and a summary at the end (stop reason, tool calls, permissions granted, denied and
cancelled, tokens and cost when the agent reports them, time, run id).

Output, --json (or --format json): one JSON object per line on stdout, Baton's normalized
events (see docs/events.md); the last line is the run result ``{"type": "result",
"schemaVersion", "runId", "status", "stopReason", "exitCode", "text", "usage", ...}``.

Ctrl-C interrupts the turn: Baton sends session/cancel and waits up to 15 s for the agent's
``cancelled`` answer (exit 130), saying so; a second Ctrl-C stops waiting (the run is then
RECOVERY_REQUIRED, exit 130, and the exact `baton recover RUN` to run is printed). A reader
that goes away (``| head``) ends the turn cleanly with session/cancel: exit 141.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shlex
import signal
import sys
from typing import TYPE_CHECKING, Any, Final

from baton.cli import exit_codes
from baton.cli.commands.run_options import EXAMPLES, add_run_arguments
from baton.cli.elicitation_prompt import terminal_elicitor
from baton.cli.json_output import write_json
from baton.cli.main import reader_gone
from baton.cli.permission_prompt import TtyAsker, terminal_asker
from baton.cli.run_text import TextPrinter, next_step, question_left_open, warning_line
from baton.cli.terminal import Screen, error_line, visible
from baton.errors import (
    AgentLaunchFailed,
    BadFlag,
    BatonError,
    PolicyNotAvailable,
    SessionBusy,
    SessionNotFound,
    SessionRecoveryRequired,
)
from baton.runtime.agents.config_file import UserConfig, load_config
from baton.runtime.permissions.ask import NoUserAsker
from baton.runtime.permissions.policies import ExecutionSettings
from baton.runtime.result import permission_counts
from baton.runtime.run import Run
from baton.runtime.runtime import AgentNotInstalled, RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.turn import INTERRUPT_COMPLETION_TIMEOUT_SECONDS
from baton.runtime.workspaces.tracking import split_workspace_flag
from baton.store.location import resolve_store
from baton.views.contract import SCHEMA_VERSION, error_document
from baton.wire.budget import TurnBudget
from baton.wire.system_prompt import MAX_SYSTEM_PROMPT_CHARS
from baton.wire.version import parse_protocol_choice

if TYPE_CHECKING:
    from baton.cli.service_link import ServiceClient
    from baton.runtime.conversations import Conversations, SessionRun

#: Characters of the prompt read from stdin (`baton run -`), at most.
MAX_STDIN_PROMPT_CHARS: Final = 4 * 1024 * 1024
#: Seconds between two looks at the agent's stderr with --verbose.
STDERR_POLL_SECONDS: Final = 0.1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` verb."""
    parser = subparsers.add_parser(
        "run",
        help="run one prompt against an agent",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES + "\n" + exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(parser)
    parser.set_defaults(handler=run, format=None)


def _option_values(values: list[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadFlag(f"--set-option takes ID=VALUE, got {item!r}")
        parsed[key] = value
    return parsed


def _read_prompt(value: str) -> str:
    if value != "-":
        if not value.strip():
            raise BadFlag("the prompt is empty; pass the text to send, or - to read stdin")
        return value
    text = sys.stdin.read(MAX_STDIN_PROMPT_CHARS + 1)
    if len(text) > MAX_STDIN_PROMPT_CHARS:
        raise BadFlag(f"the prompt on stdin is over {MAX_STDIN_PROMPT_CHARS} characters")
    if not text.strip():
        raise BadFlag("the prompt read from standard input is empty")
    return text


def _system_prompt_text(value: str | None, flag: str) -> str | None:
    """A system prompt flag's text: the value, or the file's contents for ``@FILE`` (read up
    to one character past the bound, which the runtime then refuses with its own message)."""
    if value is None or not value.startswith("@"):
        return value
    path = value[1:]
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(MAX_SYSTEM_PROMPT_CHARS + 1)
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not UTF-8 text"
        raise BadFlag(f"{flag} @{path}: cannot read the file ({reason})") from None


def _steer(args: argparse.Namespace) -> int:
    """``run --session NAME --steer PROMPT``: the same as ``baton steer NAME PROMPT``."""
    if args.session is None:
        raise BadFlag("--steer needs --session NAME (the session whose running turn to steer)")
    from baton.cli.commands import steer

    text = _read_prompt(args.prompt)
    return steer.run(
        argparse.Namespace(
            session=args.session,
            text=text,
            data_dir=args.data_dir,
            no_server=args.no_server,
            json=args.format == "json",
        )
    )


def run(args: argparse.Namespace) -> int:
    """Handle `baton run`."""
    fmt = args.format or "text"
    if args.steer:
        return _steer(args)
    try:
        if args.config_file and "=" in args.config_file and not os.path.exists(args.config_file):
            raise BadFlag(
                f"--config takes Baton's config FILE; to set a session option use "
                f"--set-option {args.config_file}"
            )
        _check_agent_flags(args)
        prompt = _read_prompt(args.prompt)
        config = load_config(args.config_file)
        workspace, execution_workspace = split_workspace_flag(args.workspace)
        request = RunRequest(
            prompt=prompt,
            agent=args.agent,
            agent_command=args.agent_command,
            env_keys=tuple(args.env),
            cwd=args.cwd,
            policy=args.policy,
            allow_unattended=args.allow_unattended,
            mode=args.mode,
            model=args.model,
            effort=args.effort,
            config=_option_values(args.option_values),
            tools_file=args.tools,
            budget=TurnBudget(idle=args.idle_timeout, absolute=args.timeout),
            attachments=tuple(args.attach),
            execution=ExecutionSettings(execution_workspace, args.network, args.reviewer),
            workspace=workspace,
            base=args.base,
            require_clean=args.require_clean,
            lane=args.lane,
            additional_directories=tuple(args.add_dirs),
            system_prompt=_system_prompt_text(args.system_prompt, "--system-prompt"),
            append_system_prompt=_system_prompt_text(
                args.append_system_prompt, "--append-system-prompt"
            ),
            protocol=None if args.protocol is None else parse_protocol_choice(args.protocol),
        )
    except BatonError as exc:
        return _refused(exc, fmt, None)
    screen = Screen(sys.stdout, sys.stderr)
    # A prompt read from stdin leaves no terminal to ask on: nobody can answer.
    asker = terminal_asker(sys.stdin, sys.stderr, screen) if args.prompt != "-" else NoUserAsker()
    # Elicitation is advertised only when a person can answer: a terminal, under ask.
    elicitor = None
    if args.prompt != "-" and args.policy == "ask":
        lock = asker.question_lock if isinstance(asker, TtyAsker) else None
        elicitor = terminal_elicitor(sys.stdin, sys.stderr, screen, lock)
    try:
        shared = resolve_store(args.store, os.environ, config.store_url).url
    except BatonError as exc:
        return _refused(exc, fmt, None)
    runtime = Runtime(
        elicitor=elicitor,
        data_dir=args.data_dir,
        store=shared,
        asker=asker,
        profiles=config.all_profiles(),
        config_overrides=dict(config.executables),
        idle_timeout=config.idle_timeout,
        workspace_root=config.workspace_root,
    )
    session = _RunSession(runtime, request, screen, args, config.all_profiles())
    session.config = config
    return asyncio.run(session.go())


#: Flags that a session's record decides: refused beside --session (the session keeps them).
SESSION_DECIDES: Final = (
    ("cwd", "--cwd"),
    ("env", "--env"),
    ("mode", "--mode"),
    ("model", "--model"),
    ("effort", "--effort"),
    ("option_values", "--set-option"),
    ("lane", "--lane"),
    ("workspace", "--workspace"),
    ("base", "--base"),
)


def _check_agent_flags(args: argparse.Namespace) -> None:
    """Exactly one of --agent, --agent-command and --session; --continue needs an agent; a
    session's own settings are not given again."""
    if args.create and not args.continue_latest:
        raise BadFlag(
            "--create goes with --continue (a session is created when none is open); to "
            "name a new session use `baton session new NAME`"
        )
    if args.continue_latest:
        if args.session is not None:
            raise BadFlag("--continue picks the session itself; drop --session")
        if args.agent is None and args.agent_command is None:
            raise BadFlag("--continue needs --agent or --agent-command (the session's agent)")
    if args.session is not None or args.continue_latest:
        for attribute, flag in SESSION_DECIDES:
            if attribute == "cwd" and args.continue_latest:
                continue  # --continue looks the session up by cwd
            if getattr(args, attribute) not in (None, [], "default"):
                raise BadFlag(
                    f"{flag} is the session's own setting (given to `baton session new`); "
                    "drop it to continue a session"
                )
        return
    if args.agent is None and args.agent_command is None:
        raise BadFlag("name an agent: --agent NAME, --agent-command CMD, or --session NAME")


def _refused(exc: BatonError, fmt: str, hint: str | None) -> int:
    """A run refused before it started: ``CODE: message`` on stderr (and a JSON ``error``
    line on stdout with --json); exit 2 for the caller's fault, 5 for a missing agent."""
    code = exit_codes.USAGE if exc.fault == "caller" else exit_codes.TURN_FAILED
    if isinstance(exc, AgentNotInstalled | AgentLaunchFailed):
        code = exit_codes.NOT_INSTALLED
    elif isinstance(exc, SessionBusy):
        code = exit_codes.SESSION_BUSY
    elif isinstance(exc, SessionRecoveryRequired):
        code = exit_codes.RECOVERY_REQUIRED
    print(error_line(exc), file=sys.stderr)
    if hint:
        print(f"hint: {hint}", file=sys.stderr)
    if fmt == "json":
        write_json(sys.stdout, error_document(exc.code, exc.message, code, hint=hint))
    return code


def _policy_hint(exc: BatonError, request: RunRequest, profiles: dict[str, Any]) -> str | None:
    """For POLICY_NOT_AVAILABLE: the agent's own unattended edit mode, when its profile knows
    one (claude: ``--mode acceptEdits``)."""
    if not isinstance(exc, PolicyNotAvailable) or request.agent is None:
        return None
    profile = profiles.get(request.agent)
    mode = getattr(profile, "unattended_edit_mode", None)
    if not mode:
        return None
    return (
        f"{request.agent} edits without asking in its own mode: "
        f"baton run --agent {request.agent} --mode {mode} ... "
        "(Baton's policy stays ask for anything else it asks)"
    )


class _RunSession:
    """One `baton run`: the event sink, Ctrl-C, a vanished reader, --verbose stderr."""

    def __init__(
        self,
        runtime: Runtime,
        request: RunRequest,
        screen: Screen,
        args: argparse.Namespace,
        profiles: dict[str, Any],
    ) -> None:
        self.runtime = runtime
        self.request = request
        self.screen = screen
        self.args = args
        #: The named session this run continues (``--session``, or found by ``--continue``).
        self.session_name: str | None = None
        self.fmt = args.format or "text"
        self.fail_on_denied = bool(args.fail_on_denied)
        self.verbose = bool(args.verbose)
        self.profiles = profiles
        self.printer = TextPrinter(screen) if self.fmt == "text" else None
        #: The run's handle (a run of this process, or a session's turn here; None for a turn
        #: run by `baton serve`).
        self.run: Run | SessionRun | None = None
        self.conversations: Conversations | None = None
        self.run_id: str | None = None
        self.interrupts = 0
        self.reader_left = False
        self.result_event: RunEvent | None = None
        self.usage: dict[str, Any] | None = None
        self._main: asyncio.Task[Any] | None = None
        #: The service and session name when the turn runs in `baton serve`.
        self.remote: tuple[ServiceClient, str] | None = None
        #: An agent's question was open, unanswered, when the turn stopped (the next step).
        self.question_left_open = False
        #: The config file (its ``[service]`` table decides the background start).
        self.config: UserConfig = UserConfig(path=None, source="default")

    # --- the event sink -----------------------------------------------------------------

    def emit(self, event: RunEvent) -> None:
        if event.type == "run_started" and self.remote is not None:
            # A turn run by `baton serve`: its events are the service's, the id with them.
            self.run_id = event.run_id
        elif event.type == "usage":
            self.usage = dict(event.data)
        elif event.type == "result":
            self.result_event = event  # written last, completed with what only the CLI knows
            return
        self.question_left_open |= question_left_open(event)
        if self.reader_left:
            return
        try:
            if self.printer is not None:
                self.printer(event)
            elif event.type == "run_started":
                write_json(sys.stdout, {**event.to_dict(), "schemaVersion": SCHEMA_VERSION})
            else:
                sys.stdout.buffer.write(event.to_json() + b"\n")
                sys.stdout.flush()
                if event.type == "warning":
                    # Said on stderr too: a JSON reader may not look for warnings.
                    self.screen.note(warning_line(self.screen, event.data))
        except BrokenPipeError:
            self._reader_gone()

    def _reader_gone(self) -> None:
        """The reader of stdout went away: not the agent's fault. The turn is cancelled
        cleanly (session/cancel), never abandoned; output goes to /dev/null from now on."""
        self.reader_left = True
        reader_gone()
        self._interrupt("reader")

    def _interrupt(self, reason: str) -> bool:
        """Ask this process's run to stop (see ``Run.interrupt``: during setup no prompt is
        sent; then session/cancel and the interrupt deadline); False when none runs."""
        if self.run is not None:
            return self.run.interrupt_nowait(reason)
        if self.conversations is not None and self.session_name is not None:
            return self.conversations.cancel(self.session_name, reason)
        return False

    # --- Ctrl-C ---------------------------------------------------------------------------

    def on_sigint(self) -> None:
        self.interrupts += 1
        if self.remote is not None and self.interrupts == 1:
            client, name = self.remote
            from baton.cli.remote_turn import cancel_through_service

            with contextlib.suppress(BatonError):
                cancel_through_service(client, name)
            self.screen.note("^C cancelling the turn in the service (Ctrl-C again stops waiting)")
            return
        if self.interrupts == 1 and self._interrupt("user"):
            wait = f"{INTERRUPT_COMPLETION_TIMEOUT_SECONDS:g}"
            self.screen.note(
                f"^C cancelling: waiting up to {wait}s for the agent to confirm "
                "(press Ctrl-C again to stop waiting; the run then needs `baton recover`)"
            )
            self.screen.set_status(
                f"cancelling: waiting for the agent's answer to session/cancel (up to {wait}s; "
                "Ctrl-C again abandons)"
            )
        elif self._main is not None:
            self._main.cancel()

    # --- --verbose --------------------------------------------------------------------------

    async def _stream_stderr(self) -> None:
        """Print the agent's (redacted) stderr lines as they arrive, prefixed ``agent:``."""
        shown: dict[str, str] = {}
        while True:
            await asyncio.sleep(STDERR_POLL_SECONDS)
            self._show_new_stderr(shown)

    def _show_new_stderr(self, shown: dict[str, str]) -> None:
        for run in self.runtime.runs:
            tail = run.stderr_tail()
            previous = shown.get(run.id, "")
            if tail == previous:
                continue
            new = tail[len(previous) :] if tail.startswith(previous) else tail
            complete, sep, _partial = new.rpartition("\n")
            if not sep:
                continue
            shown[run.id] = previous + complete + sep if tail.startswith(previous) else tail
            for line in complete.split("\n"):
                self.screen.note(self.screen.style(f"agent: {visible(line)}", "dim"))

    # --- the run --------------------------------------------------------------------------

    async def go(self) -> int:
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self.on_sigint)
        if self.printer is not None:
            self.screen.start_spinner()
        stderr_task = asyncio.ensure_future(self._stream_stderr()) if self.verbose else None
        try:
            async with self.runtime:
                if self.runtime.data_dir_notice is not None:
                    self.screen.note(f"baton: {visible(self.runtime.data_dir_notice, None)}")
                result = await self._execute()
        except asyncio.CancelledError:
            self.screen.end()
            where = f" run {self.run_id} " if self.run_id else " "
            recover = f"; inspect it with `baton recover {self.run_id}`" if self.run_id else ""
            print(
                f"baton: interrupted; stopped waiting for the agent.{where}is RECOVERY_REQUIRED "
                f"if its prompt was outstanding{recover}",
                file=sys.stderr,
            )
            return exit_codes.INTERRUPTED
        except BatonError as exc:
            self.screen.end()
            if self.reader_left:
                return exit_codes.PIPE_CLOSED
            return _refused(exc, self.fmt, _policy_hint(exc, self.request, self.profiles))
        finally:
            if stderr_task is not None:
                stderr_task.cancel()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)
        return self._finish(result)

    async def _execute(self) -> RunResult:
        """The run: one prompt on a new provider session, or the next turn of a session."""
        args = self.args
        if args.session is None and not args.continue_latest:
            run = await self.runtime.start(self.request, on_event=self.emit)
            self.run, self.run_id = run, run.id
            if self.reader_left:
                run.interrupt_nowait("reader")  # the reader left while the run was created
            return await run.result()
        if args.session is not None:
            # The service's client, questions and start-up: imported only for a session turn
            # (a one-shot run never talks to a service; the import-budget test counts).
            from baton.cli.remote_questions import RemoteQuestions
            from baton.cli.remote_turn import prompt_through_service
            from baton.cli.service_start import service_or_start

            client = service_or_start(
                args.data_dir, no_server=args.no_server, config=self.config, note=sys.stderr
            )
            if client is not None:
                self.session_name = args.session
                self.remote = (client, args.session)
                questions = RemoteQuestions(
                    client, self.screen, self.runtime.asker, self.runtime.elicitor
                )
                return await prompt_through_service(
                    client,
                    args.session,
                    self.request,
                    no_wait=args.no_wait,
                    wait_timeout=args.wait_timeout,
                    emit=self.emit,
                    questions=questions,
                )
        # Only a turn of a named session loads the conversations service (issue 34).
        from baton.runtime.conversations import Conversations, PromptOptions

        conversations = Conversations(self.runtime)
        self.conversations = conversations
        name = args.session
        if name is None:
            latest = await conversations.latest(
                self.request.cwd, agent=args.agent, agent_command=args.agent_command
            )
            if latest is None and not args.create:
                agent = (
                    f"--agent {args.agent}"
                    if args.agent is not None
                    else f"--agent-command {shlex.quote(args.agent_command)}"
                )
                raise SessionNotFound(
                    "no open session of this cwd and agent; add --create to start one with "
                    f"this prompt (`baton run --continue --create {agent} PROMPT`), or name "
                    "one with `baton session new NAME`"
                )
            if latest is None:
                from baton.runtime.conversations import NewConversation

                created = await conversations.create(
                    NewConversation(
                        agent=args.agent,
                        agent_command=args.agent_command,
                        cwd=self.request.cwd,
                        allow_unattended=self.request.allow_unattended,
                        tools_file=self.request.tools_file,
                    )
                )
                self.screen.note(
                    f"baton: no open session of this cwd and agent: created session "
                    f"{visible(created.name, 64)}"
                )
                name = created.name
            else:
                name = latest.name
        self.session_name = name
        options = PromptOptions(
            policy=self.request.policy,
            allow_unattended=self.request.allow_unattended,
            tools_file=self.request.tools_file,
            budget=self.request.budget,
            attachments=self.request.attachments,
            wait=not args.no_wait,
            wait_timeout=args.wait_timeout,
        )
        turn = await conversations.start(name, self.request.prompt, options, on_event=self.emit)
        self.run, self.run_id = turn, turn.id
        if self.reader_left:
            turn.interrupt_nowait("reader")  # the reader left while the turn's run was created
        # A second Ctrl-C abandons the turn here, so the session is released with it before
        # the runtime closes.
        return await turn.result_or_abandon()

    def _finish(self, result: RunResult) -> int:
        exit_code = result.exit_code
        counts = permission_counts(result.permissions)
        if (
            self.fail_on_denied
            and exit_code == exit_codes.OK
            and counts["denied"] + counts["cancelled"]
        ):
            exit_code = exit_codes.PERMISSION_NOT_GRANTED
        if (
            self.args.fail_on_unreported
            and exit_code == exit_codes.OK
            and result.unreported_changes
        ):
            exit_code = exit_codes.UNREPORTED_CHANGES
        if self.reader_left:
            return exit_codes.PIPE_CLOSED
        try:
            if self.printer is not None:
                self.printer.usage = self.usage
                self.printer.summary(result, exit_code, self.fail_on_denied, self.session_name)
            else:
                event = self.result_event or result.to_event()
                write_json(
                    sys.stdout,
                    {
                        **event.to_dict(),
                        "schemaVersion": SCHEMA_VERSION,
                        "exitCode": exit_code,
                        "text": result.text,
                        "usage": self.usage,
                        "permissionOutcomes": counts,
                        "nextStep": next_step(
                            result, exit_code, question_left_open=self.question_left_open
                        ),
                        "session": self.session_name,
                    },
                )
        except BrokenPipeError:
            return reader_gone()
        return exit_code
