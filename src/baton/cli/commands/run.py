"""`baton run [OPTIONS] PROMPT`: run one prompt against an agent.

Output, --format text (the default): the agent's reply streams to stdout as it arrives; tool
calls, plans and permission decisions go to stderr compactly, with a spinner while waiting on a
TTY, and a one-line summary at the end (stop reason, tool calls, time, run id).

Output, --format json: one JSON object per line on stdout, Baton's normalized events (see
docs/events.md); the last line is the run result ``{"type": "result", "runId", "status",
"stopReason", "exitCode", ...}``.

Ctrl-C interrupts the turn: Baton sends session/cancel and waits up to 15 s for the agent's
``cancelled`` answer (exit 130); a second Ctrl-C stops waiting (the run is then
RECOVERY_REQUIRED, exit 6).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from typing import IO

from baton.cli import exit_codes
from baton.cli.permission_prompt import terminal_asker
from baton.errors import AgentLaunchFailed, BatonError
from baton.runtime.agents.config_file import load_config
from baton.runtime.permissions.ask import NoUserAsker
from baton.runtime.permissions.policies import POLICIES, ExecutionSettings
from baton.runtime.runtime import AgentNotInstalled, RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.turn import Turn

#: Characters of the prompt read from stdin (`baton run -`), at most.
MAX_STDIN_PROMPT_CHARS = 4 * 1024 * 1024

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` verb."""
    parser = subparsers.add_parser(
        "run",
        help="run one prompt against an agent",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", metavar="PROMPT", help="the prompt, or - to read it from stdin")
    agent = parser.add_mutually_exclusive_group(required=True)
    agent.add_argument("--agent", metavar="NAME", help="a profile: claude, codex, cursor, ...")
    agent.add_argument(
        "--agent-command",
        metavar='"CMD ARGS"',
        help="a custom ACP agent command (split like a shell; no shell is used)",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY",
        help="pass this environment variable to an --agent-command agent (repeatable)",
    )
    parser.add_argument("--cwd", metavar="DIR", help="the session's working directory (default: .)")
    parser.add_argument(
        "--policy",
        choices=POLICIES,
        default="ask",
        help="how permission requests are answered (default: ask)",
    )
    parser.add_argument(
        "--allow-unattended",
        action="store_true",
        help="let an --agent-command agent use auto-edits and full (recorded on the run)",
    )
    parser.add_argument(
        "--lane",
        choices=("default", "review"),
        default="default",
        help="the process lane: review is grok's read-only sandboxed process (edits refused)",
    )
    parser.add_argument("--mode", metavar="ID", help="the session mode (exact id)")
    parser.add_argument("--model", metavar="ID", help="the model (exact advertised id)")
    parser.add_argument(
        "--effort", metavar="LEVEL", help="reasoning effort (matched, sent as advertised)"
    )
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="ID=VALUE",
        dest="config_values",
        help="a session config option (repeatable)",
    )
    parser.add_argument(
        "--tools", metavar="FILE", help="trusted MCP stdio server declarations (JSON)"
    )
    parser.add_argument(
        "--attach", action="append", default=[], metavar="FILE", help="attach a file (repeatable)"
    )
    parser.add_argument(
        "--idle-timeout", type=float, metavar="SECONDS", help="the turn's idle bound"
    )
    parser.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="the turn's absolute bound"
    )
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.add_argument(
        "--config-file", metavar="FILE", help="Baton's config file (or BATON_CONFIG)"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")
    parser.add_argument(
        "--workspace",
        default="danger-full-access",
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--network", default="enabled", help=argparse.SUPPRESS)
    parser.add_argument("--reviewer", default="user", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run)


def _config_values(values: list[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadFlag(f"--config takes ID=VALUE, got {item!r}")
        parsed[key] = value
    return parsed


class BadFlag(BatonError):
    """A flag's value is malformed."""

    code = "USAGE_ERROR"
    fault = "caller"


class TextPrinter:
    """Human output: the reply on stdout, everything else compact on stderr."""

    def __init__(self, out: IO[str], err: IO[str]) -> None:
        self.out = out
        self.err = err
        self.tty = err.isatty()
        self._spinner: asyncio.Task[None] | None = None
        self._mid_line = False
        self._spinning = False

    def start_spinner(self) -> None:
        if self.tty and self._spinner is None:
            self._spinner = asyncio.ensure_future(self._spin())

    async def _spin(self) -> None:
        index = 0
        while True:
            await asyncio.sleep(0.1)
            if not self._mid_line:
                self.err.write(
                    f"\r{SPINNER_FRAMES[index % len(SPINNER_FRAMES)]} waiting for the agent"
                )
                self.err.flush()
                self._spinning = True
            index += 1

    def _clear_spinner(self) -> None:
        if self._spinning:
            self.err.write("\r\033[K")
            self.err.flush()
            self._spinning = False

    def stop(self) -> None:
        if self._spinner is not None:
            self._spinner.cancel()
            self._spinner = None
        self._clear_spinner()

    def _note(self, text: str) -> None:
        self._clear_spinner()
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False
        self.err.write(text + "\n")
        self.err.flush()

    def __call__(self, event: RunEvent) -> None:
        data = event.data
        if event.type == "text":
            self._clear_spinner()
            text = str(data.get("text", ""))
            self.out.write(text)
            self.out.flush()
            self._mid_line = bool(text) and not text.endswith("\n")
        elif event.type == "thought":
            self._note(f"· thinking: {str(data.get('text', ''))[:200]}")
        elif event.type == "tool_call":
            target = data.get("command") or ", ".join(data.get("paths") or []) or ""
            title = data.get("title") or ""
            self._note(
                f"⚙ {data.get('kind') or 'tool'} {title} {target} [{data.get('status') or 'pending'}]".rstrip()
            )
        elif event.type == "plan":
            entries = data.get("entries") or []
            self._note(
                "☰ plan: "
                + "; ".join(f"[{e.get('status')}] {e.get('content')}" for e in entries[:8])
            )
        elif event.type == "permission":
            if data.get("outcome") == "selected":
                self._note(
                    f"✓ permission: {data.get('optionId')} (chosen by {data.get('chosenBy')})"
                )
            else:
                self._note(f"✗ permission: cancelled ({data.get('reason')})")
        elif event.type == "warning":
            self._note(f"! {data.get('code')}: {data.get('message')}")

    def summary(self, result: RunResult) -> None:
        self._note(
            f"— {result.stop_reason or result.status.lower()} · {result.tool_calls} tool call"
            f"{'' if result.tool_calls == 1 else 's'} · {result.duration_ms / 1000:.1f}s · "
            f"run {result.run_id}"
        )
        if result.exit_code != 0 and result.error_code:
            self._note(f"{result.error_code}: {result.message or result.status}")
            hint = NEXT_STEPS.get(result.exit_code)
            if hint:
                self._note(hint)


NEXT_STEPS = {
    3: "a turn budget elapsed: raise --idle-timeout/--timeout, or check the agent with `baton doctor --live`",
    4: "sign in with the agent's own command, then run again (`baton doctor --live` shows its methods)",
    5: "install the agent or point BATON_*_ACP_BIN at it; `baton doctor` shows what was found",
    6: "the outcome is ambiguous and will not be replayed: inspect it with `baton recover RUN`",
}


def _read_prompt(value: str) -> str:
    if value != "-":
        return value
    text = sys.stdin.read(MAX_STDIN_PROMPT_CHARS + 1)
    if len(text) > MAX_STDIN_PROMPT_CHARS:
        raise BadFlag(f"the prompt on stdin is over {MAX_STDIN_PROMPT_CHARS} characters")
    return text


def run(args: argparse.Namespace) -> int:
    """Handle `baton run`."""
    prompt = _read_prompt(args.prompt)
    config = load_config(args.config_file)
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
        config=_config_values(args.config_values),
        tools_file=args.tools,
        idle_timeout=args.idle_timeout,
        timeout=args.timeout,
        attachments=tuple(args.attach),
        execution=ExecutionSettings(args.workspace, args.network, args.reviewer),
        lane=args.lane,
    )
    # A prompt read from stdin leaves no terminal to ask on: nobody can answer.
    asker = terminal_asker(sys.stdin, sys.stderr) if args.prompt != "-" else NoUserAsker()
    runtime = Runtime(
        data_dir=args.data_dir,
        asker=asker,
        profiles=config.all_profiles(),
        config_overrides=dict(config.executables),
    )
    return asyncio.run(_run(runtime, request, args.format))


async def _run(runtime: Runtime, request: RunRequest, fmt: str) -> int:
    loop = asyncio.get_running_loop()
    printer = TextPrinter(sys.stdout, sys.stderr) if fmt == "text" else None
    turn_box: list[Turn] = []
    main = asyncio.current_task()
    interrupts = 0

    def on_sigint() -> None:
        nonlocal interrupts
        interrupts += 1
        if turn_box and interrupts == 1:
            turn_box[0].interrupt("user")
        elif main is not None:
            main.cancel()

    def emit(event: RunEvent) -> None:
        if printer is not None:
            printer(event)
        else:
            sys.stdout.buffer.write(event.to_json() + b"\n")
            sys.stdout.flush()

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
    if printer is not None:
        printer.start_spinner()
    try:
        async with runtime:
            result = await runtime.run(request, on_event=emit, on_turn=turn_box.append)
    except asyncio.CancelledError:
        if printer is not None:
            printer.stop()
        print(
            "baton: interrupted; the run is RECOVERY_REQUIRED if a prompt was outstanding",
            file=sys.stderr,
        )
        return exit_codes.INTERRUPTED
    except (AgentNotInstalled, AgentLaunchFailed) as exc:
        if printer is not None:
            printer.stop()
        print(f"baton: {exc}", file=sys.stderr)
        return exit_codes.NOT_INSTALLED
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
    if printer is not None:
        printer.stop()
        printer.summary(result)
    return result.exit_code
