"""scripts/wheel_smoke.py: its environments, its page helper, and its checks against the
development install (where the import-location check must fail: Baton comes from src/)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from baton.cli.version import version_line

ROOT = Path(__file__).resolve().parents[2]
DEV_BIN = Path(sys.executable).parent


def test_outside_checkout_env_drops_the_checkout(wheel_smoke: ModuleType) -> None:
    base = {
        "PYTHONPATH": str(ROOT / "src"),
        "PYTHONHOME": "/x",
        "VIRTUAL_ENV": str(ROOT / ".venv"),
        "PATH": os.pathsep.join([str(ROOT / ".venv" / "bin"), "/usr/bin", str(ROOT), "/bin"]),
        "PIP_FIND_LINKS": "/opt/wheels",
    }
    env = wheel_smoke.outside_checkout_env(base, ROOT)
    assert env == {"PATH": os.pathsep.join(["/usr/bin", "/bin"]), "PIP_FIND_LINKS": "/opt/wheels"}


def test_baton_env_puts_the_install_first_and_home_aside(
    wheel_smoke: ModuleType, tmp_path: Path
) -> None:
    base = {
        "PATH": "/usr/bin",
        "HOME": "/root",
        "BATON_HOME": "/data",
        "BATON_CONFIG": "/c",
        "XDG_CONFIG_HOME": "/xdg",
        "LANG": "C.UTF-8",
    }
    env = wheel_smoke.baton_env(base, tmp_path / "bin", tmp_path / "home")
    assert env == {
        "PATH": os.pathsep.join([str(tmp_path / "bin"), "/usr/bin"]),
        "HOME": str(tmp_path / "home"),
        "LANG": "C.UTF-8",
    }


def test_script_python_reads_the_shebang(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    script = tmp_path / "baton"
    script.write_text("#!/opt/venv/bin/python3 -E\nimport sys\n")
    assert wheel_smoke.script_python(script) == Path("/opt/venv/bin/python3")
    script.write_text("import sys\n")
    with pytest.raises(wheel_smoke.CheckFailed, match="no #! line"):
        wheel_smoke.script_python(script)


def test_run_reports_the_exit_code_and_output(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    argv = [
        sys.executable,
        "-c",
        "import sys; print('out'); print('err', file=sys.stderr); sys.exit(3)",
    ]
    with pytest.raises(wheel_smoke.CheckFailed, match=r"exited 3, expected 0\nstdout:\nout\n"):
        wheel_smoke.run(argv, env=os.environ, cwd=tmp_path)
    assert wheel_smoke.run(argv, env=os.environ, cwd=tmp_path, expect_code=3).stderr == "err\n"


def test_serve_page_fetches_a_page_and_stops_the_server(
    wheel_smoke: ModuleType, tmp_path: Path
) -> None:
    # The stand-in for the inspector: a static server of this interpreter.
    (tmp_path / "index.html").write_text("<h1>Baton</h1>")
    argv = [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1"]
    body = wheel_smoke.serve_page(argv, "/index.html", os.environ, tmp_path)
    assert body == b"<h1>Baton</h1>"


def test_serve_page_fails_when_no_server_answers(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    argv = [sys.executable, "-c", "print('not a server on {port}')"]
    with pytest.raises(wheel_smoke.CheckFailed, match=r"no page at http://127\.0\.0\.1:") as failed:
        wheel_smoke.serve_page(argv, "/", os.environ, tmp_path)
    assert "not a server on" in str(failed.value)


def test_serve_page_fails_on_an_empty_page(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "empty.html").write_text("")
    argv = [sys.executable, "-m", "http.server", "{port}", "--bind", "127.0.0.1"]
    with pytest.raises(wheel_smoke.CheckFailed, match="is empty"):
        wheel_smoke.serve_page(argv, "/empty.html", os.environ, tmp_path)


def dev_install(wheel_smoke: ModuleType, tmp_path: Path, **changes: Any) -> Any:
    """This interpreter's own (editable) install, as the smoke test would see an install."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    fields: dict[str, Any] = {
        "installer": "dev",
        "bin_dir": DEV_BIN,
        "python": Path(sys.executable),
        "prefix": ROOT,
        "env": wheel_smoke.baton_env(dict(os.environ), DEV_BIN, home),
        "work": work,
        "version_line": version_line(),
    }
    fields.update(changes)
    return wheel_smoke.Installed(**fields)


needs_console_script = pytest.mark.skipif(
    not (DEV_BIN / "baton").exists(), reason="no baton console script beside this interpreter"
)


@needs_console_script
def test_the_checks_pass_on_a_working_install(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    inst = dev_install(wheel_smoke, tmp_path)
    wheel_smoke.check_version(inst)
    wheel_smoke.check_doctor(inst)
    wheel_smoke.check_turn(inst)
    assert (inst.work / "session" / "hello.txt").read_text() == "Hello, Baton!\n"


@needs_console_script
def test_the_inspector_checks_pass_on_a_working_install(
    wheel_smoke: ModuleType, tmp_path: Path
) -> None:
    inst = dev_install(wheel_smoke, tmp_path)
    wheel_smoke.check_inspector_files(inst)
    wheel_smoke.check_inspector_page(inst)
    assert (inst.work / "inspect-data" / "serve.lock").exists()


@needs_console_script
def test_serve_page_sends_its_headers(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    # Without the bearer token the service answers 401 (the login page): no page.
    inst = dev_install(wheel_smoke, tmp_path)
    env = {**inst.env, "BATON_SERVE_TOKEN": wheel_smoke.INSPECT_TOKEN}
    argv = [*inst.baton, "inspect", "--no-browser", "--port", "{port}", "--data-dir", "d"]
    with pytest.raises(wheel_smoke.CheckFailed, match="401"):
        wheel_smoke.serve_page(argv, "/", env, inst.work, final_refusal=True)  # 401 ends it


def test_the_import_check_fails_for_baton_from_the_checkout(
    wheel_smoke: ModuleType, tmp_path: Path
) -> None:
    # The development install imports Baton from src/: as an install under test, that is
    # exactly the leak the check exists for.
    inst = dev_install(wheel_smoke, tmp_path, prefix=tmp_path / "elsewhere")
    with pytest.raises(wheel_smoke.CheckFailed, match=r"baton was imported from .*src/baton"):
        wheel_smoke.check_import_location(inst)


@needs_console_script
def test_the_version_check_fails_on_another_version(
    wheel_smoke: ModuleType, tmp_path: Path
) -> None:
    inst = dev_install(wheel_smoke, tmp_path, version_line="baton 9.9.9 (distribution baton-acp)")
    with pytest.raises(wheel_smoke.CheckFailed, match="--version printed"):
        wheel_smoke.check_version(inst)


def test_find_wheel_wants_one(wheel_smoke: ModuleType, tmp_path: Path) -> None:
    with pytest.raises(wheel_smoke.CheckFailed, match="holds 0 wheels"):
        wheel_smoke.find_wheel(tmp_path)
    (tmp_path / "a-1-py3-none-any.whl").write_bytes(b"")
    assert wheel_smoke.find_wheel(tmp_path) == (tmp_path / "a-1-py3-none-any.whl").resolve()


def test_every_installer_has_a_readme_line(wheel_smoke: ModuleType) -> None:
    # The README's install lines are the ones the smoke test exercises.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = {
        "pip": "pip install baton-acp",
        "pipx": "pipx install baton-acp",
        "uv": "uv tool install baton-acp",
    }
    assert set(wheel_smoke.INSTALLERS) == set(lines)
    for line in lines.values():
        assert line in readme
