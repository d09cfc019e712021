"""Executable discovery: find a profile's installed executable and prove its launch contract.

Candidates come from one explicit override (the profile's ``BATON_*_ACP_BIN`` variable, else
the persisted override in the config file) or, without one, from the profile's candidate names
on ``PATH``. An explicit override is the only candidate: there is no silent fallback to ``PATH``.
A value holding a NUL byte is refused. Relative ``PATH`` entries (``""``, ``.``) are skipped, so
a repository cannot plant an agent that discovery would run.

Every candidate must pass the profile's version command (exit 0 and a non-empty line) and its
launch-contract probe (every required pattern found in stdout and stderr together). A passing
``--version`` proves only that something ran; the probe is what proves the contract. Both run:

- with the credential-free probe environment (:func:`~baton.runtime.agents.environment.probe_environment`),
- in a fresh empty temporary directory, with stdin at end of file,
- in their own process group, which is killed after the command (nothing it started survives),
- within :data:`PROBE_TIMEOUT_SECONDS` each, the group killed when it elapses,
- with at most :data:`MAX_PROBE_OUTPUT_BYTES` read across stdout and stderr together: reading
  stops there and the group is killed.

Everything a probe printed is redacted before it reaches a result. Results are cached per
profile (:class:`DiscoveryCache`): changing the override, ``PATH``, or any examined file
(replaced, rebuilt, removed) makes the next lookup probe again.

POSIX only: probes use sessions and process-group signals.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import shlex
import stat
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from baton.redaction import SecretValues, redact_text
from baton.runtime.agents.environment import probe_environment
from baton.runtime.agents.profiles import Profile
from baton.runtime.processes.process import terminate_group

#: Each discovery command (version, probe) gets this long before its process group is killed.
#: Protects discovery against an executable that waits for input, a network, or forever.
PROBE_TIMEOUT_SECONDS: Final = 5.0

#: Bytes read from one discovery command, stdout and stderr together. Beyond it reading stops and
#: the group is killed. Protects memory against an executable that floods its output.
MAX_PROBE_OUTPUT_BYTES: Final = 64 * 1024

#: Bytes asked of a pipe per read while probing.
PROBE_READ_CHUNK_BYTES: Final = 8 * 1024

#: How long to wait for a killed probe's group to be gone. Protects discovery from a process
#: stuck in the kernel (discovery goes on; the command is reported as it ended).
PROBE_REAP_SECONDS: Final = 2.0

#: Longest version string kept (the first non-empty output line).
MAX_VERSION_CHARS: Final = 512

#: Longest rejection detail kept per candidate (diagnostic text for people).
MAX_DETAIL_CHARS: Final = 512

#: Longest excerpt of a probe's output quoted in a rejection.
MAX_EXCERPT_CHARS: Final = 160

#: Longest override value echoed in a rejection. An override that is not a usable path may be
#: anything (a variable holding a document); a real path is at most PATH_MAX (4096) anyway.
MAX_SHOWN_PATH_CHARS: Final = 4096

#: Most PATH candidates examined per profile. Each may cost two probes of up to 5 s.
MAX_CANDIDATES: Final = 8

CandidateSource = Literal["env", "config", "path"]

# Stable reason codes of a rejected candidate (also readiness diagnostic codes).
EXECUTABLE_NOT_FOUND: Final = "EXECUTABLE_NOT_FOUND"
EXECUTABLE_PATH_REFUSED: Final = "EXECUTABLE_PATH_REFUSED"
EXECUTABLE_NOT_EXECUTABLE: Final = "EXECUTABLE_NOT_EXECUTABLE"
EXECUTABLE_SPAWN_FAILED: Final = "EXECUTABLE_SPAWN_FAILED"
VERSION_COMMAND_FAILED: Final = "VERSION_COMMAND_FAILED"
PROBE_TIMEOUT: Final = "PROBE_TIMEOUT"
PROBE_OUTPUT_TOO_LARGE: Final = "PROBE_OUTPUT_TOO_LARGE"
LAUNCH_CONTRACT_MISMATCH: Final = "LAUNCH_CONTRACT_MISMATCH"

#: Reasons that mean "nothing there to run" (the others mean something was found).
NOT_FOUND_REASONS: Final = frozenset({EXECUTABLE_NOT_FOUND, EXECUTABLE_PATH_REFUSED})

Redactor = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class RejectedCandidate:
    """A candidate that did not pass, with a stable ``reason`` code and a bounded, redacted
    ``detail`` for people."""

    path: str
    source: CandidateSource
    reason: str
    detail: str


@dataclass(frozen=True, slots=True)
class DiscoveryResult:
    """What discovery found for one profile.

    ``selected`` is the absolute path of the first candidate that passed (None if none did),
    ``source`` where it came from, ``version`` its redacted version line (None without a
    version command), ``launch_argv`` the full command Baton would start. ``explicit`` is True
    when an override named the only candidate; ``override_origin`` then names it (the variable,
    or ``config``). ``searched`` lists the names or override tried. ``fingerprint`` identifies
    the selected executable's file: compare two results' fingerprints to tell whether the
    executable changed.
    """

    profile_id: str
    selected: str | None
    source: CandidateSource | None
    version: str | None
    launch_argv: tuple[str, ...] | None
    rejected: tuple[RejectedCandidate, ...]
    explicit: bool
    override_origin: str | None
    searched: tuple[str, ...]
    fingerprint: tuple[object, ...] | None = None

    @property
    def found(self) -> bool:
        """True when a candidate passed every check."""
        return self.selected is not None

    @property
    def launch_form(self) -> str | None:
        """The launch command as one shell-quoted line."""
        return shlex.join(self.launch_argv) if self.launch_argv is not None else None


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """What one bounded discovery command did. ``exit_code`` is None when Baton killed it."""

    exit_code: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    overflowed: bool = False

    @property
    def combined(self) -> str:
        """stdout and stderr together, the text a probe's patterns are checked against."""
        return f"{self.stdout}\n{self.stderr}"


@dataclass(frozen=True, slots=True)
class _Candidate:
    path: str
    source: CandidateSource


# --- running one bounded command -----------------------------------------------------------


async def run_bounded(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: str,
    timeout: float = PROBE_TIMEOUT_SECONDS,
    max_output: int = MAX_PROBE_OUTPUT_BYTES,
) -> CommandOutput:
    """Run ``argv`` in its own process group with stdin at end of file, reading at most
    ``max_output`` bytes of stdout and stderr together within ``timeout`` seconds.

    The whole group is killed afterwards, whatever happened. Raises OSError when the
    executable cannot be started.
    """
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(env),
        cwd=cwd,
        start_new_session=True,
    )
    buffers = (bytearray(), bytearray())
    room = [max_output]
    overflow = asyncio.Event()

    async def pump(stream: asyncio.StreamReader | None, buffer: bytearray) -> None:
        # Reads to end of file, keeping bytes only while the shared room lasts; past it, bytes
        # are discarded (the group is being killed) so the pipe still reaches end of file.
        if stream is None:
            return
        while chunk := await stream.read(PROBE_READ_CHUNK_BYTES):
            keep = min(len(chunk), room[0])
            if keep:
                buffer += chunk[:keep]
                room[0] -= keep
            if keep < len(chunk):
                overflow.set()

    readers = asyncio.gather(pump(proc.stdout, buffers[0]), pump(proc.stderr, buffers[1]))
    watcher = asyncio.ensure_future(overflow.wait())
    timed_out = False
    try:
        async with asyncio.timeout(timeout):
            await asyncio.wait((readers, watcher), return_when=asyncio.FIRST_COMPLETED)
            if not overflow.is_set():
                await proc.wait()
    except TimeoutError:
        timed_out = True
    finally:
        # The whole group goes, whatever happened: a probe has nothing worth a grace period,
        # and nothing it started may outlive discovery.
        await terminate_group(proc.pid, term_grace=0.0, kill_grace=PROBE_REAP_SECONDS, leader=proc)
        watcher.cancel()
        # With the group dead the pipes reach end of file at once (unless something outside
        # the group holds them): let the readers finish so the transport closes.
        await asyncio.wait((readers,), timeout=PROBE_REAP_SECONDS)
        if readers.done():
            if not readers.cancelled():
                readers.exception()  # retrieved: a read error only means less output
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), PROBE_REAP_SECONDS)
        else:
            readers.cancel()
            await asyncio.wait((readers,))
    killed = timed_out or overflow.is_set()
    return CommandOutput(
        exit_code=None if killed else proc.returncode,
        stdout=buffers[0].decode("utf-8", errors="replace"),
        stderr=buffers[1].decode("utf-8", errors="replace"),
        timed_out=timed_out,
        overflowed=overflow.is_set() and not timed_out,
    )


# --- candidates ----------------------------------------------------------------------------


def _is_runnable_file(path: str) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and os.access(path, os.X_OK)


def _signature(path: str) -> tuple[object, ...]:
    """What identifies a file's current content for the cache: identity, size and mtime."""
    try:
        info = os.stat(path)
    except OSError:
        return (path, None)
    return (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)


def _path_entries(parent_env: Mapping[str, str]) -> list[str]:
    entries = parent_env.get("PATH", "").split(os.pathsep)
    return [e for e in entries if e and os.path.isabs(e)]


def _which(name: str, parent_env: Mapping[str, str]) -> str | None:
    for entry in _path_entries(parent_env):
        path = os.path.join(entry, name)
        if _is_runnable_file(path):
            return path
    return None


@dataclass(frozen=True, slots=True)
class _Plan:
    candidates: tuple[_Candidate, ...]
    refused: tuple[RejectedCandidate, ...]
    explicit: bool
    override_origin: str | None
    searched: tuple[str, ...]


def _plan(profile: Profile, parent_env: Mapping[str, str], config_override: str | None) -> _Plan:
    """Which candidates to probe (no process is started here)."""
    env_value = parent_env.get(profile.override_env)
    override: tuple[str, CandidateSource, str] | None = None
    if env_value:
        override = (env_value, "env", profile.override_env)
    elif config_override:
        override = (config_override, "config", "config")
    if override is not None:
        value, source, origin = override
        shown = _bounded(value.replace("\0", "\\0"), MAX_SHOWN_PATH_CHARS)
        if "\0" in value:
            refusal = RejectedCandidate(
                shown, source, EXECUTABLE_PATH_REFUSED, "the path contains a NUL byte; refused"
            )
            return _Plan((), (refusal,), True, origin, (shown,))
        if os.sep in value:
            path = os.path.abspath(value)
        else:
            found = _which(value, parent_env)
            if found is None:
                refusal = RejectedCandidate(
                    shown, source, EXECUTABLE_NOT_FOUND, f"no executable named {shown!r} on PATH"
                )
                return _Plan((), (refusal,), True, origin, (shown,))
            path = found
        return _Plan((_Candidate(path, source),), (), True, origin, (value,))
    seen: set[str] = set()
    candidates: list[_Candidate] = []
    for name in profile.executables:
        for entry in _path_entries(parent_env):
            path = os.path.join(entry, name)
            if not _is_runnable_file(path):
                continue
            real = os.path.realpath(path)
            if real in seen:
                continue
            seen.add(real)
            candidates.append(_Candidate(path, "path"))
    return _Plan(tuple(candidates[:MAX_CANDIDATES]), (), False, None, profile.executables)


# --- checking one candidate ----------------------------------------------------------------


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(text: str) -> str | None:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped
    return None


def _spawn_rejection(candidate: _Candidate, exc: OSError) -> RejectedCandidate:
    code = exc.errno
    if code in (errno.ENOENT, errno.ENOTDIR):
        return RejectedCandidate(
            candidate.path, candidate.source, EXECUTABLE_NOT_FOUND, "no such file"
        )
    if code in (errno.EACCES, errno.EPERM, errno.ENOEXEC, errno.EISDIR):
        return RejectedCandidate(
            candidate.path,
            candidate.source,
            EXECUTABLE_NOT_EXECUTABLE,
            f"cannot be executed: {os.strerror(code)}",
        )
    reason = os.strerror(code) if code is not None else type(exc).__name__
    return RejectedCandidate(
        candidate.path, candidate.source, EXECUTABLE_SPAWN_FAILED, f"could not be started: {reason}"
    )


def _unusable(candidate: _Candidate) -> RejectedCandidate | None:
    """A rejection for a candidate that is missing or not runnable (no process started)."""
    if not os.path.exists(candidate.path):
        return RejectedCandidate(
            candidate.path, candidate.source, EXECUTABLE_NOT_FOUND, "no such file"
        )
    if not _is_runnable_file(candidate.path):
        return RejectedCandidate(
            candidate.path,
            candidate.source,
            EXECUTABLE_NOT_EXECUTABLE,
            "not a regular file with execute permission",
        )
    return None


async def _check(
    profile: Profile,
    candidate: _Candidate,
    *,
    env: Mapping[str, str],
    cwd: str,
    timeout: float,
    max_output: int,
    redact: Redactor,
) -> tuple[str | None, RejectedCandidate | None]:
    """Run the version command and the probe; return (version, None) or (None, rejection)."""
    unusable = _unusable(candidate)
    if unusable is not None:
        return None, unusable

    def reject(reason: str, detail: str) -> tuple[None, RejectedCandidate]:
        text = _bounded(redact(detail), MAX_DETAIL_CHARS)
        return None, RejectedCandidate(candidate.path, candidate.source, reason, text)

    def bounds(what: str, out: CommandOutput) -> tuple[None, RejectedCandidate] | None:
        if out.timed_out:
            return reject(PROBE_TIMEOUT, f"{what} did not finish within {timeout:g}s")
        if out.overflowed:
            return reject(PROBE_OUTPUT_TOO_LARGE, f"{what} printed more than {max_output} bytes")
        return None

    version: str | None = None
    if profile.version_argv is not None:
        argv = (candidate.path, *profile.version_argv)
        what = f"`{shlex.join(argv)}`"
        try:
            out = await run_bounded(argv, env=env, cwd=cwd, timeout=timeout, max_output=max_output)
        except OSError as exc:
            return None, _spawn_rejection(candidate, exc)
        bounded = bounds(what, out)
        if bounded is not None:
            return bounded
        line = _first_line(out.stdout) or _first_line(out.stderr)
        if out.exit_code != 0:
            excerpt = f"; it printed: {_bounded(line, MAX_EXCERPT_CHARS)}" if line else ""
            return reject(VERSION_COMMAND_FAILED, f"{what} exited {out.exit_code}{excerpt}")
        if line is None:
            return reject(VERSION_COMMAND_FAILED, f"{what} printed nothing")
        version = _bounded(redact(line), MAX_VERSION_CHARS)

    if profile.adapter_packages:
        adapter = adapter_package_version(candidate.path, profile.adapter_packages)
        if adapter is not None:
            name, number = adapter
            shown = f"{name.rpartition('/')[2]} {number}" + (
                f", bundled {version}" if version else ""
            )
            version = _bounded(redact(shown), MAX_VERSION_CHARS)

    argv = (candidate.path, *profile.probe.argv)
    what = f"`{shlex.join(argv)}`"
    try:
        out = await run_bounded(argv, env=env, cwd=cwd, timeout=timeout, max_output=max_output)
    except OSError as exc:
        return None, _spawn_rejection(candidate, exc)
    bounded = bounds(what, out)
    if bounded is not None:
        return bounded
    missing = profile.probe.matches(out.combined)
    if missing:
        line = _first_line(out.stdout) or _first_line(out.stderr)
        excerpt = f"; it printed: {_bounded(line, MAX_EXCERPT_CHARS)}" if line else "; no output"
        return reject(
            LAUNCH_CONTRACT_MISMATCH,
            f"the output of {what} does not match /{missing[0].pattern}/ (exit "
            f"{out.exit_code}){excerpt}",
        )
    return version, None


#: Directories above an adapter's resolved executable searched for its ``package.json`` (npm
#: puts the entry point at most a few levels below the package root: ``dist/index.js``).
MAX_PACKAGE_DEPTH: Final = 4
#: Largest ``package.json`` read; a bigger one is not an adapter's manifest.
MAX_PACKAGE_JSON_BYTES: Final = 256 * 1024


def adapter_package_version(executable: str, packages: Sequence[str]) -> tuple[str, str] | None:
    """``(package name, version)`` of the npm package among ``packages`` that the executable
    (symlinks followed, as npm's ``bin`` links are) belongs to, read from its
    ``package.json``; None when it belongs to none of them (a binary, another layout)."""
    import json

    try:
        here = os.path.dirname(os.path.realpath(executable))
    except OSError:
        return None
    for _ in range(MAX_PACKAGE_DEPTH):
        manifest = os.path.join(here, "package.json")
        try:
            with open(manifest, "rb") as handle:
                raw = handle.read(MAX_PACKAGE_JSON_BYTES + 1)
        except OSError:
            raw = b""
        if raw and len(raw) <= MAX_PACKAGE_JSON_BYTES:
            try:
                data = json.loads(raw)
            except ValueError:
                data = None
            if isinstance(data, dict) and data.get("name") in packages:
                version = data.get("version")
                if isinstance(version, str) and version:
                    return str(data["name"]), version
                return None
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return None


# --- discovery -----------------------------------------------------------------------------


def make_redactor(secrets: Sequence[str] = ()) -> Redactor:
    """A redactor for probe output: credential patterns plus the exact ``secrets``."""
    values = SecretValues(secrets)

    def redact(text: str) -> str:
        return redact_text(text, values)

    return redact


async def discover(
    profile: Profile,
    *,
    parent_env: Mapping[str, str],
    config_override: str | None = None,
    secrets: Sequence[str] = (),
    timeout: float = PROBE_TIMEOUT_SECONDS,
    max_output: int = MAX_PROBE_OUTPUT_BYTES,
) -> DiscoveryResult:
    """Find ``profile``'s executable and prove its launch contract (see the module docstring).

    ``parent_env`` is Baton's own environment (the override variable and ``PATH`` are read from
    it, and the probe environment is filtered from it); ``config_override`` is the persisted
    override from the config file; ``secrets`` are exact values to redact beyond the credential
    patterns (:func:`~baton.runtime.agents.environment.sensitive_values`).
    """
    plan = _plan(profile, parent_env, config_override)
    redact = make_redactor(secrets)
    rejected = list(plan.refused)
    env = probe_environment(parent_env)
    with tempfile.TemporaryDirectory(prefix="baton-probe-", ignore_cleanup_errors=True) as cwd:
        for candidate in plan.candidates:
            version, rejection = await _check(
                profile,
                candidate,
                env=env,
                cwd=cwd,
                timeout=timeout,
                max_output=max_output,
                redact=redact,
            )
            if rejection is not None:
                rejected.append(rejection)
                continue
            return DiscoveryResult(
                profile_id=profile.id,
                selected=candidate.path,
                source=candidate.source,
                version=version,
                launch_argv=tuple(profile.launch_command(candidate.path)),
                rejected=tuple(rejected),
                explicit=plan.explicit,
                override_origin=plan.override_origin,
                searched=plan.searched,
                fingerprint=_signature(candidate.path),
            )
    return DiscoveryResult(
        profile_id=profile.id,
        selected=None,
        source=None,
        version=None,
        launch_argv=None,
        rejected=tuple(rejected),
        explicit=plan.explicit,
        override_origin=plan.override_origin,
        searched=plan.searched,
    )


@dataclass(frozen=True, slots=True)
class _Entry:
    key: tuple[object, ...]
    signatures: tuple[tuple[object, ...], ...]
    result: DiscoveryResult


class DiscoveryCache:
    """Discovery results per profile, probed again only when something they depend on changed.

    A cached result is reused while the profile, the override (variable or config), ``PATH`` and
    the file signature (identity, size, mtime, mode) of every candidate are unchanged. Changing
    the saved executable therefore invalidates the profile's entry; :meth:`invalidate` drops it
    explicitly. Deciding what to do with a running agent when the executable changed is the
    caller's (compare :attr:`DiscoveryResult.fingerprint`).
    """

    def __init__(
        self,
        *,
        timeout: float = PROBE_TIMEOUT_SECONDS,
        max_output: int = MAX_PROBE_OUTPUT_BYTES,
    ) -> None:
        self._timeout = timeout
        self._max_output = max_output
        self._entries: dict[str, _Entry] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        #: Discoveries actually run (cache misses), for diagnostics and tests.
        self.probe_runs = 0

    async def discover(
        self,
        profile: Profile,
        *,
        parent_env: Mapping[str, str],
        config_override: str | None = None,
        secrets: Sequence[str] = (),
    ) -> DiscoveryResult:
        """The cached result for ``profile`` if still valid, else a fresh :func:`discover`."""
        key: tuple[object, ...] = (
            profile,
            parent_env.get(profile.override_env),
            config_override,
            parent_env.get("PATH"),
        )
        lock = self._locks.setdefault(profile.id, asyncio.Lock())
        async with lock:
            plan = _plan(profile, parent_env, config_override)
            signatures = tuple(_signature(c.path) for c in plan.candidates)
            entry = self._entries.get(profile.id)
            if entry is not None and entry.key == key and entry.signatures == signatures:
                return entry.result
            result = await discover(
                profile,
                parent_env=parent_env,
                config_override=config_override,
                secrets=secrets,
                timeout=self._timeout,
                max_output=self._max_output,
            )
            self.probe_runs += 1
            self._entries[profile.id] = _Entry(key, signatures, result)
            return result

    def cached(self, profile_id: str) -> DiscoveryResult | None:
        """The last result for ``profile_id`` (valid or not), if any."""
        entry = self._entries.get(profile_id)
        return entry.result if entry is not None else None

    def invalidate(self, profile_id: str | None = None) -> None:
        """Forget ``profile_id``'s result, or every result."""
        if profile_id is None:
            self._entries.clear()
        else:
            self._entries.pop(profile_id, None)
