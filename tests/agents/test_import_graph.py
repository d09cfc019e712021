"""The scripted agent's modules import each other without a cycle (options <- profiles <- flags),
read from the source at every depth, function-local imports included (an import only for the
type checker, under ``if TYPE_CHECKING:``, never runs and is left out)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Final

PACKAGE: Final = Path(__file__).resolve().parents[2] / "src" / "baton" / "agents" / "scripted"
PREFIX: Final = "baton.agents.scripted."


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node but those under ``if TYPE_CHECKING:``."""
    found: list[ast.AST] = []
    pending = [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            pending.extend(node.orelse)
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.glob("*.py")):
        name = path.stem
        edges: set[str] = set()
        for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                target = node.module
                if target.startswith(PREFIX):
                    edges.add(target.removeprefix(PREFIX).split(".")[0])
        graph[name] = edges - {name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_scripted_agent_has_no_import_cycle() -> None:
    graph = _graph()
    graph.pop("__init__", None)  # the package's re-exports import everything, by design
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])
    assert "profiles" not in graph["options"] and "flags" not in graph["options"]


def test_the_cycle_finder_finds_one() -> None:
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
