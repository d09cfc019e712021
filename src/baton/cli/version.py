"""``baton --version``: which Baton this is, and whether another distribution claims ``baton``.

The import package ``baton`` is also what the unrelated PyPI distribution named ``baton``
installs. Two distributions writing one import package overwrite each other's files, so the
version output names Baton's distribution and warns (on stderr) when another one is installed
in the same environment.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, NoReturn

from baton._version import DISTRIBUTION, __version__

#: The import package whose owners are checked.
IMPORT_PACKAGE: Final = "baton"


def version_line() -> str:
    """The one line ``baton --version`` prints on stdout."""
    return f"baton {__version__} (distribution {DISTRIBUTION})"


def _canonical(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def other_claimants(owners: Mapping[str, Sequence[str]]) -> list[str]:
    """The distributions other than Baton's that install the ``baton`` import package.

    ``owners`` maps top-level import names to distribution names, as
    :func:`importlib.metadata.packages_distributions` returns them; the result is sorted and
    free of duplicates.
    """
    ours = _canonical(DISTRIBUTION)
    return sorted({name for name in owners.get(IMPORT_PACKAGE, ()) if _canonical(name) != ours})


def clash_warning(others: Sequence[str]) -> str:
    """The warning printed when ``others`` also install the ``baton`` import package."""
    names = ", ".join(others)
    return (
        f"baton: warning: the import package 'baton' is also installed by {names} (not Baton); "
        f"their files overwrite each other. Uninstall it (pip uninstall {others[0]}) or install "
        f"Baton on its own: pipx install {DISTRIBUTION}, or uv tool install {DISTRIBUTION}."
    )


class VersionAction(argparse.Action):
    """``--version``: print :func:`version_line`, warn about a clash, exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show Baton's version and distribution, then exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> NoReturn:
        print(version_line())
        try:
            import importlib.metadata  # only here: reading every distribution costs 0.3 s

            owners = importlib.metadata.packages_distributions()
        except (OSError, ValueError):  # unreadable metadata of some distribution: no warning
            owners = {}
        others = other_claimants(owners)
        if others:
            print(clash_warning(others), file=sys.stderr)
        parser.exit()
