"""Start-up that costs what the verb uses (issue 34): the modules a verb's process imports
before it runs, counted (not timed: the machine is loaded), against a bound per verb, and
modules a plain one-shot run must not load at all (docs/performance.md).

The count is of Baton's own modules (the standard library's count moves with the Python
version); the stdlib modules that matter are named. Raise a bound only with a reason in the
commit: each one is what the verb imported when it was set, plus a little room."""

from __future__ import annotations

import subprocess
import sys
from typing import Final

import orjson
import pytest

#: verb -> most Baton modules its process may have imported once its parser is built (what
#: `baton VERB ...` imports before the verb's handler runs).
#: Raised once, when main's views room (baton/views/: the row and record documents), the
#: service's runtime file module (finding a running service) and the native-mode guard landed:
#: modules these verbs use.
# Raised when the run handle, steering and workspaces landed (issues 28, 29, 31: run 162,
# runs 72, show 73 before): `runs` and `show` now import the workspace comparison's modules
# for the changes they show; importing those only when a run has a workspace is open work.
# `run` +4 on main's 186 when runtime.py (1,062 lines) was split by idea (issue 28): the same
# code in four more files (drive, lane_pool, result, workspace_setup; the kept sessions load on
# first use).
BATON_MODULE_BOUNDS: Final[dict[str, int]] = {
    "run": 190,
    "runs": 84,
    "show": 86,
    "journal": 68,
}

#: Modules a one-shot `baton run` (no --session, no attachments, no service, no config file)
#: must not import before a request asks for them: the command rules of the permission engine
#: (loaded with the first command a permission request names), the conversations service,
#: the service client's HTTP stack, distribution metadata (`--version` only), TOML, diffs.
NOT_IN_A_PLAIN_RUN: Final = (
    "baton.runtime.permissions.reserved_commands",
    "baton.runtime.permissions.command_rules",
    "baton.runtime.permissions.word_rules",
    "baton.runtime.permissions.shell_reading",
    "baton.runtime.conversations.service",
    "http.client",
    "importlib.metadata",
    "tomllib",
    "difflib",
    "mimetypes",
)

_PROBE: Final = (
    "import sys, orjson; from baton.cli.main import build_parser; build_parser({verb!r}); "
    "sys.stdout.buffer.write(orjson.dumps(sorted(sys.modules)))"
)


def _modules(verb: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(verb=verb)], capture_output=True, check=True
    )
    modules: list[str] = orjson.loads(done.stdout)
    return modules


@pytest.mark.parametrize("verb", sorted(BATON_MODULE_BOUNDS))
def test_a_verb_imports_at_most_its_bound(verb: str) -> None:
    ours = [m for m in _modules(verb) if m == "baton" or m.startswith("baton.")]
    assert len(ours) <= BATON_MODULE_BOUNDS[verb], (len(ours), ours)


def test_a_plain_run_leaves_what_it_does_not_use_unimported() -> None:
    loaded = set(_modules("run"))
    assert sorted(loaded & set(NOT_IN_A_PLAIN_RUN)) == []


def test_the_lazy_names_still_resolve() -> None:
    from baton.journal import Journal, ServerJournal
    from baton.runtime.conversations import Conversations, TurnQueue
    from baton.runtime.permissions import RESERVED_RULES, find_reserved

    assert Journal.__name__ == "Journal" and ServerJournal.__name__ == "ServerJournal"
    assert Conversations.__name__ == "Conversations" and TurnQueue.__name__ == "TurnQueue"
    assert RESERVED_RULES and callable(find_reserved)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        import baton.runtime.permissions as permissions

        _ = permissions.nothing  # type: ignore[attr-defined]
