"""Drivers: run the ``baton`` CLI as a subprocess against a real adapter, and check what it left.

A :class:`Rig` is one test's world: a throw-away ``HOME``, the agent's working directory (the
worktree), Baton's data directory, a config file, a fresh API key, and the environment the
``baton`` process gets (built from scratch: nothing of the caller's environment leaks in but
``PATH``, the locale and, for development against a patched tree, ``PYTHONPATH``). Each adapter's
:class:`AdapterSpec` fills in what its profile needs (base URL, key, config directories).

:class:`Baton` runs commands in a rig: plain runs (stdin not a TTY), runs interrupted with SIGINT
when an event arrives, and interactive runs in a pseudo-terminal (pexpect). After each command
the checks in this module (:func:`journal_verifies`, :func:`secret_files`, :func:`survivors`)
say whether Baton left a consistent journal, no credential on disk and no agent process behind.
"""

from __future__ import annotations

import abc
import json
import os
import re
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import pexpect
from qualify_installs import CLAUDE, CODEX, FAST_AGENT, PY_SDK, Pin, executable, install_dir

#: Generous bound on one ``baton`` command (seconds): never a timing assertion, only a hang guard.
COMMAND_TIMEOUT_SECONDS: Final = 180.0
#: How long after a command the agent's processes may take to disappear (seconds).
SURVIVOR_GRACE_SECONDS: Final = 10.0
#: Poll interval while waiting for processes to go away or for output to arrive (seconds).
POLL_SECONDS: Final = 0.1
#: Bytes of output quoted in an assertion message.
MAX_QUOTED_CHARS: Final = 4000

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_BUDGET: Final = 3
EXIT_AUTH: Final = 4
EXIT_INTERRUPTED: Final = 130


def baton_command() -> list[str]:
    """The ``baton`` executable of the interpreter running the tests (its virtualenv)."""
    explicit = os.environ.get("BATON_QUALIFY_BATON")
    if explicit:
        return explicit.split()
    candidate = Path(sys.executable).with_name("baton")
    if candidate.exists():
        return [str(candidate)]
    return [sys.executable, "-m", "baton.cli.main"]


def quote(text: str) -> str:
    """``text`` cut for an assertion message."""
    return text if len(text) <= MAX_QUOTED_CHARS else "…" + text[-MAX_QUOTED_CHARS:]


# --- outcomes ------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One finished ``baton`` command."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def events(self) -> list[dict[str, Any]]:
        """The JSON lines of stdout (``--format json``), in order; other lines are skipped."""
        found = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    found.append(json.loads(line))
                except ValueError:
                    continue
        return found

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        """The events of one type."""
        return [e for e in self.events() if e.get("type") == kind]

    def result(self) -> dict[str, Any]:
        """The final ``result`` event (fails loudly when there is none)."""
        results = self.of_type("result")
        assert results, f"no result event: {self.describe()}"
        return results[-1]

    def text(self) -> str:
        """The streamed reply: every ``text`` event's text, joined."""
        return "".join(str(e.get("text", "")) for e in self.of_type("text"))

    def summary(self) -> str:
        """One line: the exit code and the last line of stderr."""
        stream, text = ("stderr", self.stderr) if self.stderr.strip() else ("output", self.stdout)
        last = next((line for line in reversed(text.splitlines()) if line.strip()), "")
        return f"exit {self.returncode}; {stream}: {last.strip()[:200] or '(empty)'}"

    def describe(self) -> str:
        """A one-line summary, then the command and its output, for an assertion message."""
        return (
            f"{self.summary()}\ncommand: {' '.join(self.argv)}\n"
            f"stdout:\n{quote(self.stdout)}\nstderr:\n{quote(self.stderr)}"
        )


# --- adapters ------------------------------------------------------------------------------


@dataclass
class Rig:
    """One test's directories, key and environment for one adapter."""

    adapter: AdapterSpec
    root: Path
    key: str
    mock_url: str | None
    env: dict[str, str] = field(default_factory=dict)

    @property
    def home(self) -> Path:
        """The throw-away ``HOME``."""
        return self.root / "home"

    @property
    def work(self) -> Path:
        """The session's working directory (the worktree)."""
        return self.root / "work"

    @property
    def data(self) -> Path:
        """Baton's data directory."""
        return self.root / "data"

    @property
    def config(self) -> Path:
        """Baton's config file."""
        return self.root / "baton-config.toml"

    @property
    def profile(self) -> str:
        """The Baton profile id under test."""
        return self.adapter.pin.profile

    def without(self, *keys: str) -> Rig:
        """A copy of this rig whose environment lacks ``keys`` (same directories)."""
        env = {k: v for k, v in self.env.items() if k not in keys}
        return Rig(self.adapter, self.root, self.key, self.mock_url, env)


def base_environment(rig: Rig) -> dict[str, str]:
    """What every ``baton`` process of a rig gets before the adapter adds its keys."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(rig.home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "BATON_HOME": str(rig.data),
        "BATON_CONFIG": str(rig.config),
        "TMPDIR": str(rig.root / "tmp"),
        "TERM": "dumb",
        # Each check says which process runs a turn: no service started in the background.
        "BATON_AUTOSTART": "0",
    }
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


class AdapterSpec(abc.ABC):
    """How one adapter is set up for a run; subclasses fill in :meth:`prepare`."""

    pin: Pin
    #: The provider API the mock must speak, or None when the adapter needs no model server.
    api: str | None = None
    #: The variables that carry the credential (removed for the "without credentials" steps).
    credential_keys: tuple[str, ...] = ()

    def rig(self, root: Path, mock_url: str | None) -> Rig:
        """A fresh rig under ``root`` (created)."""
        rig = Rig(self, root, f"qualify-secret-{secrets.token_hex(16)}", mock_url)
        for path in (rig.home, rig.work, root / "tmp"):
            path.mkdir(parents=True, exist_ok=True)
        rig.config.write_text("# written by tests/qualification\n")
        rig.env = base_environment(rig)
        rig.env[self.pin.override_env] = str(executable(self.pin))
        self.prepare(rig)
        return rig

    @abc.abstractmethod
    def prepare(self, rig: Rig) -> None:
        """Write the adapter's config and add its variables to ``rig.env``."""


class ClaudeSpec(AdapterSpec):
    """claude-agent-acp: ``ANTHROPIC_BASE_URL`` at the mock, a key, throw-away config dirs."""

    pin = CLAUDE
    api = "anthropic"
    credential_keys = ("ANTHROPIC_API_KEY",)

    def prepare(self, rig: Rig) -> None:
        """The Anthropic variables (all in the claude environment contract)."""
        config_dir = rig.root / "claude-config"
        config_dir.mkdir(exist_ok=True)
        assert rig.mock_url is not None
        rig.env.update(
            {
                "ANTHROPIC_BASE_URL": rig.mock_url,
                "ANTHROPIC_API_KEY": rig.key,
                "CLAUDE_CONFIG_DIR": str(config_dir),
            }
        )


#: The variable Codex's mock provider reads its key from: in the codex environment contract.
CODEX_KEY_ENV: Final = "CODEX_API_KEY"


def codex_config(mock_url: str | None) -> str:
    """``$CODEX_HOME/config.toml``: the mock as a custom Responses provider, or (without a
    URL) Codex's own OpenAI provider, which needs a sign-in."""
    head = 'model = "gpt-5.4"\napproval_policy = "on-request"\nsandbox_mode = "read-only"\n'
    if mock_url is None:
        return head
    return head + (
        'model_provider = "mock"\n\n'
        "[model_providers.mock]\n"
        'name = "Qualification mock"\n'
        f'base_url = "{mock_url}/v1"\n'
        f'env_key = "{CODEX_KEY_ENV}"\n'
        'wire_api = "responses"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


class CodexSpec(AdapterSpec):
    """codex-acp: ``CODEX_HOME`` with a config.toml naming the mock provider, and its key."""

    pin = CODEX
    api = "responses"
    credential_keys = (CODEX_KEY_ENV,)

    def prepare(self, rig: Rig) -> None:
        """CODEX_HOME (it must exist before start) and the mock provider's key."""
        codex_home = rig.root / "codex-home"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(codex_config(rig.mock_url))
        rig.env.update({"CODEX_HOME": str(codex_home), CODEX_KEY_ENV: rig.key})


#: The variable the fast-agent profile declares sensitive; the tests put a key there.
FAST_AGENT_KEY_ENV: Final = "OPENAI_API_KEY"


def fast_agent_profile(
    home: Path, model: str = "passthrough", profile_id: str = "fast-agent"
) -> str:
    """A config-file profile for fast-agent (it has no built-in one): ``fast-agent acp`` with
    the given internal model and an explicit ``--home`` (``--no-home`` breaks session/new). Its
    override variable is the default, :func:`override_env_for` the id. fast-agent 0.10.48
    echoes whatever ``protocolVersion`` it is offered; it answered 2 in the v1 layout while
    Baton offered 2 by default, and issue 29 made 1 the default offer, so the profile declares
    no pin: the suite runs it with Baton's defaults."""
    argv = ["fast-agent", "--no-update-check", "acp", "--model", model, "--home", str(home)]
    return (
        f"[profiles.{profile_id}]\n"
        f'display_name = "fast-agent ({model})"\n'
        f"argv = {json.dumps(argv)}\n"
        f'env = ["{FAST_AGENT_KEY_ENV}"]\n'
        f'sensitive = ["{FAST_AGENT_KEY_ENV}"]\n'
        'env_groups = ["user-config"]\n'
        'version_argv = ["--no-update-check", "--version"]\n'
        'probe_argv = ["--no-update-check", "acp", "--help"]\n'
        "probe_patterns = ['Usage:\\s+fast-agent\\s+acp\\b', 'ACP\\s+stdio\\s+server']\n"
        'policies = ["ask"]\n'
    )


def override_env_for(profile_id: str) -> str:
    """The override variable a config-file profile gets by default: ``BATON_<ID>_ACP_BIN``."""
    return f"BATON_{profile_id.upper().replace('-', '_')}_ACP_BIN"


#: The second fast-agent profile: the ``slow`` internal model (3 s before its echo), so a turn
#: lasts long enough to be cancelled.
FAST_AGENT_SLOW_PROFILE: Final = "fast-agent-slow"


class FastAgentSpec(AdapterSpec):
    """fast-agent: two config-file profiles (passthrough and slow), no model server."""

    pin = FAST_AGENT
    api = None
    credential_keys = (FAST_AGENT_KEY_ENV,)

    def prepare(self, rig: Rig) -> None:
        """The config file with both profiles; a dummy provider key to check redaction."""
        home = rig.root / "fast-agent-home"
        home.mkdir(exist_ok=True)
        rig.config.write_text(
            fast_agent_profile(home)
            + "\n"
            + fast_agent_profile(home, "slow", FAST_AGENT_SLOW_PROFILE)
        )
        rig.env[FAST_AGENT_KEY_ENV] = rig.key
        rig.env[override_env_for(FAST_AGENT_SLOW_PROFILE)] = str(executable(self.pin))


#: The echo agent on the official Python SDK (run by the SDK venv's interpreter).
PY_SDK_AGENT: Final = Path(__file__).resolve().parent / "agents" / "py_sdk_echo_agent.py"


def py_sdk_profile() -> str:
    """A config-file profile for the SDK echo agent, with Baton's defaults (no protocol pin):
    the interpreter (``python``, pointed at the SDK venv's by the override variable) runs the
    script; its ``--version`` and ``--help`` are the version command and the probe."""
    script = str(PY_SDK_AGENT)
    return (
        f"[profiles.{PY_SDK.profile}]\n"
        'display_name = "echo agent on the official Python ACP SDK"\n'
        f"argv = {json.dumps(['python', script])}\n"
        f"version_argv = {json.dumps([script, '--version'])}\n"
        f"probe_argv = {json.dumps([script, '--help'])}\n"
        "probe_patterns = ['an ACP echo agent on the official Python SDK']\n"
        f'override_env = "{PY_SDK.override_env}"\n'
        'policies = ["ask"]\n'
    )


class PySdkSpec(AdapterSpec):
    """The official Python SDK's echo agent: a config-file profile, no model server."""

    pin = PY_SDK
    api = None

    def prepare(self, rig: Rig) -> None:
        """The config file with the SDK agent's profile."""
        rig.config.write_text(py_sdk_profile())


SPECS: Final[dict[str, AdapterSpec]] = {
    "claude": ClaudeSpec(),
    "codex": CodexSpec(),
    "fast-agent": FastAgentSpec(),
    PY_SDK.profile: PySdkSpec(),
}


# --- running baton -------------------------------------------------------------------------


class Baton:
    """Runs ``baton`` commands in a rig."""

    def __init__(self, rig: Rig) -> None:
        self.rig = rig

    def argv(self, *args: str) -> list[str]:
        """The full command line."""
        return [*baton_command(), *args]

    def command(self, *args: str, env: dict[str, str] | None = None) -> Outcome:
        """Run ``baton ARGS`` with stdin at /dev/null (not a TTY) and wait for it."""
        argv = self.argv(*args)
        started = time.monotonic()
        done = subprocess.run(
            argv,
            cwd=self.rig.work,
            env=env or self.rig.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_SECONDS,
        )
        return Outcome(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - started)

    def run_args(self, prompt: str, *extra: str, profile: str | None = None) -> list[str]:
        """``run --agent PROFILE --data-dir D --cwd W --format json [EXTRA] PROMPT``."""
        return [
            "run",
            "--agent",
            profile or self.rig.profile,
            "--data-dir",
            str(self.rig.data),
            "--cwd",
            str(self.rig.work),
            "--format",
            "json",
            *extra,
            prompt,
        ]

    def run(
        self,
        prompt: str,
        *extra: str,
        profile: str | None = None,
        env: dict[str, str] | None = None,
    ) -> Outcome:
        """One ``baton run`` (non-interactive)."""
        return self.command(*self.run_args(prompt, *extra, profile=profile), env=env)

    def run_interrupted(
        self,
        prompt: str,
        when: Callable[[dict[str, Any]], bool],
        *extra: str,
        profile: str | None = None,
        delay: float = 0.0,
    ) -> Outcome:
        """A ``baton run`` that gets SIGINT ``delay`` seconds after an event satisfies ``when``."""
        argv = self.argv(*self.run_args(prompt, *extra, profile=profile))
        started = time.monotonic()
        process = subprocess.Popen(
            argv,
            cwd=self.rig.work,
            env=self.rig.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert process.stdout is not None and process.stderr is not None
        lines: list[str] = []
        timer: threading.Timer | None = None
        try:
            for line in process.stdout:
                lines.append(line)
                if timer is None and line.startswith("{"):
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if when(event):
                        timer = threading.Timer(delay, process.send_signal, (signal.SIGINT,))
                        timer.start()
            process.wait(timeout=COMMAND_TIMEOUT_SECONDS)
        finally:
            if timer is not None:
                timer.cancel()
            if process.poll() is None:
                process.kill()
                process.wait()
        stderr = process.stderr.read()
        if timer is None:
            stderr += "\n[qualification driver: the interrupt condition never held; no SIGINT sent]"
        return Outcome(argv, process.returncode, "".join(lines), stderr, time.monotonic() - started)

    def run_in_terminal(
        self, prompt: str, answer: Callable[[list[tuple[int, str]]], str], *extra: str
    ) -> tuple[Outcome, list[list[tuple[int, str]]]]:
        """A ``baton run`` in a pseudo-terminal; each permission prompt's numbered options go to
        ``answer``, whose return value is typed (then Enter). Returns the outcome and every
        prompt's options."""
        argv = self.argv(*self.run_args(prompt, *extra))
        started = time.monotonic()
        child = pexpect.spawn(
            argv[0],
            argv[1:],
            cwd=str(self.rig.work),
            env={**self.rig.env, "TERM": "xterm"},
            encoding="utf-8",
            codec_errors="replace",
            timeout=COMMAND_TIMEOUT_SECONDS,
            dimensions=(50, 250),
        )
        transcript: list[str] = []
        prompts: list[list[tuple[int, str]]] = []
        option = re.compile(r"^\s*(\d+)\) (.*?)(?:\s{2}\(.*\))?\s*$", re.MULTILINE)
        while True:
            index = child.expect([r"Choose 1(?:-\d+)?, or c to cancel[^\n]*: ", pexpect.EOF])
            transcript.append(child.before or "")
            if index == 1:
                break
            transcript.append(str(child.after))
            options = [(int(n), name.strip()) for n, name in option.findall(child.before or "")]
            prompts.append(options)
            child.send(answer(options) + "\r")
        child.close()
        returncode = (
            child.exitstatus if child.exitstatus is not None else 128 + (child.signalstatus or 0)
        )
        output = "".join(transcript).replace("\r\n", "\n")
        return Outcome(argv, returncode, output, "", time.monotonic() - started), prompts

    def show(self, run_id: str) -> dict[str, Any]:
        """``baton show RUN --json``."""
        done = self.command("show", run_id, "--json", "--data-dir", str(self.rig.data))
        assert done.returncode == 0, done.describe()
        view: dict[str, Any] = json.loads(done.stdout)
        return view

    def doctor(
        self, env: dict[str, str] | None = None, profile: str | None = None
    ) -> tuple[Outcome, dict[str, Any]]:
        """``baton doctor --live PROFILE --json`` and its one record."""
        done = self.command(
            "doctor",
            profile or self.rig.profile,
            "--live",
            "--json",
            "--config",
            str(self.rig.config),
            env=env,
        )
        records = done.events()
        assert len(records) == 1, done.describe()
        return done, records[0]

    def verify_journal(self) -> Outcome:
        """``baton journal verify --all``."""
        return self.command("journal", "verify", "--all", "--data-dir", str(self.rig.data))

    def journal(self, server_id: str) -> list[dict[str, Any]]:
        """``baton journal show SERVER --json``: the (redacted) records in order."""
        done = self.command(
            "journal", "show", server_id, "--json", "--data-dir", str(self.rig.data)
        )
        assert done.returncode == 0, done.describe()
        return done.events()


# --- checks --------------------------------------------------------------------------------


def secret_files(root: Path, secret: str) -> list[str]:
    """Every file under ``root`` whose bytes contain ``secret`` (also JSON- or URL-escaped
    spellings are the same bytes for the keys the tests use: letters, digits and dashes)."""
    needle = secret.encode()
    found = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and needle in path.read_bytes():
            found.append(str(path.relative_to(root)))
    return found


def _processes() -> Iterator[tuple[int, str, str, bytes]]:
    """``(pid, state, command line, environment)`` of every readable process."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        yield int(entry.name), state, cmdline, environ


def _alive(pin: Pin, home: Path | None) -> list[tuple[int, str]]:
    marker = str(install_dir(pin))
    owned = f"HOME={home}".encode() if home is not None else None
    return [
        (pid, cmd)
        for pid, state, cmd, environ in _processes()
        if marker in cmd
        and state not in ("Z", "X")
        and (owned is None or owned in environ.split(b"\0"))
    ]


def survivors(
    pin: Pin, home: Path | None = None, grace: float = SURVIVOR_GRACE_SECONDS
) -> list[str]:
    """Live processes running from ``pin``'s install directory (only those whose ``HOME`` is
    ``home``, when given: a rig's own), after up to ``grace`` seconds for them to go. Zombies
    are dead and do not count."""
    deadline = time.monotonic() + grace
    while True:
        alive = [f"{pid} {cmd}" for pid, cmd in _alive(pin, home)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(POLL_SECONDS)


def reap(pin: Pin, home: Path) -> list[int]:
    """SIGKILL what a rig left running of ``pin`` (its processes only: matched by ``HOME``), so
    one failed step does not leave adapters behind for the next; returns the pids killed."""
    killed = []
    for pid, _cmd in _alive(pin, home):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        killed.append(pid)
    return killed


def store_rows(data_dir: Path, sql: str, *params: object) -> list[dict[str, Any]]:
    """Rows of a read-only query on Baton's store (for what the CLI does not show)."""
    connection = sqlite3.connect(f"file:{data_dir / 'baton.sqlite3'}?mode=ro", uri=True)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in connection.execute(sql, params)]
    finally:
        connection.close()


def journal_messages(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """``(direction, message)`` of each journal record (``inbound``/``outbound``), in order;
    records whose raw line is not JSON are left out."""
    found = []
    for record in records:
        try:
            message = json.loads(record.get("raw") or "")
        except ValueError:
            continue
        if isinstance(message, dict):
            found.append((str(record.get("direction")), message))
    return found


def updates_after_response(
    records: list[dict[str, Any]], request_method: str, until_method: str | None = None
) -> list[dict[str, Any]]:
    """The inbound ``session/update`` notifications journaled after the answer to the first
    outbound ``request_method`` request (and, with ``until_method``, before the next outbound
    request of that method)."""
    request_id: object = None
    answered = False
    later = []
    for direction, message in journal_messages(records):
        if request_id is None:
            if direction == "outbound" and message.get("method") == request_method:
                request_id = message.get("id")
            continue
        if not answered:
            answered = (
                direction == "inbound"
                and "method" not in message
                and message.get("id") == request_id
            )
            continue
        if (
            until_method is not None
            and direction == "outbound"
            and message.get("method") == until_method
        ):
            break
        if direction == "inbound" and message.get("method") == "session/update":
            later.append(message)
    return later
