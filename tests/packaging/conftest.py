"""The packaging scripts (scripts/dist_check.py, scripts/wheel_smoke.py) loaded as modules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (registered, so its dataclasses resolve)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def dist_check() -> ModuleType:
    return load_script("dist_check")


@pytest.fixture(scope="session")
def wheel_smoke() -> ModuleType:
    return load_script("wheel_smoke")
