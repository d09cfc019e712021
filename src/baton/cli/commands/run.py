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
import math
import os
import signal
import sys
from collections.abc import Mapping
from typing import Any, Final, Literal

from baton.cli import exit_codes
from baton.cli.elicitation_prompt import terminal_elicitor
from baton.cli.json_output import write_json
from baton.cli.main import reader_gone
from baton.cli.permission_prompt import TtyAsker, terminal_asker
from baton.cli.remote_turn import cancel_through_service, prompt_through_service
from baton.cli.service_link import ServiceClient, service_for
from baton.cli.store_access import add_store_option
from baton.cli.terminal import Screen, error_line, visible
from baton.cli.usage_view import usage_text
from baton.cli.workspace_options import add_workspace_options
from baton.cli.workspace_view import counts_line, unreported_lines
from baton.errors import (
    AgentLaunchFailed,
    BatonError,
    PolicyNotAvailable,
    SessionBusy,
    SessionNotFound,
    SessionRecoveryRequired,
)
from baton.runtime.agents.config_file import load_config
from baton.runtime.conversations.turn_queue import DEFAULT_WAIT_SECONDS
from baton.runtime.permissions.ask import NoUserAsker
from baton.runtime.permissions.policies import POLICIES, ExecutionSettings
from baton.runtime.runtime import AgentNotInstalled, RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.runtime.turns.turn import INTERRUPT_COMPLETION_TIMEOUT_SECONDS, Turn
from baton.runtime.workspaces.tracking import split_workspace_flag
from baton.store.location import resolve_store
from baton.views.contract import SCHEMA_VERSION, error_document
from baton.wire.budget import BOUND_OFF, DEFAULT_IDLE_TIMEOUT_SECONDS
from baton.wire.system_prompt import MAX_SYSTEM_PROMPT_CHARS
from baton.wire.version import PROTOCOL_CHOICES, parse_protocol_choice

#: Characters of the prompt read from stdin (`baton run -`), at most.
MAX_STDIN_PROMPT_CHARS: Final = 4 * 1024 * 1024
#: Characters of a thought shown on its line (the whole thought is in --json and the store).
MAX_THOUGHT_CHARS: Final = 200
#: Plan entries shown on the plan line; the rest are counted.
MAX_PLAN_ENTRIES: Final = 8
#: Seconds between two looks at the agent's stderr with --verbose.
STDERR_POLL_SECONDS: Final = 0.1

EXAMPLES: Final = """examples:
  baton run --agent claude "Explain this repository"
  baton run --agent claude --mode acceptEdits "Fix the failing test"   # Claude's own edit mode
  baton run --agent-command "baton agent scripted" "echo hi; stream 3" --json
  echo "Summarize CHANGES.md" | baton run --agent codex -
  baton run --agent codex --policy auto-edits --fail-on-denied --timeout 600 "Fix lint"
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` verb."""
    parser = subparsers.add_parser(
        "run",
        help="run one prompt against an agent",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES + "\n" + exit_codes.EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", metavar="PROMPT", help="the prompt, or - to read it from stdin")
    agent = parser.add_mutually_exclusive_group()
    agent.add_argument("--agent", metavar="NAME", help="a profile: claude, codex, cursor, ...")
    agent.add_argument(
        "--agent-command",
        metavar='"CMD ARGS"',
        help="a custom ACP agent command (split like a shell; no shell is used)",
    )
    agent.add_argument(
        "--session",
        metavar="NAME",
        help="the next turn of this named session (`baton session new`); its agent, cwd and "
        "settings are the session's. Runs in the data directory's `baton serve` when one runs",
    )
    parser.add_argument(
        "--no-server",
        action="store_true",
        help="with --session: run the turn in this process even when a `baton serve` runs",
    )
    parser.add_argument(
        "--continue",
        action="store_true",
        dest="continue_latest",
        help="the next turn of the most recently used session of this cwd and agent",
    )
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help=f"with a session: fail SESSION_BUSY (exit {exit_codes.SESSION_BUSY}) instead of "
        "waiting while another turn of it runs",
    )
    parser.add_argument(
        "--wait-timeout",
        type=bound,
        default=DEFAULT_WAIT_SECONDS,
        metavar="SECONDS|off",
        help=f"with a session: how long to wait for a running turn (default {DEFAULT_WAIT_SECONDS:g})",
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
        "--fail-on-denied",
        action="store_true",
        help=f"exit {exit_codes.PERMISSION_NOT_GRANTED} when the turn completed but a permission "
        "was denied or cancelled (nobody allowed it)",
    )
    add_workspace_options(parser)
    parser.add_argument(
        "--fail-on-unreported",
        action="store_true",
        help=f"exit {exit_codes.UNREPORTED_CHANGES} when the turn completed but changed a "
        "workspace file no tool call or permission reported",
    )
    parser.add_argument(
        "--lane",
        choices=("default", "review"),
        default="default",
        help="the process lane: review is grok's read-only sandboxed process (edits refused)",
    )
    parser.add_argument(
        "--protocol",
        choices=PROTOCOL_CHOICES,
        default=None,
        help="the ACP version to offer and accept: auto (offer 1, or 2 where the profile "
        "declares v2 support; accept 1 or 2), 1 or 2 (default: the profile's, auto unless "
        "pinned)",
    )
    parser.add_argument("--mode", metavar="ID", help="the session mode (exact id)")
    parser.add_argument("--model", metavar="ID", help="the model (exact advertised id)")
    parser.add_argument(
        "--effort", metavar="LEVEL", help="reasoning effort (matched, sent as advertised)"
    )
    parser.add_argument(
        "--set-option",
        "--option",
        action="append",
        default=[],
        metavar="ID=VALUE",
        dest="option_values",
        help="set a session config option (repeatable)",
    )
    parser.add_argument(
        "--tools", metavar="FILE", help="trusted MCP stdio server declarations (JSON)"
    )
    parser.add_argument(
        "--attach", action="append", default=[], metavar="FILE", help="attach a file (repeatable)"
    )
    parser.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        dest="add_dirs",
        help="an additional workspace root (an existing directory; repeatable); needs the "
        "agent's sessionCapabilities.additionalDirectories",
    )
    prompts = parser.add_mutually_exclusive_group()
    prompts.add_argument(
        "--system-prompt",
        metavar="TEXT|@FILE",
        help="replace the agent's default instructions (unstable ACP; needs "
        "sessionCapabilities.systemPrompt.mode.override)",
    )
    prompts.add_argument(
        "--append-system-prompt",
        metavar="TEXT|@FILE",
        help="add to the agent's instructions (unstable ACP; needs sessionCapabilities.systemPrompt)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=idle_bound,
        metavar="SECONDS|off",
        help=(
            "the turn's idle bound: seconds without any message from the agent (a positive "
            f"number, or off; default: the profile's, the config file's, else "
            f"{DEFAULT_IDLE_TIMEOUT_SECONDS:g})"
        ),
    )
    parser.add_argument(
        "--timeout",
        type=bound,
        metavar="SECONDS|off",
        help="the turn's absolute bound (a positive number of seconds, or off)",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    add_store_option(parser)
    parser.add_argument(
        "--config",
        "--config-file",
        metavar="FILE",
        dest="config_file",
        help="Baton's config file (or BATON_CONFIG)",
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument(
        "--json", action="store_const", const="json", dest="format", help="one JSON event per line"
    )
    output.add_argument(
        "--format", choices=("text", "json"), help="output format (--json is --format json)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also show the agent's stderr (redacted) as it arrives",
    )
    parser.add_argument("--network", default="enabled", help=argparse.SUPPRESS)
    parser.add_argument("--reviewer", default="user", help=argparse.SUPPRESS)
    parser.set_defaults(handler=run, format=None)


def bound(value: str) -> float | None:
    """A time bound: a positive, finite number of seconds, or ``off`` (None: no bound)."""
    if value.strip().lower() == BOUND_OFF:
        return None
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not (seconds > 0 and math.isfinite(seconds)):
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a positive number of seconds (or {BOUND_OFF})"
        )
    return seconds


def idle_bound(value: str) -> float | Literal["off"]:
    """An idle bound: a positive, finite number of seconds, or ``off`` (kept as ``"off"``:
    it overrides the profile's, the config file's and the default bound)."""
    seconds = bound(value)
    return BOUND_OFF if seconds is None else seconds


def _option_values(values: list[str]) -> dict[str, str]:
    parsed: dict[str, str] = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadFlag(f"--set-option takes ID=VALUE, got {item!r}")
        parsed[key] = value
    return parsed


class BadFlag(BatonError):
    """A flag's value is malformed."""

    code = "USAGE_ERROR"
    fault = "caller"


# --- text output ---------------------------------------------------------------------------


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 event``, ``2 events``."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def permission_counts(permissions: list[dict[str, Any]]) -> dict[str, int]:
    """Permission decisions counted: ``granted`` (an allow option chosen), ``denied`` (a
    reject option chosen) and ``cancelled`` (answered cancelled: nobody chose)."""
    counts = {"granted": 0, "denied": 0, "cancelled": 0}
    for view in permissions:
        if view.get("outcome") != "selected":
            counts["cancelled"] += 1
            continue
        kinds = {o.get("optionId"): o.get("kind") for o in view.get("options") or []}
        kind = str(kinds.get(view.get("optionId")) or "")
        counts["granted" if kind.startswith("allow") else "denied"] += 1
    return counts


#: Notice severity -> its mark and colour in text output (other severities: the info mark).
def warning_line(screen: Screen, data: Mapping[str, Any]) -> str:
    """A ``warning`` event as the one stderr line both output formats print."""
    return screen.style(
        f"! {visible(str(data.get('code')), 60)}: {visible(str(data.get('message')))}", "yellow"
    )


NOTICE_MARKS: Final = {"info": ("ℹ", "dim"), "warning": ("!", "yellow"), "error": ("✗", "red")}


class TextPrinter:
    """Human output: the reply on stdout, everything else compact on stderr, through the
    terminal layer (every agent string sanitized)."""

    def __init__(self, screen: Screen) -> None:
        self.screen = screen
        # toolCallId -> the status last printed for it ("" while nothing was printed).
        self._tools: dict[str, str] = {}
        # compactionId -> the status last printed for it.
        self._compactions: dict[str, str] = {}
        self.usage: dict[str, Any] | None = None
        self._thought = ""

    def _note(self, text: str) -> None:
        self.screen.note(text)

    def flush_thought(self) -> None:
        """The thought streamed so far, as one line (cut to :data:`MAX_THOUGHT_CHARS`)."""
        if self._thought.strip():
            text = visible(self._thought.strip(), MAX_THOUGHT_CHARS)
            self._note(self.screen.style(f"· thinking: {text}", "dim"))
        self._thought = ""

    def __call__(self, event: RunEvent) -> None:
        data = event.data
        kind = event.type
        if kind == "thought":
            # A thought streams in parts: shown as one line when something else comes.
            self._thought += str(data.get("text", ""))
            return
        self.flush_thought()
        if kind == "text":
            self.screen.reply(str(data.get("text", "")))
        elif kind == "tool_call":
            self._tool(data)
        elif kind == "plan":
            entries = data.get("entries") or []
            shown = "; ".join(
                f"[{visible(str(e.get('status')), 20)}] {visible(str(e.get('content')))}"
                for e in entries[:MAX_PLAN_ENTRIES]
            )
            more = len(entries) - MAX_PLAN_ENTRIES
            self._note(f"☰ plan: {shown}" + (f" (+{more} more)" if more > 0 else ""))
        elif kind == "permission":
            self._permission(data)
        elif kind == "usage":
            self.usage = dict(data)
        elif kind == "notice":
            self._notice(data)
        elif kind == "compaction":
            self._compaction(data)
        elif kind == "warning":
            self._note(warning_line(self.screen, data))

    def _tool(self, data: dict[str, Any]) -> None:
        """One line when a tool call first has a title, and one when it ends; the updates in
        between (an empty first title, in_progress, content) print nothing."""
        call_id = str(data.get("toolCallId") or "")
        status = str(data.get("status") or "pending")
        title = str(data.get("title") or "")
        printed = self._tools.get(call_id, "")
        ended = status in ("completed", "failed")
        if printed == status or (printed and not ended) or (not title and not ended):
            self._tools.setdefault(call_id, printed)
            return
        self._tools[call_id] = status
        tool_kind = str(data.get("kind") or "tool")
        target = data.get("command") or ", ".join(str(p) for p in data.get("paths") or [])
        shown = visible(title or tool_kind)
        name = str(data.get("name") or "")
        if name and name not in title:
            shown += f" ({visible(name, 60)})"
        nested = "  ↳ " if data.get("parentToolCallId") else ""
        line = f"{nested}⚙ {visible(tool_kind, 20)} {shown}"
        if target and str(target) not in title:
            line += f" {visible(str(target))}"
        diff = data.get("diff")
        if isinstance(diff, dict) and ("added" in diff or "removed" in diff):
            line += f" +{diff.get('added', 0)} -{diff.get('removed', 0)}"
        mark = {"completed": ("green",), "failed": ("red",)}.get(status, ("dim",))
        self._note(f"{line} {self.screen.style(f'[{visible(status, 20)}]', *mark)}")

    def _notice(self, data: dict[str, Any]) -> None:
        """One line per notice: severity mark, title, and the description after a dash."""
        severity = str(data.get("severity") or "info")
        mark, colour = NOTICE_MARKS.get(severity, NOTICE_MARKS["info"])
        label = "" if severity in NOTICE_MARKS else f"[{visible(severity, 32)}] "
        text = f"{mark} notice: {label}{visible(str(data.get('title') or ''))}"
        description = data.get("description")
        if description:
            text += f" — {visible(str(description))}"
        self._note(self.screen.style(text, colour))

    def _compaction(self, data: dict[str, Any]) -> None:
        """One line when a compaction starts or changes status (chunks print nothing)."""
        compaction_id = str(data.get("compactionId") or "")
        status = str(data.get("status") or "")
        if self._compactions.get(compaction_id) == status:
            return
        self._compactions[compaction_id] = status
        line = f"⟲ context compaction [{visible(status, 20)}]"
        error = data.get("error")
        if error:
            line += f": {visible(str(error))}"
        elif status == "completed" and data.get("summary"):
            line += f": {visible(str(data['summary']).replace(chr(10), ' '), MAX_THOUGHT_CHARS)}"
        self._note(self.screen.style(line, "dim"))

    def _permission(self, data: dict[str, Any]) -> None:
        by = visible(str(data.get("chosenBy")), 20)
        if data.get("outcome") == "selected":
            kinds = {o.get("optionId"): o.get("kind") for o in data.get("options") or []}
            option = str(data.get("optionId"))
            allowed = str(kinds.get(option) or "").startswith("allow")
            mark = self.screen.style("✓", "green") if allowed else self.screen.style("✗", "red")
            self._note(f"{mark} permission: {visible(option, 80)} (chosen by {by})")
        else:
            reason = visible(str(data.get("reason") or data.get("reasonCode") or ""), 120)
            self._note(f"{self.screen.style('✗', 'red')} permission: cancelled ({reason})")

    def summary(
        self,
        result: RunResult,
        exit_code: int,
        fail_on_denied: bool,
        session: str | None = None,
    ) -> None:
        """The run's last stderr lines: stop reason, counts, usage, time, the run (and the
        named session it was a turn of), then the error and the next step."""
        self.flush_thought()
        self.screen.end()
        counts = permission_counts(result.permissions)
        parts = [
            result.stop_reason or result.status.lower(),
            plural(result.tool_calls, "tool call"),
        ]
        if result.permissions:
            parts.append(
                f"permissions {counts['granted']} granted, {counts['denied']} denied, "
                f"{counts['cancelled']} cancelled"
            )
        usage = usage_text(self.usage)
        if usage:
            parts.append(usage)
        parts += [f"{result.duration_ms / 1000:.1f}s", f"run {result.run_id}"]
        if session is not None:
            parts.append(f"session {visible(session, 64)}")
        if result.workspace_changes is not None:
            self._note(counts_line(result.workspace_changes))
            for line in unreported_lines(result.workspace_changes):
                self._note(self.screen.style(line, "yellow"))
        self._note("— " + " · ".join(parts))
        unanswered = counts["denied"] + counts["cancelled"]
        if result.status == "COMPLETED" and unanswered and not fail_on_denied:
            self._note(
                f"! {plural(unanswered, 'permission request')} not granted; "
                f"--fail-on-denied makes that exit {exit_codes.PERMISSION_NOT_GRANTED}"
            )
        if exit_code != 0 and result.error_code:
            self._note(
                self.screen.style(
                    f"{result.error_code}: {visible(result.message or result.status, None, newlines=True)}",
                    "red",
                )
            )
        hint = next_step(result, exit_code)
        if hint:
            self._note(f"next: {hint}")


def next_step(result: RunResult, exit_code: int) -> str | None:
    """What the user should do next after ``result``, with the real run id."""
    run_id = result.run_id
    if exit_code == exit_codes.RECOVERY_REQUIRED or result.status == "RECOVERY_REQUIRED":
        return (
            "the outcome is ambiguous and will not be replayed: inspect and settle it with "
            f"`baton recover {run_id}`"
        )
    if exit_code == exit_codes.PERMISSION_NOT_GRANTED:
        return (
            "nobody allowed the agent's request: answer it on a terminal (--policy ask), use a "
            "policy the profile exposes, or the agent's own edit mode (e.g. --mode acceptEdits "
            "for claude)"
        )
    if exit_code == exit_codes.BUDGET:
        return (
            "a turn budget elapsed: raise --idle-timeout/--timeout, or check the agent with "
            "`baton doctor --live`"
        )
    if exit_code == exit_codes.AUTH_REQUIRED:
        return "sign in with the agent's own command, then run again (`baton doctor --live` shows its methods)"
    if result.error_code == "NOT_AN_ACP_AGENT":
        return (
            "the command ran but does not speak ACP: name an ACP adapter (or its ACP flag); "
            "`baton doctor` lists the agents it found"
        )
    if exit_code == exit_codes.NOT_INSTALLED:
        return (
            "install the agent or point BATON_*_ACP_BIN at it; `baton doctor` shows what was found"
        )
    if result.error_code in ("TRANSPORT_CLOSED", "AGENT_PROTOCOL_ERROR") and not result.session_id:
        return (
            "the agent stopped before a session opened: run its command yourself to see why, "
            f"or add -v to watch its stderr; `baton show {run_id}` keeps this diagnostic"
        )
    return None


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


def run(args: argparse.Namespace) -> int:
    """Handle `baton run`."""
    fmt = args.format or "text"
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
            idle_timeout=args.idle_timeout,
            timeout=args.timeout,
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
        self.turn: Turn | None = None
        self.run_id: str | None = None
        self.interrupts = 0
        self.reader_left = False
        self.result_event: RunEvent | None = None
        self.usage: dict[str, Any] | None = None
        self.launch_command = ""
        self._main: asyncio.Task[Any] | None = None
        #: The service and session name when the turn runs in `baton serve`.
        self.remote: tuple[ServiceClient, str] | None = None

    # --- the event sink -----------------------------------------------------------------

    def emit(self, event: RunEvent) -> None:
        if event.type == "run_started":
            self.run_id = event.run_id
            self.launch_command = str(event.data.get("command") or "")
        elif event.type == "usage":
            self.usage = dict(event.data)
        elif event.type == "result":
            self.result_event = event  # written last, completed with what only the CLI knows
            return
        if self.reader_left:
            if self.turn is not None and event.run_id:
                self.turn.interrupt("reader")
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
        if self.turn is not None:
            self.turn.interrupt("reader")

    def on_turn(self, turn: Turn) -> None:
        # A reader gone before the turn started: the turn is cancelled once its first event
        # shows the prompt under way (see emit), not while it is being submitted.
        self.turn = turn

    # --- Ctrl-C ---------------------------------------------------------------------------

    def on_sigint(self) -> None:
        self.interrupts += 1
        if self.remote is not None and self.interrupts == 1:
            client, name = self.remote
            with contextlib.suppress(BatonError):
                cancel_through_service(client, name)
            self.screen.note("^C cancelling the turn in the service (Ctrl-C again stops waiting)")
            return
        if self.turn is not None and self.interrupts == 1:
            self.turn.interrupt("user")
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
        shown: dict[int, str] = {}
        while True:
            await asyncio.sleep(STDERR_POLL_SECONDS)
            self._show_new_stderr(shown)

    def _show_new_stderr(self, shown: dict[int, str]) -> None:
        for lane in list(self.runtime.lanes.values()):
            tail = lane.stderr_tail()
            previous = shown.get(id(lane), "")
            if tail == previous:
                continue
            new = tail[len(previous) :] if tail.startswith(previous) else tail
            complete, sep, _partial = new.rpartition("\n")
            if not sep:
                continue
            shown[id(lane)] = previous + complete + sep if tail.startswith(previous) else tail
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
                await self._record_launch(result.run_id)
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
            return await self.runtime.run(self.request, on_event=self.emit, on_turn=self.on_turn)
        if args.session is not None:
            client = service_for(args.data_dir, no_server=args.no_server)
            if client is not None:
                self.session_name = args.session
                self.remote = (client, args.session)
                return await prompt_through_service(
                    client,
                    args.session,
                    self.request,
                    no_wait=args.no_wait,
                    wait_timeout=args.wait_timeout,
                    emit=self.emit,
                )
        # Only a turn of a named session loads the conversations service (issue 34).
        from baton.runtime.conversations import Conversations, PromptOptions

        conversations = Conversations(self.runtime)
        name = args.session
        if name is None:
            latest = await conversations.latest(
                self.request.cwd, agent=args.agent, agent_command=args.agent_command
            )
            if latest is None:
                raise SessionNotFound(
                    "no open session of this cwd and agent; start one with `baton session new`"
                )
            name = latest.name
        self.session_name = name
        options = PromptOptions(
            policy=self.request.policy,
            allow_unattended=self.request.allow_unattended,
            tools_file=self.request.tools_file,
            idle_timeout=self.request.idle_timeout,
            timeout=self.request.timeout,
            attachments=self.request.attachments,
            wait=not args.no_wait,
            wait_timeout=args.wait_timeout,
        )
        return await conversations.prompt(
            name, self.request.prompt, options, on_event=self.emit, on_turn=self.on_turn
        )

    async def _record_launch(self, run_id: str) -> None:
        """An ad-hoc agent's command, recorded on its run so `baton recover --attach` can
        start the same agent again (redacted like everything the lane records)."""
        if self.request.agent_command is None or not self.launch_command:
            return
        command = self.launch_command
        for lane in self.runtime.lanes.values():
            if lane.spec.launch_form == command:
                command = lane.redact(command)
        store = self.runtime.store
        if store is None:
            return
        with contextlib.suppress(BatonError):
            await store.record_observation(
                "BATON_RESOLUTION",
                {"launch": {"command": command, "envKeys": list(self.request.env_keys)}},
                run_id=run_id,
            )

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
                        "nextStep": next_step(result, exit_code),
                        "session": self.session_name,
                    },
                )
        except BrokenPipeError:
            return reader_gone()
        return exit_code
