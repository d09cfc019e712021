"""`baton cancel RUN`: stop a queued or running run from any host.

- A fleet run (one `baton submit` queued on the shared store): a run no worker started yet is
  CANCELLED at once (QUEUED_RUN_CANCELLED); a started one has its job aborted through the job
  engine, and the worker running it interrupts the turn through the run's own interrupt path
  (session/cancel; INTERRUPTED when the agent confirms, RECOVERY_REQUIRED when it does not
  in time).
- A local run: through the data directory's `baton serve` when that service runs it, else
  the `baton run` process of this host that runs it is sent SIGINT, its Ctrl-C (the same
  interrupt path).

It returns once the stop was asked for, not when the run has ended (`baton show RUN`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
from typing import Any, Final
from urllib.parse import quote

from baton.cli.json_output import write_json
from baton.cli.store_access import add_store_option, store_url
from baton.cli.terminal import visible
from baton.errors import RunNotCancellable, ServiceRefused
from baton.views.contract import document

EXAMPLES: Final = """examples:
  baton cancel 3f2a                                   # a unique prefix is enough
  baton cancel run-3f2a... --store postgresql://baton@db/baton   # a fleet run, from any host
"""

#: Bytes of ``/proc/PID/cmdline`` read to check that a run's owner is a `baton` command.
MAX_CMDLINE_BYTES: Final = 64 * 1024


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``cancel`` verb."""
    parser = subparsers.add_parser(
        "cancel",
        help="cancel a queued or running run (a fleet run from any host)",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("run_id", metavar="RUN", help="the run's id, or a unique prefix of it")
    parser.add_argument("--data-dir", metavar="DIR", help="Baton's data directory (or BATON_HOME)")
    parser.add_argument("--config", metavar="FILE", help="the config file ([store] url)")
    parser.add_argument("--json", action="store_true", help="one JSON object")
    add_store_option(parser)
    parser.set_defaults(handler=run)


def _say(args: argparse.Namespace, run_id: str, how: str, text: str) -> int:
    if args.json:
        write_json(sys.stdout, document({"runId": run_id, "cancelling": True, "how": how}))
    else:
        print(f"{run_id}: {text}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    """Handle `baton cancel`."""
    url = store_url(args.store, args.config)
    if url is not None:
        return _cancel_shared(args, url)
    return _cancel_local(args)


def _cancel_shared(args: argparse.Namespace, url: str) -> int:
    from baton.fleet.queued import QueuedRun
    from baton.store import ACTIVE_RUN_STATUSES, Store
    from baton.views.run_ids import resolve_run

    with Store(url, read_only=True) as store:
        record = resolve_run(store, args.run_id)
        submission = store.find_submission(record.id)
    if submission is None:
        return _cancel_owned(args, record)  # a `baton run --store` run: its own process
    _check_active(record)
    queued = QueuedRun(url, record.id)
    if asyncio.run(queued.cancel()):
        return _say(args, record.id, "cancelled", "cancelled (no worker had started it)")
    if asyncio.run(queued.abort()):
        worker = f" on worker {visible(submission.worker, 80)}" if submission.worker else ""
        return _say(
            args,
            record.id,
            "aborted",
            f"abort asked{worker}: its worker interrupts the turn (`baton show {record.id}` "
            "shows how it ended)",
        )
    with Store(url, read_only=True) as store:
        now = store.get_run(record.id)
    if now.status not in ACTIVE_RUN_STATUSES:
        raise RunNotCancellable(f"run {record.id} ended meanwhile ({now.status})")
    raise RunNotCancellable(
        f"run {record.id} is {now.status} but its job is not running on any worker; "
        f"`baton recover {record.id}` settles it"
    )


def _check_active(record: Any) -> None:
    from baton.store import ACTIVE_RUN_STATUSES

    if record.status not in ACTIVE_RUN_STATUSES and record.status != "QUEUED":
        raise RunNotCancellable(
            f"run {record.id} already ended ({record.status}): nothing to cancel"
        )


def _cancel_local(args: argparse.Namespace) -> int:
    from baton.cli.service_link import service_for
    from baton.cli.store_access import open_store
    from baton.views.run_ids import resolve_run

    client = service_for(args.data_dir, no_server=False)
    with open_store(args.data_dir, read_only=True) as (store, _journal):
        record = resolve_run(store, args.run_id)
    _check_active(record)
    if client is not None:
        try:
            answer = client.request("POST", f"/api/v1/runs/{quote(record.id, safe='')}/cancel")
        except ServiceRefused as exc:
            if exc.code != "RUN_NOT_ACTIVE":
                raise
        else:
            return _say(
                args,
                str(answer.get("runId") or record.id),
                "service",
                "cancelling in the service (session/cancel; `baton show` shows how it ended)",
            )
    return _cancel_owned(args, record)


def _cancel_owned(args: argparse.Namespace, record: Any) -> int:
    """A run of a `baton run` process: its Ctrl-C (SIGINT), when that process is a live
    `baton` command of this host."""
    from baton.store.owner import current_host, owner_alive, owner_host

    _check_active(record)
    owner = record.owner
    host = owner_host(owner) or current_host()
    if host != current_host():
        raise RunNotCancellable(
            f"run {record.id} is run by a process on host {visible(host, 80)}: cancel it "
            "there (Ctrl-C in its terminal, or `baton cancel` on that host)"
        )
    if not owner_alive(owner):
        raise RunNotCancellable(
            f"run {record.id} is {record.status} but the process that ran it is gone; "
            f"`baton recover {record.id}` settles it"
        )
    pid = int(str(owner).partition(":")[0])
    if not _is_baton_command(pid):
        raise RunNotCancellable(
            f"run {record.id} is run by process {pid}, not a `baton` command (a program using "
            "the library): stop it there (Run.interrupt)"
        )
    os.kill(pid, signal.SIGINT)
    return _say(
        args,
        record.id,
        "signal",
        f"interrupt sent to its `baton` process {pid} (as Ctrl-C there: session/cancel)",
    )


#: The verbs whose process turns SIGINT into its run's interrupt (`baton steer` without a
#: service runs the turn as `baton run` does).
INTERRUPTIBLE_VERBS: Final = frozenset({"run", "steer"})


#: The modules ``python -m`` runs the command line as.
BATON_MODULES: Final = frozenset({"baton", "baton.cli.main", "baton.__main__"})


def _is_baton_command(pid: int) -> bool:
    """Whether process ``pid`` is a `baton run` (``baton run ...`` or ``python -m baton run
    ...``): only such a process turns SIGINT into its run's interrupt (a `baton serve` would
    stop)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            argv = [a.decode(errors="replace") for a in handle.read(MAX_CMDLINE_BYTES).split(b"\0")]
    except OSError:
        return False
    for index, word in enumerate(argv[:4]):
        prior = argv[index - 1] if index else ""
        entry = os.path.basename(word) == "baton" and not prior.startswith("-")
        module = prior == "-m" and word in BATON_MODULES
        if (entry or module) and index + 1 < len(argv):
            return argv[index + 1] in INTERRUPTIBLE_VERBS
    return False
