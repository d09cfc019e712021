"""The packages that load their names on first use (``baton``, ``baton.fleet``) still give mypy
the real types: each lazy export is imported under ``TYPE_CHECKING`` from the module it loads
from, so ``from baton.fleet import submit`` is typed, not ``Any``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _type_checking_imports(tree: ast.Module) -> dict[str, str]:
    """name -> module of every ``from M import name`` under ``if TYPE_CHECKING:``."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module:
                    for alias in inner.names:
                        found[alias.asname or alias.name] = inner.module
    return found


def _exports(tree: ast.Module) -> dict[str, str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "_EXPORTS":
            value = ast.literal_eval(node.value)
            assert isinstance(value, dict)
            return value
    raise AssertionError("no _EXPORTS table")


@pytest.mark.parametrize("package", ["baton/__init__.py", "baton/fleet/__init__.py"])
def test_every_lazy_export_is_typed_for_mypy(package: str) -> None:
    tree = ast.parse((SRC / package).read_text(encoding="utf-8"))
    typed = _type_checking_imports(tree)
    untyped = [
        f"{name} (from {module})"
        for name, module in _exports(tree).items()
        if typed.get(name) != module and typed.get(_alias_of(tree, name)) != module
    ]
    assert not untyped, untyped


def _alias_of(tree: ast.Module, name: str) -> str:
    """The public spelling of ``name`` when ``_ALIASES`` renames it (``Policy``)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "_ALIASES":
            aliases = ast.literal_eval(node.value)
            return next((short for short, long in aliases.items() if long == name), name)
    return name


def test_the_fleet_stays_lazy() -> None:
    import subprocess
    import sys

    code = "import sys, baton.fleet; print('procrastinate' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
