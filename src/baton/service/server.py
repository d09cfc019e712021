"""`baton serve`: one runtime for the data directory under uvicorn, on loopback only.

Start: refuse a non-loopback address (SERVE_ADDRESS_NOT_LOOPBACK), take the data directory's
service lock (SERVICE_ALREADY_RUNNING), open the runtime (which passively reconciles what a
killed process left: its runs become RECOVERY_REQUIRED), bind the socket, then publish the
runtime file (URL, pid, token; 0600) for this user's CLI.

Stop (SIGTERM or SIGINT): no new prompt is accepted (503 SERVICE_STOPPING), running turns get
the grace period, then are interrupted (see :meth:`RunLauncher.stop`); the HTTP server closes,
the runtime closes (lanes shut down: anything still ambiguous is RECOVERY_REQUIRED), the
runtime file is removed and the lock released. SIGKILL leaves the same recoverable state as a
killed `baton run`: the kernel drops the lock, and the next start reconciles.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

import uvicorn

from baton.durable.timestamps import format_timestamp
from baton.errors import ServeAddressRefused
from baton.runtime.agents.config_file import load_config
from baton.runtime.permissions.policies import PolicyName
from baton.runtime.runtime import Runtime
from baton.runtime.turns.event_payloads import ServiceEventType
from baton.runtime.turns.events import RunEvent
from baton.service.answerers import CallerAnswers
from baton.service.app import build_app
from baton.service.asking import ApiAsker, PendingPermission
from baton.service.context import Service, ServiceSettings
from baton.service.eliciting import ApiElicitor, PendingElicitation
from baton.service.feeds import FeedBoard, QueueBounds
from baton.service.guard import HostRule
from baton.service.http_protocol import FramingStrictH11Protocol
from baton.service.idle import IdleWatch
from baton.service.launcher import RunLauncher
from baton.service.limits import DEFAULT_ELICITATION_WAIT_SECONDS, DEFAULT_PERMISSION_WAIT_SECONDS
from baton.service.pending_questions import WITHDRAWN
from baton.service.runtime_file import RUNTIME_FILENAME, RuntimeInfo, ServiceLock
from baton.service.tokens import Credentials, token_from
from baton.store import prepare_data_dir, resolve_data_dir

#: The two kinds of pending question the service announces on a run's feed.
QuestionKind = Literal["permission", "elicitation"]
#: Each kind's events: its opening (the pending question's view) and its closing (its id).
QUESTION_EVENTS: Final[dict[QuestionKind, tuple[ServiceEventType, ServiceEventType]]] = {
    "permission": ("permission_request", "permission_closed"),
    "elicitation": ("elicitation_request", "elicitation_closed"),
}


#: The addresses `baton serve` binds; anything else is refused (remote use goes through an SSH
#: tunnel to one of these).
LOOPBACK_ADDRESSES: Final = ("127.0.0.1", "::1")
#: Seconds the HTTP server waits for open connections (event streams) to end when it stops,
#: after the runs have settled; then they are closed.
HTTP_CLOSE_SECONDS: Final = 5.0
#: Pending connections the listening socket queues.
LISTEN_BACKLOG: Final = 128


@dataclass
class ServeOptions:
    """`baton serve`'s options."""

    host: str = "127.0.0.1"
    port: int = 0
    data_dir: str | None = None
    #: A shared run store's URL (``--store``, BATON_STORE, the config file): the service
    #: reads and records its runs there; None: the data directory's SQLite store. The data
    #: directory keeps the lock, the runtime file and the journals either way.
    store: str | None = None
    #: The config file (``--config``; else BATON_CONFIG or the default place).
    config_file: str | None = None
    settings: ServiceSettings = field(default_factory=ServiceSettings)
    permission_wait: float = DEFAULT_PERMISSION_WAIT_SECONDS
    elicitation_wait: float = DEFAULT_ELICITATION_WAIT_SECONDS
    queue_bounds: QueueBounds = field(default_factory=QueueBounds)
    open_browser: bool = False
    #: Seconds with nothing to do after which the service stops by itself (``--idle-stop``;
    #: :mod:`baton.service.idle`); None: it runs until stopped.
    idle_stop: float | None = None


def check_loopback(host: str) -> str:
    """``host`` when it is a loopback address Baton binds, else SERVE_ADDRESS_NOT_LOOPBACK."""
    if host == "localhost":
        return "127.0.0.1"
    if host not in LOOPBACK_ADDRESSES:
        raise ServeAddressRefused(
            f"baton serve listens on loopback only (127.0.0.1 or ::1), not {host!r}; "
            "for remote use, forward a port over SSH (ssh -L PORT:127.0.0.1:PORT HOST)"
        )
    return host


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0 picks a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(LISTEN_BACKLOG)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


#: The policies whose runs the service's elicitor answers: under ``ask`` somebody is expected to
#: watch the run (the API, the inspector); an unattended run is never asked (docs/decisions.md).
ELICITATION_POLICIES: Final[frozenset[PolicyName]] = frozenset({"ask"})


def build_service(
    runtime: Runtime,
    settings: ServiceSettings,
    *,
    permission_wait: float,
    bounds: QueueBounds,
    elicitation_wait: float = DEFAULT_ELICITATION_WAIT_SECONDS,
) -> Service:
    """A service over an (unopened) runtime whose asker and elicitor are the API's."""
    feeds = FeedBoard(bounds)
    launcher = RunLauncher(runtime, feeds)

    def announcer(
        kind: QuestionKind,
    ) -> Callable[[PendingPermission | PendingElicitation, str], None]:
        """Publish a question's opening (``KIND_request``, its view) and closing
        (``KIND_closed``, its id; ``withdrawnByAgent: true`` when the agent cancelled it) on
        its run's live feed."""

        def announce(pending: PendingPermission | PendingElicitation, what: str) -> None:
            feed = feeds.live.get(pending.run_id or "")
            if feed is not None:
                opened = what == "opened"
                data: dict[str, Any] = pending.to_json() if opened else {"id": pending.id}
                if what == WITHDRAWN:
                    data["withdrawnByAgent"] = True
                opening, closing = QUESTION_EVENTS[kind]
                feed.publish(RunEvent(opening if opened else closing, feed.run_id, data))

        return announce

    callers = CallerAnswers(feeds)
    launcher.on_result.append(lambda event: callers.forget(event.run_id))
    asker = ApiAsker(
        announce=announcer("permission"),
        wait_seconds=permission_wait,
        nobody_answers=callers.nobody_answers,
    )
    runtime.asker = asker

    elicitor = ApiElicitor(
        announce=announcer("elicitation"),
        wait_seconds=elicitation_wait,
        nobody_answers=callers.nobody_answers,
    )
    runtime.elicitor = elicitor
    runtime.elicitation_policies = ELICITATION_POLICIES
    return Service(
        runtime=runtime,
        feeds=feeds,
        launcher=launcher,
        asker=asker,
        elicitor=elicitor,
        settings=settings,
        callers=callers,
        pid=os.getpid(),
        started_at=format_timestamp(datetime.now(UTC)),
    )


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the service stops in its own order."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def serve(options: ServeOptions, environ: Mapping[str, str] | None = None) -> int:
    """Run the service until SIGTERM or SIGINT; the exit code."""
    env = dict(os.environ if environ is None else environ)
    host = check_loopback(options.host)
    credentials = Credentials(token_from(env))
    data_dir = prepare_data_dir(resolve_data_dir(options.data_dir, env))
    if data_dir.notice is not None:
        print(f"baton: {data_dir.notice}", file=sys.stderr)
    lock = ServiceLock(data_dir.path)
    lock.acquire()
    try:
        return await _serve_locked(options, env, host, credentials, lock, data_dir.path)
    finally:
        lock.release()


async def _serve_locked(
    options: ServeOptions,
    env: dict[str, str],
    host: str,
    credentials: Credentials,
    lock: ServiceLock,
    data_dir: Path,
) -> int:
    user = load_config(
        options.config_file, env
    )  # the user's profiles and executable overrides, as the CLI
    runtime = Runtime(
        data_dir=data_dir,
        store=options.store,
        environ=env,
        profiles=user.all_profiles(),
        config_overrides=dict(user.executables),
    )
    service = build_service(
        runtime,
        options.settings,
        permission_wait=options.permission_wait,
        bounds=options.queue_bounds,
        elicitation_wait=options.elicitation_wait,
    )
    await runtime.open()
    sock = bind(host, options.port)
    port = sock.getsockname()[1]
    hosts = HostRule(host, port)
    app = build_app(service, credentials=credentials, hosts=hosts)
    idle = IdleWatch(service, options.idle_stop) if options.idle_stop is not None else None
    config = uvicorn.Config(
        app if idle is None else idle.wrap(app),
        http=FramingStrictH11Protocol,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=int(HTTP_CLOSE_SECONDS),
    )
    server = _Server(config)
    literal = f"[{host}]" if ":" in host else host
    url = f"http://{literal}:{port}"
    lock.write_runtime_file(
        RuntimeInfo(url, os.getpid(), credentials.token, credentials.launch_key)
    )
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    http = asyncio.ensure_future(server.serve(sockets=[sock]))
    store = runtime.store_location
    where = f"; shared store {store.describe()}" if store.shared else ""
    print(f"baton serve: listening on {url} (data directory {data_dir}{where})", flush=True)
    # The URL carries a login code (single-use, five minutes), never the API token.
    login_url = f"{url}/?token={credentials.issue_login_code()}"
    print(
        f"baton serve: open {login_url} (a login code: good once, for five minutes; "
        "`baton inspect` prints a new one)",
        flush=True,
    )
    print(f"baton serve: the API token is in {data_dir / RUNTIME_FILENAME}", flush=True)
    if options.open_browser:
        import webbrowser

        webbrowser.open(login_url)
    try:
        waiter = asyncio.ensure_future(stop.wait())
        idler = asyncio.ensure_future(idle.wait() if idle is not None else stop.wait())
        await asyncio.wait({waiter, http, idler}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if idler.done() and idle is not None and not stop.is_set():
            print(f"baton serve: idle for {idle.bound:g}s, stopping by itself", flush=True)
        idler.cancel()
        print("baton serve: stopping (running turns get the grace period)", flush=True)
        await service.launcher.stop(options.settings.shutdown_grace)
    finally:
        server.should_exit = True
        with contextlib.suppress(BaseException):
            await http
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await runtime.close()
        sock.close()
    print("baton serve: stopped", flush=True)
    return 0
