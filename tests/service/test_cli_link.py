"""How the CLI finds a running service: the runtime file counts only while its lock is held,
and `runs`/`show` go through the service unless --no-server."""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
from pathlib import Path

from baton.service.runtime_file import RuntimeInfo, find_service, lock_is_held


def _data_dir(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    return data


def _write_runtime_file(data: Path, url: str) -> None:
    path = data / "serve.json"
    path.write_bytes(RuntimeInfo(url, os.getpid(), "t" * 43).to_json())
    path.chmod(0o600)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_runtime_file_counts_only_while_the_lock_is_held(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    assert find_service(data) is None and not lock_is_held(data)
    _write_runtime_file(data, "http://127.0.0.1:9")
    assert find_service(data) is None  # no lock file: a dead service's leftover
    lock = os.open(data / "serve.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        # flock locks belong to the open file: a second open in this process conflicts too.
        assert lock_is_held(data)
        info = find_service(data)
        assert info is not None and info.url == "http://127.0.0.1:9"
        (data / "serve.json").chmod(0o644)
        assert find_service(data) is None  # a file others can read is not trusted
    finally:
        os.close(lock)
    assert not lock_is_held(data)


def test_runs_and_show_go_through_the_service_unless_told_not_to(tmp_path: Path) -> None:
    data = _data_dir(tmp_path)
    _write_runtime_file(data, f"http://127.0.0.1:{_closed_port()}")
    lock = os.open(data / "serve.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "BATON_HOME": str(data)}
    try:
        for args in (["runs"], ["show", "run-1"]):
            tried = subprocess.run(
                [sys.executable, "-m", "baton.cli.main", *args],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert tried.returncode == 2
            assert "SERVICE_UNREACHABLE" in tried.stderr and "Traceback" not in tried.stderr
        local = subprocess.run(
            [sys.executable, "-m", "baton.cli.main", "runs", "--no-server"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert local.returncode == 0 and local.stdout == "no runs\n"
    finally:
        os.close(lock)
