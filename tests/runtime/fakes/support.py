"""Helpers the runtime tests share: fake executables and a parent environment around them.

Tests load this file by path (pytest runs in importlib mode, so ``tests`` is no package).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

FAKES = Path(__file__).resolve().parent
FAKE_AGENT = FAKES / "fake_agent.py"

#: The executable name each fake profile is found under.
EXECUTABLE_NAMES = {
    "claude": "claude-agent-acp",
    "codex": "codex-acp",
    "cursor": "cursor-agent",
    "gemini": "gemini",
    "grok": "grok",
    "opencode": "opencode",
    "custom": "my-agent",
}


def fake_secret() -> str:
    """The credential-shaped string the fake prints in its ``secret`` modes."""
    spec = importlib.util.spec_from_file_location("baton_fake_agent", FAKE_AGENT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return str(module.SECRET)


def make_fake(bin_dir: Path, profile: str, modes: str = "good", *, name: str | None = None) -> Path:
    """Write an executable wrapper ``bin_dir/<name>`` that runs the fake as ``profile``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / (name or EXECUTABLE_NAMES[profile])
    path.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -I "{FAKE_AGENT}" {profile} "{modes}" "$@"\n',
        encoding="utf-8",
    )
    path.chmod(0o755)
    return path


def parent_env(bin_dir: Path, home: Path, **extra: str) -> dict[str, str]:
    """A parent environment whose PATH is only ``bin_dir`` (the wrappers name /bin/sh and the
    interpreter by absolute path), so nothing installed on the machine is ever found."""
    env = {
        "PATH": str(bin_dir),
        "HOME": str(home),
        "USER": "tester",
        "LANG": "C.UTF-8",
    }
    env.update(extra)
    return env


def load(name: str, path: Path) -> ModuleType:
    """Import a file by path under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
