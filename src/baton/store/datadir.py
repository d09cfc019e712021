"""Where Baton keeps its durable state, and making sure it is Baton's alone.

Resolution order: the ``--data-dir`` flag, then the ``BATON_HOME`` environment variable, then
the platform's user data directory (``platformdirs.user_data_dir("baton")``, e.g.
``~/.local/share/baton`` on Linux). The directory is created ``0700``; an existing one must be
a real directory (not a symlink) owned by the current user and closed to other users, else
Baton refuses it with UNSAFE_PATH rather than loosen or tighten permissions behind the user's
back. Inside it: ``journals/`` (the protocol journal) and ``baton.sqlite3`` (the run store).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

import platformdirs

from baton.durable import files

#: The environment variable that overrides the default data directory.
DATA_DIR_ENV: Final = "BATON_HOME"
#: The application name platformdirs derives the default directory from.
APP_NAME: Final = "baton"
#: The run store's file name inside the data directory.
STORE_FILENAME: Final = "baton.sqlite3"


def resolve_data_dir(
    flag: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The data directory Baton should use, as an absolute path (nothing is created).

    An empty ``--data-dir`` or ``BATON_HOME`` counts as unset. ``~`` is expanded.
    """
    env = os.environ if environ is None else environ
    chosen: str | os.PathLike[str]
    if flag is not None and str(flag) != "":
        chosen = flag
    elif env.get(DATA_DIR_ENV):
        chosen = env[DATA_DIR_ENV]
    else:
        chosen = platformdirs.user_data_dir(APP_NAME, appauthor=False)
    return Path(chosen).expanduser().absolute()


def ensure_data_dir(path: Path) -> Path:
    """Create ``path`` 0700 if missing and check it is a private directory we own.

    Raises :class:`~baton.errors.UnsafePath` otherwise. Returns the absolute path.
    """
    return files.ensure_private_dir(path)


def data_dir(
    flag: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """:func:`resolve_data_dir` then :func:`ensure_data_dir`: the ready-to-use data directory."""
    return ensure_data_dir(resolve_data_dir(flag, environ))
