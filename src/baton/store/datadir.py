"""Where Baton keeps its durable state, and making sure it is Baton's alone.

Resolution order: the ``--data-dir`` flag, then the ``BATON_HOME`` environment variable, then
the platform's user data directory (``platformdirs.user_data_dir("baton")``, e.g.
``~/.local/share/baton`` on Linux). Inside it: ``journals/`` (the protocol journal) and
``baton.sqlite3`` (the run store).

Writing verbs (:func:`prepare_data_dir`) create a missing directory ``0700``, and tighten an
existing *empty* directory of this user to ``0700`` (what ``mkdir`` leaves is usually 0755),
returning a notice saying so, as PostgreSQL's ``initdb`` does. They refuse with UNSAFE_PATH
what they cannot safely fix: a symlink, a non-directory, another user's directory, or one that
holds data and is open to other users (its mode is never changed behind the user's back). A
directory this user cannot write is STORAGE_READ_ONLY, a full disk STORAGE_FULL.

Read-only verbs (:func:`existing_data_dir`) create and change nothing: a missing directory is
DATA_DIR_NOT_FOUND.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
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


@dataclass(frozen=True, slots=True)
class PreparedDataDir:
    """A data directory ready for writing, and what preparing it changed."""

    path: Path
    #: One line for the user when the directory was created or tightened, else None.
    notice: str | None


def prepare_data_dir(path: Path) -> PreparedDataDir:
    """Make ``path`` a private data directory this user can write (see the module docstring).

    Raises :class:`~baton.errors.UnsafePath`, :class:`~baton.errors.StorageReadOnly` or
    :class:`~baton.errors.StorageFull`; never a raw ``OSError``.
    """
    ready, notice = files.prepare_private_dir(path)
    return PreparedDataDir(ready, notice)


def ensure_data_dir(path: Path) -> Path:
    """:func:`prepare_data_dir` without the notice: the absolute, ready path."""
    return prepare_data_dir(path).path


def existing_data_dir(path: Path) -> Path:
    """``path`` as an absolute path if it is an existing private data directory of this user,
    creating and changing nothing (read-only verbs). Raises
    :class:`~baton.errors.DataDirNotFound` when it is missing, :class:`~baton.errors.UnsafePath`
    when it is not private or not ours."""
    return files.existing_private_dir(path)


def data_dir(
    flag: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """:func:`resolve_data_dir` then :func:`ensure_data_dir`: the ready-to-use data directory."""
    return ensure_data_dir(resolve_data_dir(flag, environ))
