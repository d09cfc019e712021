"""The generated ACP types (baton/wire/acp_types.py): what the pinned schema generates, what
mypy checks field names against, and nothing Baton imports at run time."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import get_type_hints

import pytest
from mypy import api as mypy_api

ROOT = Path(__file__).parents[2]
GENERATED = ROOT / "src" / "baton" / "wire" / "acp_types.py"


@pytest.fixture(scope="module")
def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "acp_types_script", ROOT / "scripts" / "acp_types.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_module_is_what_the_pinned_schema_generates(generator: ModuleType) -> None:
    assert generator.same_module(generator.generate(), GENERATED.read_text())
    assert generator.main(["--check", str(GENERATED)]) == 0


def test_a_stale_module_is_caught(generator: ModuleType, tmp_path: Path) -> None:
    stale = tmp_path / "acp_types.py"
    stale.write_text(GENERATED.read_text().replace("    clientInfo:", "    clientInformation:"))
    assert generator.main(["--check", str(stale)]) == 1


def test_the_types_have_the_schema_fields() -> None:
    from baton.wire import acp_types

    schema = json.loads(generator_schema().read_text())["$defs"]
    for name in ("InitializeRequest", "RequestPermissionRequest", "PromptRequest", "ToolCall"):
        hints = get_type_hints(getattr(acp_types, name))
        assert set(hints) == set(schema[name]["properties"]), name
    update = schema["SessionUpdate"]["oneOf"]
    kinds = {v["properties"]["sessionUpdate"]["const"] for v in update}
    assert "agent_message_chunk" in kinds
    assert acp_types.SessionUpdateAgentMessageChunk.__required_keys__ >= {"sessionUpdate"}


def generator_schema() -> Path:
    return ROOT / "tests" / "fixtures" / "schema" / "sdk-2.4.0" / "schema.json"


def test_mypy_refuses_a_misspelled_field(tmp_path: Path) -> None:
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from baton.wire.acp_types import InitializeRequest, RequestPermissionRequest\n"
        'ok: InitializeRequest = {"protocolVersion": 1, "clientInfo": {"name": "b", "version": "1"}}\n'
        'bad: InitializeRequest = {"protocolVersion": 1, "clientInfos": {}}\n'
        "def read(r: RequestPermissionRequest) -> object:\n"
        '    return r["toolCall"] if "toolCall" in r else None\n'
        "def misread(r: RequestPermissionRequest) -> object:\n"
        '    return r["toolcall"] if "toolcall" in r else None\n'
    )
    out, _err, status = mypy_api.run(
        [
            "--strict",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--follow-imports",
            "silent",
            str(snippet),
        ]
    )
    assert status == 1, out
    assert '"clientInfos"' in out and '"toolcall"' in out, out
    assert "snippet.py:2" not in out and "snippet.py:5" not in out, out  # well spelled: no error


def test_nothing_imports_the_types_at_run_time() -> None:
    code = (
        "import sys, baton, baton.connection.client, baton.wire.codec, baton.runtime.runtime; "
        "print('baton.wire.acp_types' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
