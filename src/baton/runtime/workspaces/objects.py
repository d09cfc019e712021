"""Git objects written without git reading a worktree file: a blob's id computed here from
bytes read with ``O_NOFOLLOW`` (a symlink is never followed), and the loose object written
the way git stores one (``objects/xx/rest``, zlib, written to a temporary file and renamed).

Git itself is asked only which ids it already has (``cat-file --batch-check``), so a packed
blob is not written again. Blocking (file I/O): the async callers run it in a thread.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from collections.abc import Iterable, Mapping

from baton.runtime.workspaces.git import run_git


def blob_id(content: bytes, object_format: str) -> str:
    """The id git gives a blob of ``content`` (``sha1`` or ``sha256`` repositories)."""
    digest = hashlib.new(object_format)
    digest.update(b"blob %d\0" % len(content))
    digest.update(content)
    return digest.hexdigest()


def missing_objects(top: str, ids: Iterable[str], environ: Mapping[str, str]) -> set[str]:
    """The ids among ``ids`` the repository does not hold (loose or packed)."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return set()
    done = run_git(
        top,
        ["cat-file", "--batch-check=%(objectname)"],
        environ=environ,
        stdin=("\n".join(wanted) + "\n").encode(),
    )
    missing: set[str] = set()
    for line in done.stdout.decode("ascii", "replace").splitlines():
        if line.endswith(" missing"):
            missing.add(line.split(" ", 1)[0])
    return missing


def write_blob(objects_dir: str, object_id: str, content: bytes) -> None:
    """Write ``content`` as the loose object ``object_id`` (idempotent: an existing one is
    left as it is)."""
    folder = os.path.join(objects_dir, object_id[:2])
    path = os.path.join(folder, object_id[2:])
    if os.path.lexists(path):
        return
    os.makedirs(folder, exist_ok=True)
    data = zlib.compress(b"blob %d\0" % len(content) + content, 1)
    fd, temporary = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, 0o444)
        os.replace(temporary, path)
    except BaseException:
        if os.path.lexists(temporary):
            os.unlink(temporary)
        raise
