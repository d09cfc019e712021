"""Loading the declarations file: --tools over BATON_ACP_TOOLS, the read bound, executables."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from baton.errors import ToolDeclarationError
from baton.runtime.agents.tools_file import TOOLS_ENV_VAR, load_tool_declarations
from baton.wire.mcp import MAX_TOOLS_FILE_BYTES


@pytest.fixture
def tool(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "search-mcp"
    path.parent.mkdir()
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def _write(path: Path, command: Path | str, pad_to: int = 0) -> Path:
    body = json.dumps({"mcpServers": [{"name": "search", "command": str(command)}]}).encode()
    path.write_bytes(body + b" " * max(0, pad_to - len(body)))
    return path


def test_nothing_named_means_no_declarations() -> None:
    assert len(load_tool_declarations(None, {})) == 0
    assert len(load_tool_declarations(None, {TOOLS_ENV_VAR: ""})) == 0


def test_the_flag_wins_over_the_variable(tmp_path: Path, tool: Path) -> None:
    flag = _write(tmp_path / "flag.json", tool)
    env_file = tmp_path / "env.json"
    env_file.write_text('{"mcpServers": []}')
    declarations = load_tool_declarations(flag, {TOOLS_ENV_VAR: str(env_file)})
    assert [s.command for s in declarations] == [str(tool)]
    assert len(load_tool_declarations(None, {TOOLS_ENV_VAR: str(env_file)})) == 0
    via_env = load_tool_declarations(None, {TOOLS_ENV_VAR: str(flag)})
    assert [s.name for s in via_env] == ["search"]


@pytest.mark.parametrize(
    ("size", "ok"),
    [
        (MAX_TOOLS_FILE_BYTES - 1, True),
        (MAX_TOOLS_FILE_BYTES, True),
        (MAX_TOOLS_FILE_BYTES + 1, False),
    ],
)
def test_the_read_bound(tmp_path: Path, tool: Path, size: int, ok: bool) -> None:
    path = _write(tmp_path / "tools.json", tool, pad_to=size)
    assert path.stat().st_size == size
    if ok:
        assert len(load_tool_declarations(path, {})) == 1
    else:
        with pytest.raises(ToolDeclarationError) as caught:
            load_tool_declarations(path, {})
        assert caught.value.sub_code == "TOOLS_FILE_TOO_LARGE"


def _fails(path: Path | None, environ: dict[str, str], sub_code: str) -> ToolDeclarationError:
    with pytest.raises(ToolDeclarationError) as caught:
        load_tool_declarations(path, environ)
    assert caught.value.sub_code == sub_code
    return caught.value


def test_unreadable_sources(tmp_path: Path) -> None:
    missing = tmp_path / "secret-name-missing.json"
    error = _fails(missing, {}, "TOOLS_FILE_UNREADABLE")
    assert "secret-name-missing" not in str(error) and "--tools" in str(error)
    error = _fails(None, {TOOLS_ENV_VAR: str(missing)}, "TOOLS_FILE_UNREADABLE")
    assert TOOLS_ENV_VAR in str(error)
    _fails(tmp_path, {}, "TOOLS_FILE_UNREADABLE")  # a directory
    _fails(Path("/dev/zero"), {}, "TOOLS_FILE_UNREADABLE")  # a device: never read at all


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_without_a_writer_is_refused_without_hanging(tmp_path: Path) -> None:
    fifo = tmp_path / "tools.fifo"
    os.mkfifo(fifo)
    # No writer: a blocking open would hang here; Baton opens non-blocking and refuses it.
    _fails(fifo, {}, "TOOLS_FILE_UNREADABLE")


def test_commands_must_be_executable_files(tmp_path: Path, tool: Path) -> None:
    plain = tmp_path / "plain"
    plain.write_text("x")
    plain.chmod(0o644)
    for command in (plain, tmp_path / "missing", tmp_path):
        path = _write(tmp_path / "tools.json", command)
        error = _fails(path, {}, "TOOLS_COMMAND_NOT_EXECUTABLE")
        assert str(command) not in str(error)
        assert len(load_tool_declarations(path, {}, require_executables=False)) == 1


def test_parse_errors_pass_through(tmp_path: Path) -> None:
    path = tmp_path / "tools.json"
    path.write_text('{"mcpServers": [{"name": "baton", "command": "/bin/true"}]}')
    _fails(path, {}, "TOOLS_RESERVED_NAME")
