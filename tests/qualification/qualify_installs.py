"""Pinned installs of the real ACP adapters, in a cache directory outside the repository.

The cache is ``$BATON_QUALIFY_CACHE``, else ``~/.cache/baton-qualify``. Each adapter gets its own
directory named by package and version (``claude-agent-acp-0.23.1``), so a rerun reuses it and a
version bump installs beside the old one. An install is complete once its ``.baton-installed``
stamp exists; it is only written after the installed version was read back and matched the pin.

Run as a script (``make qualify`` does) to install everything: it prints what it did and how long
it took, writes ``install-times.json`` into the cache for the report, and exits 1 with the reason
(the registry could not be reached, no Python 3.12+ for fast-agent, a version mismatch) when an
install fails. It never skips silently.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The stamp written once an install is complete and verified.
STAMP: Final = ".baton-installed"

#: How long one install command may take (seconds): npm or pip hanging on an unreachable
#: registry fails the step instead of the whole CI run.
INSTALL_TIMEOUT_SECONDS: Final = 600

#: How long a version probe of an interpreter may take (seconds).
PROBE_TIMEOUT_SECONDS: Final = 30

#: Characters of an installer's output kept in a failure message.
MAX_OUTPUT_CHARS: Final = 3000


class InstallFailed(Exception):
    """An adapter could not be installed; the message says why and what to do."""


@dataclass(frozen=True)
class Pin:
    """One pinned adapter: what to install, where its executable lands, which profile runs it."""

    name: str  # claude-agent-acp
    version: str
    kind: str  # npm or venv
    package: str  # the registry name
    executable: str  # relative to the install directory
    profile: str  # Baton's profile id
    override_env: str  # the BATON_*_BIN variable that points the profile at the executable

    @property
    def key(self) -> str:
        """``name-version``: the cache directory and the fixture directory name."""
        return f"{self.name}-{self.version}"


CLAUDE: Final = Pin(
    "claude-agent-acp",
    "0.23.1",
    "npm",
    "@zed-industries/claude-agent-acp",
    "node_modules/.bin/claude-agent-acp",
    "claude",
    "BATON_CLAUDE_AGENT_ACP_BIN",
)
CODEX: Final = Pin(
    "codex-acp",
    "0.16.0",
    "npm",
    "@zed-industries/codex-acp",
    "node_modules/.bin/codex-acp",
    "codex",
    "BATON_CODEX_ACP_BIN",
)
FAST_AGENT: Final = Pin(
    "fast-agent",
    "0.10.48",
    "venv",
    "fast-agent-mcp",
    "bin/fast-agent",
    "fast-agent",
    "BATON_FAST_AGENT_ACP_BIN",
)

PINS: Final = (CLAUDE, CODEX, FAST_AGENT)

# The newest versions the registries gave on 2026-12-03, for the feature captures
# (record_features.py, issue 20). Both adapters moved to the @agentclientprotocol scope on npm
# (claude-agent-acp 0.24+, codex-acp 1.0+); the @zed-industries packages stopped at 0.23.1 and
# 0.16.0, the versions the rest of the qualification suite runs. fast-agent 0.10.48 is still
# PyPI's newest.
CLAUDE_NEWEST: Final = Pin(
    "claude-agent-acp",
    "0.101.0",
    "npm",
    "@agentclientprotocol/claude-agent-acp",
    "node_modules/.bin/claude-agent-acp",
    "claude",
    "BATON_CLAUDE_AGENT_ACP_BIN",
)
CODEX_NEWEST: Final = Pin(
    "codex-acp",
    "2.6.0",
    "npm",
    "@agentclientprotocol/codex-acp",
    "node_modules/.bin/codex-acp",
    "codex",
    "BATON_CODEX_ACP_BIN",
)

#: What record_features.py captures: the newest version of each adapter.
FEATURE_PINS: Final = (CLAUDE_NEWEST, CODEX_NEWEST, FAST_AGENT)

#: The official Python SDK's current stable release (PyPI's newest non-pre-release on
#: 2026-12-03), for an echo agent built on it (tests/qualification/agents/py_sdk_echo_agent.py;
#: issue 29). Its "executable" is the venv's interpreter, which runs the agent script.
PY_SDK: Final = Pin(
    "acp-python-sdk",
    "0.12.1",
    "venv",
    "agent-client-protocol",
    "bin/python",
    "py-sdk-echo",
    "BATON_PY_SDK_ECHO_ACP_BIN",
)

#: Every pin ``make qualify`` installs: the suite's, the feature captures' and the SDK's, each
#: once.
ALL_PINS: Final = tuple(dict.fromkeys((*PINS, *FEATURE_PINS, PY_SDK)))


def cache_dir() -> Path:
    """The cache directory (created)."""
    raw = os.environ.get("BATON_QUALIFY_CACHE") or str(Path.home() / ".cache" / "baton-qualify")
    path = Path(raw).expanduser().resolve()
    path.mkdir(parents=True, exist_ok=True)
    return path


def install_dir(pin: Pin) -> Path:
    """Where ``pin`` is installed."""
    return cache_dir() / pin.key


def executable(pin: Pin) -> Path:
    """The adapter's executable inside its install directory."""
    return install_dir(pin) / pin.executable


@dataclass(frozen=True)
class Installed:
    """The outcome of :func:`ensure`."""

    pin: Pin
    executable: Path
    seconds: float
    cached: bool


def _tail(text: str) -> str:
    return text[-MAX_OUTPUT_CHARS:].strip()


def _run(argv: list[str], what: str, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_SECONDS,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise InstallFailed(f"{what}: {argv[0]} is not installed ({exc})") from exc
    except subprocess.TimeoutExpired as exc:
        raise InstallFailed(
            f"{what}: no answer within {INSTALL_TIMEOUT_SECONDS}s (is the package registry "
            f"reachable from this machine?): {shlex_join(argv)}"
        ) from exc
    if done.returncode != 0:
        raise InstallFailed(
            f"{what} failed (exit {done.returncode}; is the package registry reachable?): "
            f"{shlex_join(argv)}\n{_tail(done.stdout + done.stderr)}"
        )
    return done.stdout


def shlex_join(argv: list[str]) -> str:
    """``argv`` as one shell-quoted line."""
    import shlex

    return shlex.join(argv)


def _npm_version(pin: Pin, root: Path) -> str | None:
    manifest = root / "node_modules" / pin.package / "package.json"
    try:
        version = json.loads(manifest.read_text()).get("version")
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) else None


def _venv_version(pin: Pin, root: Path) -> str | None:
    python = root / "bin" / "python"
    if not python.exists():
        return None
    try:
        done = subprocess.run(
            [
                str(python),
                "-c",
                f"import importlib.metadata as m; print(m.version({pin.package!r}))",
            ],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def installed_version(pin: Pin) -> str | None:
    """The version actually installed for ``pin`` (None when nothing is)."""
    root = install_dir(pin)
    return _npm_version(pin, root) if pin.kind == "npm" else _venv_version(pin, root)


def _interpreter(command: str, env: dict[str, str]) -> tuple[str | None, str]:
    """``(sys.executable, "")`` when ``command`` runs Python 3.12+ in ``env``, else
    ``(None, why not)``."""
    check = "import sys; print(sys.executable if sys.version_info >= (3, 12) else '')"
    try:
        done = subprocess.run(
            [command, "-c", check],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_SECONDS,
            env=env,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    found = done.stdout.strip()
    if done.returncode == 0 and found:
        return found, ""
    return None, _tail(done.stdout + done.stderr)[:200] or "older than 3.12"


def python_for_fast_agent() -> str:
    """The path of a Python 3.12+ interpreter (``BATON_QUALIFY_PYTHON``, else ``python3.12``,
    ``python3.13``, ``python3.14`` on PATH; a pyenv shim of a version that is not the active one
    is retried with ``PYENV_VERSION``). Raises InstallFailed saying what was tried."""
    explicit = os.environ.get("BATON_QUALIFY_PYTHON")
    names = [explicit] if explicit else ["python3.12", "python3.13", "python3.14"]
    pyenv = shutil.which("pyenv")
    tried: list[str] = []
    for name in names:
        command = shutil.which(name)
        if command is None:
            tried.append(f"{name}: not on PATH")
            continue
        environments = [dict(os.environ)]
        if pyenv is not None:
            listed = subprocess.run(
                [pyenv, "versions", "--bare"],
                capture_output=True,
                text=True,
                timeout=PROBE_TIMEOUT_SECONDS,
            ).stdout.split()
            minor = name.removeprefix("python") + "."
            environments += [
                dict(os.environ, PYENV_VERSION=v) for v in listed if v.startswith(minor)
            ]
        for env in environments:
            found, why = _interpreter(command, env)
            if found is not None:
                return found
            tried.append(f"{command}: {why}")
    raise InstallFailed(
        "fast-agent 0.10.48 needs Python 3.12 or newer (on 3.11 pip silently installs 0.2.36, "
        "which has no ACP), and none was found: "
        + "; ".join(tried)
        + ". Install python3.12 or python3.13, or name one in BATON_QUALIFY_PYTHON."
    )


def _install(pin: Pin) -> None:
    root = install_dir(pin)
    if root.exists():
        shutil.rmtree(root)  # a half-finished install is never reused
    root.mkdir(parents=True)
    spec = f"{pin.package}@{pin.version}" if pin.kind == "npm" else f"{pin.package}=={pin.version}"
    if pin.kind == "npm":
        _run(
            ["npm", "install", "--prefix", str(root), "--no-audit", "--no-fund", "--no-save", spec],
            f"npm install {spec}",
        )
    else:
        python = python_for_fast_agent()
        _run([python, "-m", "venv", str(root)], f"creating the {pin.name} venv with {python}")
        _run(
            [
                str(root / "bin" / "python"),
                "-m",
                "pip",
                "install",
                "-q",
                "--disable-pip-version-check",
                spec,
            ],
            f"pip install {spec}",
        )


def ensure(pin: Pin) -> Installed:
    """Install ``pin`` unless a verified install is cached; verify the version either way."""
    started = time.monotonic()
    stamp = install_dir(pin) / STAMP
    exe = executable(pin)
    cached = stamp.exists() and exe.exists()
    if not cached:
        _install(pin)
    version = installed_version(pin)
    if version != pin.version:
        raise InstallFailed(
            f"{pin.key}: installed version is {version!r}, not the pinned {pin.version} "
            f"(remove {install_dir(pin)} to reinstall)"
        )
    if not exe.exists():
        raise InstallFailed(f"{pin.key}: the executable {exe} is missing after the install")
    if not cached:
        stamp.write_text(json.dumps({"package": pin.package, "version": pin.version}) + "\n")
    return Installed(pin, exe, time.monotonic() - started, cached)


def times_file() -> Path:
    """Where the last installer run recorded its times (read by the report)."""
    return cache_dir() / "install-times.json"


def main(argv: list[str]) -> int:
    """Install every pin (or the named ones); 1 with the reason on the first failure."""
    names = set(argv)
    unknown = names - {p.name for p in ALL_PINS}
    if unknown:
        print(
            f"unknown adapters: {sorted(unknown)}; known: {[p.name for p in PINS]}", file=sys.stderr
        )
        return 2
    times: dict[str, dict[str, object]] = {}
    for pin in ALL_PINS:
        if names and pin.name not in names:
            continue
        print(f"qualify: {pin.key} ({pin.kind} {pin.package}) ...", flush=True)
        try:
            done = ensure(pin)
        except InstallFailed as exc:
            print(f"qualify: INSTALL FAILED: {exc}", file=sys.stderr)
            return 1
        how = "cached" if done.cached else "installed"
        print(f"qualify: {pin.key} {how} in {done.seconds:.1f}s: {done.executable}", flush=True)
        times[pin.key] = {"seconds": round(done.seconds, 2), "cached": done.cached}
    times_file().write_text(json.dumps(times, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
