"""`baton submit [--queue Q] --agent A | --agent-command CMD [--session NAME] ... PROMPT`:
queue one turn on the fleet (a shared PostgreSQL store; docs/fleet.md) and print its run id
(QUEUED), with a warning when no live worker reads its queue. ``--wait`` follows the run to
its end exactly as `baton run` prints a run (the same printer: the reply, tool and permission
lines, the summary, the error and next step; ``--json``: one JSON object per line, the last
the result) and exits with the run's exit code; Ctrl-C cancels the run (its worker interrupts
the turn), a second stops following. ``--timeout`` bounds the whole run, the time it waits in
the queue included."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from typing import Any, Final

from baton.cli import exit_codes
from baton.cli.json_output import write_json
from baton.cli.store_access import add_store_option, store_url
from baton.cli.terminal import Screen
from baton.cli.workspace_options import add_workspace_options, workspace_ask
from baton.errors import BatonError, ConfigurationError
from baton.views.contract import SCHEMA_VERSION, document

EXAMPLES: Final = """examples:
  baton submit --store postgresql://baton@db/baton --agent claude "Fix the failing test"
  baton submit --queue gpu-hosts --agent codex --wait "Explain this repository"
  baton submit --session review-42 --agent claude "Now check the docs"   # same host as before
  BATON_STORE=postgresql://baton@db/baton baton submit --idempotency-key ci-123 --agent claude "..."
"""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``submit`` verb."""
    parser = subparsers.add_parser(
        "submit",
        help="queue a turn for the fleet's workers",
        description="Queue one turn on the fleet's shared store and print its run id (QUEUED).",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt", help="the prompt text")
    agent = parser.add_mutually_exclusive_group(required=True)
    agent.add_argument("--agent", metavar="PROFILE", help="the agent profile the worker runs")
    agent.add_argument("--agent-command", metavar="CMD", help="an ad-hoc ACP agent command")
    parser.add_argument("--queue", default="default", help="the queue (default: default)")
    parser.add_argument(
        "--session", metavar="NAME", help="a named session: its turns run in order on one host"
    )
    parser.add_argument("--cwd", metavar="DIR", help="the working directory on the worker's host")
    add_workspace_options(parser)
    parser.add_argument("--policy", default="ask", choices=("ask", "auto-edits", "full"))
    parser.add_argument("--allow-unattended", action="store_true")
    parser.add_argument("--mode")
    parser.add_argument("--model")
    parser.add_argument("--effort")
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="SECONDS",
        help="the run's absolute bound, the time it waits in the queue included (a run no "
        "worker started in time ends CANCELLED, BUDGET_EXPIRED, exit 3)",
    )
    parser.add_argument("--idle-timeout", type=float, metavar="SECONDS")
    parser.add_argument(
        "--idempotency-key", metavar="KEY", help="a second submission with KEY is the same run"
    )
    parser.add_argument("--wait", action="store_true", help="follow the run to its end")
    parser.add_argument("--json", action="store_true", help="JSON output")
    parser.add_argument("--config", metavar="FILE", help="the config file ([store] url)")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def shared_store_url(flag: str | None, config: str | None) -> str:
    """The fleet's store URL; CONFIG_ERROR when none is set (the queue needs PostgreSQL)."""
    url = store_url(flag, config)
    if url is None:
        raise ConfigurationError(
            "the queue needs a shared store: --store postgresql://..., BATON_STORE, or the "
            "config file's [store] url"
        )
    return url


def _worker_workspace(value: str | None) -> str | None:
    """``--workspace`` for a worker: a directory is made absolute, not resolved (it names a
    path on the worker's host); a sandbox setting is refused here."""
    if value in (None, "none", "worktree", "danger-full-access"):
        return workspace_ask(value)
    workspace_ask(value)  # EXECUTION_SETTING_UNSUPPORTED for a sandbox setting
    return os.path.abspath(str(value))


def run(args: argparse.Namespace) -> int:
    """Handle `baton submit`."""
    from baton.fleet.queued import TurnSubmission

    url = shared_store_url(args.store, args.config)
    cwd = os.path.abspath(args.cwd) if args.cwd else None
    submission = TurnSubmission(
        prompt=args.prompt,
        agent=args.agent,
        agent_command=args.agent_command,
        session=args.session,
        queue=args.queue,
        cwd=cwd,
        policy=args.policy,
        allow_unattended=args.allow_unattended,
        mode=args.mode,
        model=args.model,
        effort=args.effort,
        idle_timeout=args.idle_timeout,
        timeout=args.timeout,
        idempotency_key=args.idempotency_key,
        workspace=_worker_workspace(args.workspace),
        base=args.base,
        require_clean=args.require_clean,
    )

    return asyncio.run(_Follow(args, submission, url).go())


#: The warning code `baton submit` prints when no live worker reads the run's queue.
NO_LIVE_WORKER: Final = "NO_LIVE_WORKER"


class _Follow:
    """One `baton submit`: the submission, the no-worker warning, and with ``--wait`` the
    run followed to its end with `baton run`'s printer, Ctrl-C and exit codes."""

    def __init__(self, args: argparse.Namespace, submission: Any, url: str) -> None:
        from baton.cli.run_text import TextPrinter

        self.args = args
        self.submission = submission
        self.url = url
        self.screen = Screen(sys.stdout, sys.stderr)
        self.printer: TextPrinter | None = None if args.json else TextPrinter(self.screen)
        self.interrupts = 0
        self.queued: Any = None
        self._main: asyncio.Task[Any] | None = None
        self._tasks: set[asyncio.Future[Any]] = set()

    async def go(self) -> int:
        from baton.fleet.queued import submit

        queued = await submit(self.url, self.submission)
        self.queued = queued
        args = self.args
        if args.json:
            write_json(
                sys.stdout,
                document({"runId": queued.run_id, "status": "QUEUED", "created": queued.created}),
            )
        else:
            print(queued.run_id, flush=True)
        self._warn_without_worker(queued.run_id)
        if not args.wait:
            return exit_codes.OK
        loop = asyncio.get_running_loop()
        self._main = asyncio.current_task()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGINT, self._on_sigint)
        expiry = None
        if args.timeout is not None:
            expiry = asyncio.ensure_future(self._expire_queued(args.timeout))
        if self.printer is not None:
            self.screen.start_spinner()
        try:
            return await self._follow()
        except asyncio.CancelledError:
            self.screen.end()
            print(
                f"baton: stopped following run {queued.run_id}; it goes on on its worker "
                f"(`baton cancel {queued.run_id}` stops it, `baton show {queued.run_id}` "
                "shows it)",
                file=sys.stderr,
            )
            return exit_codes.INTERRUPTED
        finally:
            if expiry is not None:
                expiry.cancel()
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGINT)

    def _warn_without_worker(self, run_id: str) -> None:
        """``! NO_LIVE_WORKER: ...`` on stderr when no live worker reads the run's queue."""
        from baton.cli.run_text import warning_line
        from baton.fleet.limits import LEASE_SECONDS
        from baton.fleet.queued import serving_workers
        from baton.store import Store

        with Store(self.url, read_only=True) as store:
            queue = store.get_submission(run_id).queue
            if serving_workers(store, queue):
                return
        wait = (
            f"; --timeout {self.args.timeout:g} ends it then"
            if self.args.timeout is not None
            else ""
        )
        self.screen.note(
            warning_line(
                self.screen,
                {
                    "code": NO_LIVE_WORKER,
                    "message": (
                        f"no live worker reads queue {queue} (none has a heartbeat within "
                        f"{LEASE_SECONDS:g}s): the run waits QUEUED until one starts "
                        f"(`baton worker --queue {queue}`){wait}"
                    ),
                },
            )
        )

    async def _expire_queued(self, timeout: float) -> None:
        """At ``timeout`` seconds, end the run BUDGET_EXPIRED if it is still queued."""
        await asyncio.sleep(timeout)
        with contextlib.suppress(BatonError):
            await self.queued.expire_if_queued(timeout)

    def _on_sigint(self) -> None:
        """Ctrl-C as in `baton run`: the first stops the run (cancelled if queued, else its
        worker interrupts the turn) and keeps following it; the second stops following."""
        self.interrupts += 1
        if self.interrupts == 1:
            task = asyncio.ensure_future(self._interrupt())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            self.screen.note(
                "^C cancelling the run (its worker interrupts the turn; Ctrl-C again stops "
                "following it)"
            )
        elif self._main is not None:
            self._main.cancel()

    async def _interrupt(self) -> None:
        with contextlib.suppress(BatonError):
            await self.queued.interrupt("user")

    async def _follow(self) -> int:
        from baton.cli.run_text import next_step, warning_line
        from baton.runtime.runtime import RunResult

        text: list[str] = []
        permissions: list[dict[str, Any]] = []
        result_event = None
        async for event in self.queued.events():
            if event.type == "result":
                result_event = event
                break
            if event.type == "text":
                text.append(str(event.data.get("text", "")))
            elif event.type == "permission":
                permissions.append(dict(event.data))
            elif event.type == "usage" and self.printer is not None:
                self.printer.usage = dict(event.data)
            if self.printer is not None:
                self.printer(event)
            else:
                sys.stdout.buffer.write(event.to_json() + b"\n")
                sys.stdout.flush()
                if event.type == "warning":
                    self.screen.note(warning_line(self.screen, event.data))
        assert result_event is not None, "events() ends with a result event"
        result = RunResult.from_event(result_event, text="".join(text), permissions=permissions)
        if self.printer is not None:
            self.printer.summary(result, result.exit_code, False, self.args.session)
        else:
            write_json(
                sys.stdout,
                {
                    **result_event.to_dict(),
                    "schemaVersion": SCHEMA_VERSION,
                    "exitCode": result.exit_code,
                    "nextStep": next_step(result, result.exit_code),
                    "session": self.args.session,
                },
            )
        return result.exit_code
