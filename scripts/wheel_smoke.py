#!/usr/bin/env python3
"""Install the built wheel outside the checkout and run Baton from it (``make dist-check``, CI).

    python scripts/wheel_smoke.py DIST_DIR [--installers pip,pipx,uv]

Each installer puts the wheel in DIST_DIR into its own fresh temporary directory, the way the
README's install lines do (a path to the wheel where they name ``baton-acp``):

    pip:   python -m venv VENV && VENV/bin/python -m pip install WHEEL
    pipx:  pipx install WHEEL        (PIPX_HOME and PIPX_BIN_DIR in the temporary directory)
    uv:    uv tool install WHEEL     (UV_TOOL_DIR and UV_TOOL_BIN_DIR likewise)

and then the same CHECKS run against that install, with the checkout off every path: the
working directory is the temporary directory, PYTHONPATH, PYTHONHOME and the checkout's PATH
entries are dropped, and Baton's commands run with HOME in the temporary directory and no
BATON_* variable. A runtime file missing from the wheel fails a check here; a file the wheel
lacks compared with git is caught before, by ``scripts/dist_check.py contents``.

Adding a check is one line in CHECKS. The inspector's are two: its files are installed and
whole (every file the page loads, down through every module's imports), and ``baton inspect``
from the install starts the service and serves the page (``serve_page``).

pipx and uv come from the ``dist`` extra (``make dist-check`` installs them into .venv).
Exits 1 at the first failure, printing what ran and its output.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

#: The checkout this script belongs to: nothing under it may be on an installed Baton's path.
ROOT: Final = Path(__file__).resolve().parent.parent

#: How long one install may take: it downloads Baton's dependencies (and pipx's shared pip)
#: from the package index; a stuck index fails the check instead of hanging CI.
INSTALL_TIMEOUT_S: Final = 600.0

#: How long one Baton command may take: the scripted turn below takes about a second.
COMMAND_TIMEOUT_S: Final = 120.0

#: How long serve_page waits for a page to answer, and how often it asks.
PAGE_TIMEOUT_S: Final = 30.0
PAGE_POLL_S: Final = 0.1

#: How long a served page's process gets to exit after SIGTERM before it is killed.
STOP_GRACE_S: Final = 5.0

#: Environment variables that could point an installed Baton back at the checkout or change
#: what the interpreter imports; all are dropped.
PYTHON_PATH_VARIABLES: Final = (
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONSTARTUP",
    "PYTHONUSERBASE",
    "VIRTUAL_ENV",
)

#: The scripted turn: streamed text, a plan, a file write allowed by policy, a last line.
TURN_PROMPT: Final = (
    "echo Hello from the installed wheel.\\n; stream 3; "
    "plan Install | Run a turn; write hello.txt Hello, Baton!\\n; echo Done.\\n"
)


class CheckFailed(Exception):
    """A check of the installed wheel failed; the message says what ran and what came out."""


@dataclass(frozen=True)
class Installed:
    """One installation of the wheel and how to run it outside the checkout."""

    installer: str
    bin_dir: Path  # where the `baton` console script is
    python: Path  # the interpreter that runs it (from the script's #! line)
    prefix: Path  # the environment Baton's files must come from
    env: Mapping[str, str]  # for Baton's commands
    work: Path  # the working directory of every command
    version_line: str  # what `baton --version` must print

    @property
    def baton(self) -> list[str]:
        """The console script, by its full path."""
        return [str(self.bin_dir / "baton")]


def outside_checkout_env(base: Mapping[str, str], root: Path = ROOT) -> dict[str, str]:
    """``base`` without the variables that could lead an interpreter back to ``root``: the
    Python path variables, and every PATH entry inside ``root``."""
    env = {k: v for k, v in base.items() if k not in PYTHON_PATH_VARIABLES}
    entries = [e for e in env.get("PATH", "").split(os.pathsep) if e]
    env["PATH"] = os.pathsep.join(e for e in entries if not _inside(Path(e), root))
    return env


def baton_env(base: Mapping[str, str], bin_dir: Path, home: Path) -> dict[str, str]:
    """The environment Baton's commands run with: ``bin_dir`` first on PATH (so
    ``--agent-command "baton agent scripted"`` finds the installed Baton), HOME in the
    temporary directory and no BATON_* or XDG_* variable (no user config or data dir)."""
    env = {k: v for k, v in base.items() if not k.startswith(("BATON_", "XDG_"))}
    env["PATH"] = os.pathsep.join(p for p in (str(bin_dir), env.get("PATH", "")) if p)
    env["HOME"] = str(home)
    return env


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def run(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float = COMMAND_TIMEOUT_S,
    expect_code: int | None = 0,
) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; raise CheckFailed (with its output) when it exits otherwise than
    ``expect_code`` (None accepts any code) or outlives ``timeout``."""
    try:
        done = subprocess.run(
            list(argv),
            env=dict(env),
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise CheckFailed(f"{_show(argv)} did not finish in {timeout:g} s") from exc
    if expect_code is not None and done.returncode != expect_code:
        raise CheckFailed(
            f"{_show(argv)} exited {done.returncode}, expected {expect_code}\n"
            f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        )
    return done


def _show(argv: Sequence[str]) -> str:
    return " ".join(argv)


def script_python(script: Path) -> Path:
    """The interpreter a console script runs with, from its ``#!`` line."""
    first = script.read_text(encoding="utf-8").splitlines()[0]
    if not first.startswith("#!"):
        raise CheckFailed(f"{script} has no #! line")
    return Path(first[2:].strip().split()[0])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def serve_page(
    argv: Sequence[str],
    path: str,
    env: Mapping[str, str],
    cwd: Path,
    *,
    timeout: float = PAGE_TIMEOUT_S,
    headers: Mapping[str, str] | None = None,
    final_refusal: bool = False,
) -> bytes:
    """Start the server ``argv`` (``{port}`` in an argument becomes a free port), fetch
    ``http://127.0.0.1:{port}{path}`` until it answers 200 or ``timeout`` passes, stop the
    server, and return the page's body. ``headers`` go with every fetch (a bearer token).
    ``final_refusal``: an HTTP error answer ends the wait at once (else it is asked again).
    Raises CheckFailed if no page came, or it was empty."""
    port = free_port()
    command = [arg.replace("{port}", str(port)) for arg in argv]
    url = f"http://127.0.0.1:{port}{path}"
    server = subprocess.Popen(
        command,
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    body: bytes | None = None
    last_error = "no answer"
    try:
        deadline = time.monotonic() + timeout
        while body is None and time.monotonic() < deadline and server.poll() is None:
            try:
                request = urllib.request.Request(url, headers=dict(headers or {}))
                with urllib.request.urlopen(request, timeout=PAGE_POLL_S * 10) as response:
                    body = response.read()
            except urllib.error.HTTPError as exc:
                last_error = str(exc)
                if final_refusal:  # the server is up and refused: asking again won't help
                    break
                time.sleep(PAGE_POLL_S)
            except (urllib.error.URLError, OSError) as exc:
                last_error = str(exc)
                time.sleep(PAGE_POLL_S)
    finally:
        server.terminate()
        try:
            output, _ = server.communicate(timeout=STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            server.kill()
            output, _ = server.communicate()
    if body is None:
        raise CheckFailed(f"{_show(command)}: no page at {url} ({last_error})\noutput:\n{output}")
    if not body.strip():
        raise CheckFailed(f"{_show(command)}: the page at {url} is empty")
    return body


# --- the checks, each run against every install ---------------------------------------------


def check_version(inst: Installed) -> None:
    """``baton --version`` and ``python -m baton --version`` name this version and Baton's
    distribution, and warn of no other distribution claiming the import package."""
    wanted = inst.version_line
    for argv in (inst.baton, [str(inst.python), "-m", "baton"]):
        done = run([*argv, "--version"], env=inst.env, cwd=inst.work)
        if done.stdout.strip() != wanted:
            raise CheckFailed(f"{_show(argv)} --version printed {done.stdout!r}, not {wanted!r}")
        if done.stderr.strip():
            raise CheckFailed(f"{_show(argv)} --version warned: {done.stderr.strip()}")


def check_import_location(inst: Installed) -> None:
    """The interpreter imports Baton from the install, and nothing of the checkout is on its
    path."""
    probe = "import json, sys, baton; print(json.dumps([baton.__file__, sys.path]))"
    done = run([str(inst.python), "-c", probe], env=inst.env, cwd=inst.work)
    module_file, path = json.loads(done.stdout)
    if not _inside(Path(module_file), inst.prefix):
        raise CheckFailed(f"baton was imported from {module_file}, not from {inst.prefix}")
    leaks = [p for p in path if p and _inside(Path(p), ROOT)]
    if leaks:
        raise CheckFailed(f"the checkout is on the installed interpreter's path: {leaks}")


def check_doctor(inst: Installed) -> None:
    """``baton doctor --json`` prints one readiness record per profile."""
    done = run([*inst.baton, "doctor", "--json"], env=inst.env, cwd=inst.work)
    lines = done.stdout.splitlines()
    if not lines:
        raise CheckFailed("baton doctor --json printed nothing")
    for line in lines:
        record = json.loads(line)
        if record.get("schema") != "baton/readiness@v1" or not record.get("profile"):
            raise CheckFailed(f"baton doctor --json printed {line!r}")


def check_turn(inst: Installed) -> None:
    """A real turn against the bundled scripted agent, started by name from PATH: the reply
    streams, the policy allows the file write, the run completes and its journal verifies."""
    session = inst.work / "session"
    session.mkdir()
    data = inst.work / "data"
    argv = [
        *inst.baton,
        "run",
        "--agent-command",
        "baton agent scripted",
        "--data-dir",
        str(data),
        "--cwd",
        str(session),
        "--allow-unattended",
        "--policy",
        "auto-edits",
        "--format",
        "json",
        TURN_PROMPT,
    ]
    done = run(argv, env=inst.env, cwd=inst.work)
    result = json.loads(done.stdout.splitlines()[-1])
    outcome = tuple(result.get(k) for k in ("type", "status", "stopReason", "exitCode"))
    if outcome != ("result", "COMPLETED", "end_turn", 0):
        raise CheckFailed(f"the turn ended with {result}")
    if "Hello from the installed wheel." not in done.stdout:
        raise CheckFailed(f"the reply did not stream:\n{done.stdout}")
    written = session / "hello.txt"
    if not written.is_file() or written.read_text(encoding="utf-8") != "Hello, Baton!\n":
        raise CheckFailed(f"{written} was not written by the turn")
    run(
        [*inst.baton, "journal", "verify", "--all", "--data-dir", str(data)],
        env=inst.env,
        cwd=inst.work,
    )


def check_inspector_files(inst: Installed) -> None:
    """The inspector's page is in the install: its entry page and every file it loads, down
    through every module's imports, are package data the installed Baton can serve."""
    probe = (
        "import json; from baton.inspector import asset_names, missing_references, load_asset; "
        "print(json.dumps([list(asset_names()), missing_references(), "
        "load_asset('index.html') is not None]))"
    )
    done = run([str(inst.python), "-c", probe], env=inst.env, cwd=inst.work)
    names, missing, has_page = json.loads(done.stdout)
    if missing or not has_page or "js/main.js" not in names:
        raise CheckFailed(f"the installed inspector is not whole: {names} missing {missing}")


#: The service token of the inspector check (BATON_SERVE_TOKEN), so it can fetch the page.
INSPECT_TOKEN: Final = "wheel-smoke-inspector-" + "t" * 32


def check_inspector_page(inst: Installed) -> None:
    """``baton inspect`` from the install starts the service when none runs and serves the
    inspector: ``/`` with the token is the page that loads its main module."""
    env = {**inst.env, "BATON_SERVE_TOKEN": INSPECT_TOKEN}
    argv = [
        *inst.baton,
        "inspect",
        "--no-browser",
        "--port",
        "{port}",
        "--data-dir",
        str(inst.work / "inspect-data"),
    ]
    bearer = {"Authorization": f"Bearer {INSPECT_TOKEN}"}
    body = serve_page(argv, "/", env, inst.work, headers=bearer)
    if b'src="/inspector/js/main.js"' not in body:
        raise CheckFailed(f"baton inspect served {body[:200]!r}, not the inspector's page")


#: What runs against every install, in order. One line per check (see the module docstring
#: for the inspector's).
CHECKS: tuple[tuple[str, Callable[[Installed], None]], ...] = (
    ("baton --version and python -m baton --version", check_version),
    ("baton is imported from the install, the checkout is off the path", check_import_location),
    ("baton doctor --json", check_doctor),
    ("a real turn: baton run --agent-command 'baton agent scripted'", check_turn),
    ("the inspector's page files are installed and whole", check_inspector_files),
    ("baton inspect serves the inspector's page", check_inspector_page),
)


# --- the installers ------------------------------------------------------------------------


def _tool(name: str) -> str:
    """A tool from the interpreter running this script (the `dist` extra), else from PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise CheckFailed(f"{name} is not installed (it is in the dist extra: make dist-check)")
    return found


def base_python() -> str:
    """The interpreter new environments are made from: the one under this script's venv."""
    return str(getattr(sys, "_base_executable", sys.executable))


def install_pip(wheel: Path, tmp: Path, env: Mapping[str, str]) -> tuple[Path, Path]:
    """``python -m venv`` and ``pip install WHEEL``; returns (bin dir, environment)."""
    venv = tmp / "venv"
    run([base_python(), "-m", "venv", str(venv)], env=env, cwd=tmp, timeout=INSTALL_TIMEOUT_S)
    run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
        env=env,
        cwd=tmp,
        timeout=INSTALL_TIMEOUT_S,
    )
    return venv / "bin", venv


def install_pipx(wheel: Path, tmp: Path, env: Mapping[str, str]) -> tuple[Path, Path]:
    """``pipx install WHEEL`` with pipx's home and bin dir in ``tmp``."""
    home, bin_dir = tmp / "pipx-home", tmp / "pipx-bin"
    pipx_env = {
        **env,
        "PIPX_HOME": str(home),
        "PIPX_BIN_DIR": str(bin_dir),
        "PIPX_MAN_DIR": str(tmp / "pipx-man"),
        "PIPX_DEFAULT_PYTHON": base_python(),
    }
    run([_tool("pipx"), "install", str(wheel)], env=pipx_env, cwd=tmp, timeout=INSTALL_TIMEOUT_S)
    return bin_dir, home


def install_uv(wheel: Path, tmp: Path, env: Mapping[str, str]) -> tuple[Path, Path]:
    """``uv tool install WHEEL`` with uv's tool and bin dirs in ``tmp``, on this machine's
    Python (never a downloaded one)."""
    tools, bin_dir = tmp / "uv-tools", tmp / "uv-bin"
    uv_env = {
        **env,
        "UV_TOOL_DIR": str(tools),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_PYTHON": base_python(),
        "UV_PYTHON_DOWNLOADS": "never",
        "UV_NO_MODIFY_PATH": "1",
    }
    run(
        [_tool("uv"), "tool", "install", str(wheel)], env=uv_env, cwd=tmp, timeout=INSTALL_TIMEOUT_S
    )
    return bin_dir, tools


INSTALLERS: Final[dict[str, Callable[[Path, Path, Mapping[str, str]], tuple[Path, Path]]]] = {
    "pip": install_pip,
    "pipx": install_pipx,
    "uv": install_uv,
}


def find_wheel(dist_dir: Path) -> Path:
    """The one wheel in ``dist_dir``."""
    wheels = sorted(dist_dir.glob("*.whl"))
    if len(wheels) != 1:
        raise CheckFailed(f"{dist_dir} holds {len(wheels)} wheels, expected one (make dist)")
    return wheels[0].resolve()


def smoke(wheel: Path, installer: str, version_line: str) -> None:
    """Install ``wheel`` with ``installer`` in a fresh temporary directory and run CHECKS;
    ``version_line`` is what its ``baton --version`` must print."""
    with tempfile.TemporaryDirectory(prefix=f"baton-wheel-{installer}-") as name:
        tmp = Path(name).resolve()
        if _inside(tmp, ROOT):
            raise CheckFailed(f"the temporary directory {tmp} is inside the checkout")
        env = outside_checkout_env(os.environ)
        started = time.monotonic()
        bin_dir, prefix = INSTALLERS[installer](wheel, tmp, env)
        script = bin_dir / "baton"
        if not script.exists():
            raise CheckFailed(f"{installer} installed no baton console script in {bin_dir}")
        home, work = tmp / "home", tmp / "work"
        home.mkdir()
        work.mkdir()
        inst = Installed(
            installer=installer,
            bin_dir=bin_dir,
            python=script_python(script),
            prefix=prefix,
            env=baton_env(env, bin_dir, home),
            work=work,
            version_line=version_line,
        )
        print(f"wheel_smoke: {installer}: installed in {time.monotonic() - started:.1f} s")
        for title, check in CHECKS:
            started = time.monotonic()
            check(inst)
            print(f"wheel_smoke: {installer}: ok {title} ({time.monotonic() - started:.1f} s)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run every installer's smoke test; print the first failure and return 1."""
    parser = argparse.ArgumentParser(description="Install the built wheel and run Baton from it.")
    parser.add_argument("dist_dir", type=Path)
    parser.add_argument(
        "--installers",
        default=",".join(INSTALLERS),
        help=f"comma-separated, from {', '.join(INSTALLERS)} (default: all)",
    )
    args = parser.parse_args(argv)
    chosen = [name for name in args.installers.split(",") if name]
    unknown = [name for name in chosen if name not in INSTALLERS]
    if unknown or not chosen:
        parser.error(f"unknown installers {unknown}; choose from {', '.join(INSTALLERS)}")
    from dist_check import read_source  # beside this script

    source = read_source()
    version_line = f"baton {source.version} (distribution {source.distribution})"
    started = time.monotonic()
    try:
        wheel = find_wheel(args.dist_dir)
        for installer in chosen:
            smoke(wheel, installer, version_line)
    except CheckFailed as exc:
        print(f"wheel_smoke: FAILED: {exc}", file=sys.stderr)
        return 1
    print(
        f"wheel_smoke: {wheel.name}: {len(chosen)} installs x {len(CHECKS)} checks passed "
        f"in {time.monotonic() - started:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
