"""The layer table of docs/architecture.md, enforced: every import of every module points down.

Each module of ``src/baton`` belongs to one *unit* (a package, or a room of the runtime). Units
have ranks; a module may import a unit of a lower rank, its own unit, and nothing else, except
the few sideways edges listed in :data:`ALLOWED_SIDEWAYS` with their reason. A module in no
unit fails the test too, so a new package must be placed in the table before it can land.

Imports are read from the source with :mod:`ast`, at every depth (a function-local import
counts as much as a top-level one), so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Final

import pytest

SRC: Final = Path(__file__).resolve().parents[1] / "src"

#: unit -> rank. Lower ranks are lower layers; equal ranks are siblings (sideways).
RANKS: Final[dict[str, float]] = {
    # Foundation: one error hierarchy and the version string, importable by everyone.
    "baton.errors": 0,
    "baton._version": 0,
    "baton._lazy": 0,  # lazy re-exports for package __init__ modules (stdlib only)
    # Layer 1, pure: no subprocess, no disk, no clock of its own.
    "baton.wire": 1,
    "baton.redaction": 1,
    # Layer 2: the asyncio connection over a reader and a writer.
    "baton.connection": 2,
    # Layer 2.5: what durable records share (file safety, JournalRef, timestamps), below both
    # the journal and the store so neither imports the other.
    "baton.durable": 2.5,
    # Layer 3: durability.
    "baton.journal": 3,
    "baton.store": 3,
    # Layer 4: the runtime, in rooms ordered from the bottom up.
    "baton.runtime.permissions": 4.0,
    "baton.runtime.processes": 4.1,
    "baton.runtime.agents": 4.2,
    "baton.runtime.lanes": 4.3,
    # Workspaces: hardened git, worktrees, snapshots and the comparison; a turn compares its
    # workspace, so the room sits below the turn room and needs only the store below it.
    "baton.runtime.workspaces": 4.35,
    "baton.runtime.turns": 4.4,
    # Provider-session setup of a run: uses the turn room's settings, controls and context.
    "baton.runtime.sessions": 4.5,
    # The one seam to OpenTelemetry: a run's spans from its redacted events.
    "baton.runtime.tracing": 4.8,
    "baton.runtime": 4.9,  # the Runtime front (runtime/runtime.py) over every room
    # Conversations (named persistent sessions) use the Runtime's public API, so they sit on
    # top of the front, below the surfaces that call them.
    "baton.runtime.conversations": 4.95,
    # Many hosts: the queue (submit, workers, settling lost workers) over the Runtime.
    "baton.fleet": 4.95,
    # Batches (issue 32): many runs of the Runtime's public API, each cell through
    # Runtime.start, recorded in the store; the surfaces run and show them.
    "baton.batches": 4.96,
    # The JSON documents both surfaces show (runs, sessions, recovery, readiness, workers, the
    # schema version), below them so the CLI and the service stay siblings.
    "baton.views": 4.97,
    # The inspector's page files and the headers they are served with: package data the
    # service serves (the page itself speaks to the API over HTTP only).
    "baton.inspector": 4.97,
    # The service's runtime file (serve.json, serve.lock): the service owns its format and
    # writes it; the CLI reads it to find a running service. Below both, Starlette-free.
    "baton.service.runtime_file": 4.97,
    # Layer 5: surfaces, siblings that never import each other (websockets' asyncio/ and sync/
    # layers): what they share lives below them.
    "baton.cli": 5,
    "baton.agents": 5,
    "baton": 5,  # the package root re-exports the library surface
    # The service: one Runtime under an authenticated local HTTP API, a sibling of the CLI.
    # The API and `baton show/runs --json` speak one JSON contract through baton.views; the
    # CLI reaches a running service over HTTP only.
    "baton.service": 5,
    "baton.cli.commands.serve": 5.6,  # the `baton serve` verb: above the service it starts
    "baton.cli.commands.inspect": 5.7,  # `baton inspect`: finds a service or starts one (serve)
    # Above the surfaces: `python -m baton`, the console script's entry point.
    "baton.__main__": 6,
}

#: Sideways edges (same rank) that are part of the design, each with its reason.
ALLOWED_SIDEWAYS: Final[dict[tuple[str, str], str]] = {
    ("baton.cli", "baton.agents"): "`baton agent scripted` runs the bundled agent in-process",
}

#: Units that may import less than their rank allows: the scripted agent must run wherever Baton
#: is installed and stay independent of the runtime it tests, so it sees only layers 0-1. The
#: inspector's asset table is files and headers: it needs nothing of Baton's but the errors.
MAX_IMPORT_RANK: Final[dict[str, float]] = {"baton.agents": 1, "baton.inspector": 0}

#: Standard-library modules layer 1 may not import: it owns no I/O, processes or clock.
IMPURE_STDLIB: Final = frozenset(
    {"asyncio", "subprocess", "socket", "sqlite3", "threading", "selectors", "signal", "time"}
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str | None:
    """The longest unit in :data:`RANKS` that is ``module`` or one of its parents."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in RANKS:
            return candidate
    return None


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every absolute import in ``path`` as (line, module), relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path)
    if path.name != "__init__.py":
        package = package.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.append((node.lineno, target))
            # `from baton.runtime import lanes` imports the room, not just the package.
            for alias in node.names:
                found.append((node.lineno, f"{target}.{alias.name}"))
    return found


def sources() -> list[Path]:
    return sorted(SRC.joinpath("baton").rglob("*.py"))


def violations_of(path: Path) -> list[str]:
    me = module_name(path)
    my_unit = unit_of(me)
    if my_unit is None:
        return [f"{me}: in no unit of the layer table (tests/test_layers.py RANKS)"]
    found: list[str] = []
    seen: set[tuple[int, str]] = set()
    for line, target in imports_of(path):
        top = target.split(".")[0]
        if top != "baton":
            if RANKS[my_unit] == 1 and top in IMPURE_STDLIB:
                found.append(f"{me}:{line}: layer 1 imports {target}")
            continue
        target_unit = unit_of(target)
        if target_unit is None or target_unit == my_unit:
            continue
        if target_unit == "baton" and target != "baton":
            continue  # `from baton import x` where x is a submodule resolved via its own entry
        mine, theirs = RANKS[my_unit], RANKS[target_unit]
        if theirs < mine:
            if theirs > MAX_IMPORT_RANK.get(my_unit, mine):
                found.append(f"{me}:{line}: import of {target} above what {my_unit} may see")
            continue
        if theirs == mine and (my_unit, target_unit) in ALLOWED_SIDEWAYS:
            continue
        if (line, target_unit) in seen:
            continue  # `from x import a, b` is one edge per line and unit
        seen.add((line, target_unit))
        kind = "sideways" if theirs == mine else "upward"
        found.append(f"{me}:{line}: {kind} import of {target} ({my_unit} -> {target_unit})")
    return found


def test_every_module_imports_only_downward() -> None:
    problems = [problem for path in sources() for problem in violations_of(path)]
    assert not problems, "\n".join(problems)


def test_the_table_covers_every_package() -> None:
    packages = {module_name(path.parent) for path in SRC.joinpath("baton").rglob("__init__.py")}
    assert all(unit_of(package) is not None for package in packages)


def test_sideways_allowances_are_still_used() -> None:
    """An allowance nobody needs any more is removed, so the table stays true."""
    used: set[tuple[str, str]] = set()
    for path in sources():
        my_unit = unit_of(module_name(path))
        for _line, target in imports_of(path):
            target_unit = unit_of(target)
            if my_unit and target_unit and target_unit != my_unit:
                used.add((my_unit, target_unit))
    stale = sorted(set(ALLOWED_SIDEWAYS) - used)
    assert not stale, f"stale sideways allowances: {stale}"


#: The two surfaces a user drives: siblings, neither imports the other (the verbs that start or
#: find a service, `baton serve` and `baton inspect`, are units of their own above both).
SIBLING_SURFACES: Final = ("baton.cli", "baton.service")


def test_the_cli_and_the_service_are_siblings_over_the_views() -> None:
    """Same rank, no allowance between them, the shared views below both, and no import of one
    from the other anywhere (a function-local import counts)."""
    cli, service = SIBLING_SURFACES
    assert RANKS[cli] == RANKS[service]
    assert (cli, service) not in ALLOWED_SIDEWAYS and (service, cli) not in ALLOWED_SIDEWAYS
    assert RANKS["baton.views"] < RANKS[cli]
    assert RANKS["baton.service.runtime_file"] < RANKS[cli]
    crossing = [
        f"{module_name(path)}:{line} imports {target}"
        for path in sources()
        if unit_of(module_name(path)) in SIBLING_SURFACES
        for line, target in imports_of(path)
        if unit_of(target) in SIBLING_SURFACES and unit_of(target) != unit_of(module_name(path))
    ]
    assert not crossing, "\n".join(crossing)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from baton.runtime.runtime import Runtime\n", "upward"),
        ("from baton.store import RunStore\n", "upward"),
        ("import subprocess\n", "layer 1 imports"),
        ("from baton.errors import BatonError\n", None),
    ],
)
def test_the_checker_catches_what_it_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str, expected: str | None
) -> None:
    """The checker itself, on a synthetic layer-1 module: it can fail."""
    fake_src = tmp_path / "src"
    module = fake_src / "baton" / "wire" / "probe.py"
    module.parent.mkdir(parents=True)
    module.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake_src)
    problems = violations_of(module)
    if expected is None:
        assert problems == []
    else:
        assert len(problems) == 1 and expected in problems[0]


@pytest.mark.parametrize(
    ("unit", "source"),
    [
        ("service", "from baton.cli.store_access import open_store\n"),
        ("cli", "from baton.service.routes_runs import store_of\n"),
    ],
)
def test_the_checker_refuses_a_surface_importing_its_sibling(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unit: str, source: str
) -> None:
    """A service module importing the CLI (or the reverse) is a sideways import."""
    fake_src = tmp_path / "src"
    module = fake_src / "baton" / unit / "probe.py"
    module.parent.mkdir(parents=True)
    module.write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "SRC", fake_src)
    [problem] = violations_of(module)
    assert "sideways" in problem
