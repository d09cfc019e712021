"""Pinned installs of the official ACP SDKs whose experimental v2 agents Baton is tested
against, in a cache directory outside the repository (``$BATON_V2_SDKS_CACHE``, else
``~/.cache/baton-v2-sdks``):

- the Python SDK ``agent-client-protocol`` 1.0.0rc3 (``acp.experimental.v2``) in its own venv;
- the TypeScript SDK ``@agentclientprotocol/sdk`` 2.4.0 (``experimental/v2``) with npm, run with
  Node.

Each install is complete once its ``.baton-installed`` stamp exists, written only after the
installed version was read back and matched the pin. Run as a script (``make test-v2-sdks``
does) to install both; it exits 1 with the reason when an install fails, never skipping.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

#: The stamp written once an install is complete and verified.
STAMP: Final = ".baton-installed"

#: How long one install command may take (seconds): a registry that hangs fails the step.
INSTALL_TIMEOUT_SECONDS: Final = 600

#: Characters of an installer's output kept in a failure message.
MAX_OUTPUT_CHARS: Final = 3000

PYTHON_SDK: Final = ("agent-client-protocol", "1.0.0rc3")
TS_SDK: Final = ("@agentclientprotocol/sdk", "2.4.0")

#: The test agents, beside this file.
AGENTS: Final = Path(__file__).resolve().parent / "agents"


class InstallFailed(Exception):
    """An SDK could not be installed; the message says why."""


def cache_dir() -> Path:
    """Where the SDKs live."""
    configured = os.environ.get("BATON_V2_SDKS_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "baton-v2-sdks"


def python_dir() -> Path:
    """The Python SDK's venv."""
    return cache_dir() / f"python-sdk-{PYTHON_SDK[1]}"


def ts_dir() -> Path:
    """The TypeScript SDK's npm prefix (the agent file is copied here to resolve the SDK)."""
    return cache_dir() / f"ts-sdk-{TS_SDK[1]}"


def python_agent() -> list[str]:
    """The argv of the Python SDK agent."""
    return [str(python_dir() / "bin" / "python"), str(AGENTS / "py_sdk_agent.py")]


def ts_agent() -> list[str]:
    """The argv of the TypeScript SDK agent (a copy beside the installed SDK: Node resolves an
    ES module's imports from the file's own directory)."""
    node = shutil.which("node")
    if node is None:
        raise InstallFailed("node is needed to run the TypeScript SDK agent")
    target = ts_dir() / "ts_sdk_agent.mjs"
    shutil.copyfile(AGENTS / "ts_sdk_agent.mjs", target)
    return [node, str(target)]


def _run(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallFailed(f"{what}: {type(exc).__name__}: {exc}") from None
    if done.returncode != 0:
        output = (done.stdout + done.stderr)[-MAX_OUTPUT_CHARS:]
        raise InstallFailed(f"{what} exited {done.returncode}:\n{output}")
    return done.stdout


def install_python() -> Path:
    """The Python SDK's venv, made and verified if needed."""
    target = python_dir()
    if (target / STAMP).exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    _run([sys.executable, "-m", "venv", str(target)], "creating the Python SDK venv")
    python = str(target / "bin" / "python")
    name, version = PYTHON_SDK
    _run([python, "-m", "pip", "install", "-q", f"{name}=={version}"], f"pip install {name}")
    shown = _run([python, "-m", "pip", "show", name], f"pip show {name}")
    if f"Version: {version}" not in shown:
        raise InstallFailed(f"{name}: installed version is not {version}:\n{shown}")
    (target / STAMP).write_text(version)
    return target


def install_ts() -> Path:
    """The TypeScript SDK under an npm prefix, installed and verified if needed."""
    target = ts_dir()
    if (target / STAMP).exists():
        return target
    if shutil.which("npm") is None or shutil.which("node") is None:
        raise InstallFailed("node and npm are needed to install the TypeScript SDK")
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    (target / "package.json").write_text('{"name": "baton-v2-sdks", "private": true}\n')
    name, version = TS_SDK
    _run(
        ["npm", "install", "--prefix", str(target), "--no-audit", "--no-fund", f"{name}@{version}"],
        f"npm install {name}",
    )
    manifest = target / "node_modules" / name / "package.json"
    installed = json.loads(manifest.read_text()).get("version") if manifest.exists() else None
    if installed != version:
        raise InstallFailed(f"{name}: installed version {installed!r} is not {version}")
    (target / STAMP).write_text(version)
    return target


def main() -> int:
    """Install both SDKs; print what happened."""
    try:
        print(f"python SDK: {install_python()}")
        print(f"typescript SDK: {install_ts()}")
    except InstallFailed as exc:
        print(f"test-v2-sdks: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
