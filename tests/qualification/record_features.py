"""Record what the newest real adapters send today for issue 20's features, without credentials.

    .venv/bin/python tests/qualification/record_features.py [--adapter NAME]... [--out DIR] [--check]

For each adapter of ``FEATURE_PINS`` (claude-agent-acp, codex-acp, fast-agent; the newest
versions the registries gave) and each protocol choice Baton offers (``1`` and ``auto``, recorded as
it stood before issue 29 made 1 the default offer: the offer of 2 with both layouts, which is
``auto`` for a profile that declares v2 support), this installs the adapter if needed (the qualification cache), starts it with a
credential-free environment (a throw-away ``HOME`` and config directories, no API key, no model
server) and drives it with Baton's own :class:`~baton.connection.Connection` and
:class:`~baton.connection.client.AcpClient`, whose tap records every frame in the order Baton
wrote and read it. The client advertises everything Baton can answer (elicitation form and URL,
session notices, compaction, boolean config options), so the capture holds the answer to such a
client. The steps, each through the client's own capability gates:

1. ``initialize``; then whatever the agent sends unprompted (until it is quiet);
2. ``session/new`` with ``additionalDirectories`` and an ``append`` system prompt, each only
   when advertised: a feature the agent did not advertise is refused by Baton before anything
   is written (recorded as ``refused``), and the session is opened without it;
3. whatever arrives before a prompt (``available_commands_update``, ``usage_update``, notices);
4. ``session/list`` (gated on ``sessionCapabilities.list``);
5. one prompt, which fails or ends without a model (no credentials): its answer, and under v2
   the turn's ``idle`` state.

Nothing credentialed runs, so a turn's usage and Claude's subagent parent links cannot be
captured here (docs/qualification.md says so). Written into
``DIR/<adapter>-<version>/features.protocol-<choice>.json`` (``DIR`` defaults to
tests/fixtures/adapters), redacted: the capture's temporary directory is replaced by
``/capture`` everywhere, and every frame goes through Baton's structural JSON redaction (the
journal's rules for credential-named fields). ``--check`` writes nothing: it compares a fresh
capture's answers (apart from session ids) with the files in ``DIR`` and exits 1 on drift.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from qualify_installs import (  # noqa: E402
    FAST_AGENT,
    FEATURE_PINS,
    InstallFailed,
    Pin,
    ensure,
    executable,
    install_dir,
)

from baton._version import __version__  # noqa: E402
from baton.connection import Connection, InboundRequest  # noqa: E402
from baton.connection.client import AcpClient  # noqa: E402
from baton.connection.tap import Mark  # noqa: E402
from baton.errors import BatonError, CapabilityNotAdvertised  # noqa: E402
from baton.redaction.structural import redact_json  # noqa: E402
from baton.wire.capabilities import ElicitationOffer  # noqa: E402
from baton.wire.jsonrpc import Message  # noqa: E402
from baton.wire.system_prompt import SystemPrompt  # noqa: E402
from baton.wire.version import ProtocolChoice, parse_protocol_choice  # noqa: E402

FIXTURES: Final = HERE.parent / "fixtures" / "adapters"

#: The protocol choices recorded, as ``--protocol`` spells them.
CHOICES: Final = ("1", "auto")


def recorded_choice(label: str) -> ProtocolChoice:
    """The choice a capture's label stands for: ``auto`` is recorded offering 2 (as for a
    profile that declares v2 support), so the captures keep showing what each adapter does
    with the draft."""
    return parse_protocol_choice(label).declaring_v2(label == "auto")


#: What replaces the capture's temporary directory in every string of the capture.
ROOT_PLACEHOLDER: Final = "/capture"

#: The prompt sent once the session is open (it never reaches a model: no credentials).
PROMPT: Final = "Say hello."

#: The system prompt sent where ``append`` is advertised.
SYSTEM_PROMPT_TEXT: Final = "Answer in one short sentence."

#: How long the agent must send nothing before a step's unprompted output is complete (s).
QUIET_SECONDS: Final = 2.0

#: Longest wait for unprompted output after one step (seconds): a hang guard, not a timing
#: assertion (an agent that never goes quiet is recorded up to here).
MAX_QUIET_WAIT_SECONDS: Final = 20.0

#: How often the recorder looks for silence or a turn's ``idle`` state (seconds).
POLL_SECONDS: Final = 0.1

#: Longest wait for one request's answer or a turn's end (seconds): a hang guard (also the
#: connection's request limit: a cold adapter start on a loaded machine can pass Baton's 30 s).
STEP_TIMEOUT_SECONDS: Final = 90.0

#: How long the agent gets to exit after stdin is closed before its group is killed (seconds).
EXIT_GRACE_SECONDS: Final = 5.0

#: Frame cap of the recording connection (Baton's default is larger; captures are small).
MAX_FRAME_BYTES: Final = 16 * 1024 * 1024

#: Keys ignored by :func:`compare` (they differ on every capture).
VOLATILE_KEYS: Final = frozenset({"sessionId", "messageId", "updatedAt"})


class RecordingTap:
    """Keeps every frame the connection reads or writes, in order (the tap is awaited before
    a frame is acted on or written, so the order is Baton's)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.started = time.monotonic()
        self.last_inbound = self.started

    async def record_inbound(
        self, raws: Sequence[bytes], messages: Sequence[Message | None], mark: Mark = None
    ) -> list[None]:
        """Keep inbound frames (a skipped line as its text)."""
        self.last_inbound = time.monotonic()
        for raw, message in zip(raws, messages, strict=True):
            if message is None:
                self.records.append(
                    {"dir": "agent->client", "skipped": raw.decode(errors="replace")}
                )
            else:
                self.records.append({"dir": "agent->client", "frame": message})
        return [None] * len(raws)

    async def record_outbound(self, raw: bytes, message: Message) -> None:
        """Keep an outbound frame."""
        self.records.append({"dir": "client->agent", "frame": message})


@dataclass
class Capture:
    """One recorded session with one adapter under one protocol choice."""

    pin: Pin
    choice: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    tap: RecordingTap = field(default_factory=RecordingTap)
    negotiated: int | None = None

    def step(self, name: str, outcome: str, **detail: Any) -> None:
        """Record what Baton did at one step."""
        self.steps.append({"step": name, "outcome": outcome, **detail})


def launch(pin: Pin, root: Path) -> tuple[list[str], dict[str, str]]:
    """The adapter's argv and its credential-free environment under ``root``."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        "TMPDIR": str(root),
    }
    argv = [str(executable(pin))]
    if pin.profile == "claude":
        (root / "claude-config").mkdir(exist_ok=True)
        env["CLAUDE_CONFIG_DIR"] = str(root / "claude-config")
    elif pin.profile == "codex":
        codex_home = root / "codex-home"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text('approval_policy = "on-request"\n')
        env["CODEX_HOME"] = str(codex_home)
    elif pin == FAST_AGENT:
        (root / "fast-agent-home").mkdir(exist_ok=True)
        argv += ["--no-update-check", "acp", "--model", "passthrough", "--home"]
        argv.append(str(root / "fast-agent-home"))
    return argv, env


async def _quiet(tap: RecordingTap, quiet_seconds: float) -> None:
    """Wait until the agent has sent nothing for ``quiet_seconds`` (bounded)."""
    deadline = time.monotonic() + MAX_QUIET_WAIT_SECONDS
    while time.monotonic() < deadline:
        if time.monotonic() - tap.last_inbound >= quiet_seconds:
            return
        await asyncio.sleep(POLL_SECONDS)


def _refusal(exc: BatonError) -> dict[str, Any]:
    return {"code": exc.code, "message": str(exc)}


async def _decline(request: InboundRequest) -> dict[str, Any]:
    # Nobody answers a recording: an elicitation is declined, as a headless Baton does.
    return {"action": "decline"}


async def _turn_end(client: AcpClient, capture: Capture, session_id: str) -> None:
    """Send the prompt and wait for its end (v1: the answer; v2: the acknowledgement, then the
    ``idle`` state); an error answer is recorded, never raised."""
    connection = client.connection
    request_id = await client.send_prompt(session_id, [{"type": "text", "text": PROMPT}])
    try:
        result = await connection.await_response(request_id, timeout=STEP_TIMEOUT_SECONDS)
    except BatonError as exc:
        capture.step("session/prompt", "failed", **_refusal(exc))
        return
    capture.step(
        "session/prompt", "answered", result=sorted(result) if isinstance(result, dict) else None
    )
    if client.codec.normalizes:
        deadline = time.monotonic() + STEP_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if any(_is_idle(r, session_id) for r in capture.tap.records):
                capture.step("state_update idle", "received")
                return
            await asyncio.sleep(POLL_SECONDS)
        capture.step("state_update idle", "not received", seconds=STEP_TIMEOUT_SECONDS)


def _is_idle(record: dict[str, Any], session_id: str) -> bool:
    frame = record.get("frame") or {}
    params = frame.get("params") if frame.get("method") == "session/update" else None
    if not isinstance(params, dict) or params.get("sessionId") != session_id:
        return False
    update = params.get("update")
    return (
        isinstance(update, dict)
        and update.get("sessionUpdate") == "state_update"
        and update.get("state") == "idle"
    )


async def drive(
    capture: Capture,
    connection: Connection[None],
    root: Path,
    *,
    quiet_seconds: float = QUIET_SECONDS,
) -> None:
    """The steps of the module docstring, through Baton's client and its gates. After each
    step the agent gets ``quiet_seconds`` of silence to send what it sends unprompted (a replay
    of a capture passes 0: its frames are all there)."""
    client = AcpClient(
        connection,
        elicitation=ElicitationOffer(form=True, url=True),
        protocol=recorded_choice(capture.choice),
    )
    try:
        initialized = await client.initialize()
    except BatonError as exc:
        capture.step("initialize", "refused by Baton", **_refusal(exc))
        await _quiet(capture.tap, quiet_seconds)
        return
    capture.negotiated = initialized.protocol_version
    capture.step("initialize", "answered", protocolVersion=initialized.protocol_version)
    await _quiet(capture.tap, quiet_seconds)
    work = root / "work"
    extra = root / "extra"
    work.mkdir(exist_ok=True)
    extra.mkdir(exist_ok=True)
    directories: list[str] = [str(extra)]
    system_prompt: SystemPrompt | None = SystemPrompt("append", SYSTEM_PROMPT_TEXT)
    session_id: str | None = None
    while session_id is None:
        try:
            opened = await client.new_session(
                str(work),
                additional_directories=directories,
                system_prompt=system_prompt,
            )
        except BatonError as exc:
            capability = exc.capability if isinstance(exc, CapabilityNotAdvertised) else ""
            if directories and "additionalDirectories" in capability:
                capture.step("session/new additionalDirectories", "refused", **_refusal(exc))
                directories = []
                continue
            if system_prompt is not None and "systemPrompt" in capability:
                capture.step("session/new systemPrompt", "refused", **_refusal(exc))
                system_prompt = None
                continue
            capture.step("session/new", "failed", **_refusal(exc))
            break
        session_id = opened.session_id
        if directories:
            capture.step("session/new additionalDirectories", "sent")
        if system_prompt is not None:
            capture.step("session/new systemPrompt", "sent", mode=system_prompt.mode)
        capture.step("session/new", "answered")
    await _quiet(capture.tap, quiet_seconds)
    try:
        listed = await client.list_sessions()
        capture.step("session/list", "answered", sessions=len(listed.sessions))
    except BatonError as exc:
        refused = exc.code == "CAPABILITY_NOT_ADVERTISED"
        capture.step("session/list", "refused" if refused else "failed", **_refusal(exc))
    if session_id is not None:
        await _turn_end(client, capture, session_id)
        await _quiet(capture.tap, quiet_seconds)


async def record(pin: Pin, choice: str, root: Path) -> Capture:
    """One capture of ``pin`` under ``choice`` in the directory ``root``."""
    capture = Capture(pin, choice)
    argv, env = launch(pin, root)
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=root,
        start_new_session=True,
    )
    assert process.stdout is not None and process.stdin is not None
    connection: Connection[None] = Connection(
        process.stdout,
        process.stdin,
        max_frame_bytes=MAX_FRAME_BYTES,
        tap=capture.tap,
        request_limit=STEP_TIMEOUT_SECONDS,
    )
    connection.on_request("elicitation/create", _decline)
    connection.on_any_notification(lambda message, ref: None)
    connection.start()
    try:
        await drive(capture, connection, root)
    finally:
        await connection.close()
        with contextlib.suppress(OSError):
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), EXIT_GRACE_SECONDS)
            capture.step("stdin closed", "exited", status=process.returncode)
        except TimeoutError:
            capture.step("stdin closed", "still running: group killed")
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), EXIT_GRACE_SECONDS)
    return capture


def replace_root(value: Any, root: str) -> Any:
    """``value`` with every occurrence of the directory ``root`` in its strings (keys too)
    replaced by :data:`ROOT_PLACEHOLDER`."""
    if isinstance(value, str):
        return value.replace(root, ROOT_PLACEHOLDER)
    if isinstance(value, list):
        return [replace_root(v, root) for v in value]
    if isinstance(value, dict):
        return {replace_root(k, root): replace_root(v, root) for k, v in value.items()}
    return value


def _runtime_versions() -> dict[str, str]:
    node = "not found"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        node = subprocess.run(
            ["node", "--version"], capture_output=True, text=True, timeout=30
        ).stdout.strip()
    return {"node": node, "python": platform.python_version(), "baton": __version__}


def document(capture: Capture, root: Path) -> dict[str, Any]:
    """The capture as written: metadata, Baton's steps, and the redacted frames (the temporary
    directory, under its given and its resolved name, replaced by :data:`ROOT_PLACEHOLDER`)."""
    doc: dict[str, Any] = {
        "adapter": capture.pin.name,
        "package": capture.pin.package,
        "version": capture.pin.version,
        "recorded": time.strftime("%Y-%m-%d", time.gmtime()),
        "recordedWith": {**_runtime_versions(), "script": "tests/qualification/record_features.py"},
        "signedOut": True,
        "protocol": capture.choice,
        "negotiated": capture.negotiated,
        "steps": capture.steps,
        "frames": [redact_json(r) for r in capture.tap.records],
    }
    for name in dict.fromkeys((str(root.resolve()), str(root))):
        doc = replace_root(doc, name)
    return doc


def file_name(choice: str) -> str:
    """The capture's file name for a protocol choice."""
    return f"features.protocol-{choice}.json"


def answers(doc: dict[str, Any]) -> dict[str, Any]:
    """``{method: result or error}`` of the agent's answers to Baton's requests, first each."""
    sent: dict[Any, str] = {}
    found: dict[str, Any] = {}
    for record in doc["frames"]:
        frame = record.get("frame") or {}
        if record["dir"] == "client->agent" and "method" in frame and "id" in frame:
            sent[frame["id"]] = frame["method"]
        elif record["dir"] == "agent->client" and "method" not in frame and "id" in frame:
            method = sent.get(frame["id"])
            if method is not None and method not in found:
                found[method] = frame.get("result", {"error": frame.get("error")})
    return found


def _differences(fresh: Any, old: Any, where: str) -> list[str]:
    if isinstance(fresh, dict) and isinstance(old, dict):
        found: list[str] = []
        for key in sorted(set(fresh) | set(old)):
            if key in VOLATILE_KEYS:
                continue
            if key not in old:
                found.append(f"{where}.{key}: new in the fresh capture")
            elif key not in fresh:
                found.append(f"{where}.{key}: missing from the fresh capture")
            else:
                found += _differences(fresh[key], old[key], f"{where}.{key}")
        return found
    if isinstance(fresh, list) and isinstance(old, list):
        if len(fresh) != len(old):
            return [f"{where}: {len(old)} items before, {len(fresh)} now"]
        return [
            d
            for i, (a, b) in enumerate(zip(fresh, old, strict=True))
            for d in _differences(a, b, f"{where}[{i}]")
        ]
    return [] if fresh == old else [f"{where}: {old!r} before, {fresh!r} now"]


def compare(fresh: dict[str, Any], path: Path) -> list[str]:
    """Differences between a fresh capture and the committed one at ``path``: the negotiated
    version, Baton's steps, and the agent's answers (apart from volatile ids)."""
    if not path.exists():
        return [f"{path.name}: no committed capture to compare with"]
    old = json.loads(path.read_text())
    found = _differences(fresh["negotiated"], old["negotiated"], "negotiated")
    if fresh["steps"] != old["steps"]:
        found.append(f"fresh steps: {json.dumps(fresh['steps'])}")
    found += _differences(fresh["steps"], old["steps"], "steps")
    found += _differences(answers(fresh), answers(old), "answers")
    return [f"{path.name}: {d}" for d in found]


def capture_all(pin: Pin) -> dict[str, dict[str, Any]]:
    """Every protocol choice of ``pin``: ``{file name: document}``."""
    files: dict[str, dict[str, Any]] = {}
    for choice in CHOICES:
        with tempfile.TemporaryDirectory(prefix=f"baton-features-{pin.name}-") as tmp:
            root = Path(tmp)
            capture = asyncio.run(record(pin, choice, root))
            files[file_name(choice)] = document(capture, root)
    return files


def write(directory: Path, files: dict[str, dict[str, Any]]) -> None:
    """Write the captures into ``directory`` (created)."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, doc in files.items():
        (directory / name).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def main(argv: list[str]) -> int:
    """Record (or check) the named adapters."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    names = [p.name for p in FEATURE_PINS]
    parser.add_argument("--adapter", action="append", choices=names, help="default: all")
    parser.add_argument(
        "--out", type=Path, default=FIXTURES, help="default: tests/fixtures/adapters"
    )
    parser.add_argument("--check", action="store_true", help="compare with DIR instead of writing")
    args = parser.parse_args(argv)
    drift = False
    for pin in FEATURE_PINS:
        if args.adapter and pin.name not in args.adapter:
            continue
        try:
            ensure(pin)
        except InstallFailed as exc:
            print(f"record: INSTALL FAILED: {exc}", file=sys.stderr)
            return 1
        files = capture_all(pin)
        target = args.out / pin.key
        if args.check:
            differences = [d for name, doc in files.items() for d in compare(doc, target / name)]
            for line in differences:
                print(f"record: {pin.key}: DRIFT {line}")
            drift = drift or bool(differences)
            print(f"record: {pin.key}: {'drift' if differences else 'matches'} {target}")
        else:
            write(target, files)
            print(
                f"record: {pin.key} ({install_dir(pin)}): wrote {', '.join(sorted(files))} to {target}"
            )
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
