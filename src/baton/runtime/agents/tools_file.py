"""Loading the trusted tool declarations file (``--tools FILE`` or ``BATON_ACP_TOOLS``).

The file is read with the 64 KiB bound enforced while reading (one byte past the bound is read
to detect an oversized file; a FIFO or device is refused before any read), parsed by
:func:`baton.wire.mcp.parse_tool_declarations`, and each command is checked to be an existing
executable regular file. Errors are :class:`~baton.errors.ToolDeclarationError` with a stable
``sub_code``; they say which source named the file (the flag or the variable), never its path,
contents or values.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from baton.errors import ToolDeclarationError
from baton.wire.mcp import (
    MAX_TOOLS_FILE_BYTES,
    TOOLS_COMMAND_NOT_EXECUTABLE,
    TOOLS_FILE_TOO_LARGE,
    TOOLS_FILE_UNREADABLE,
    ToolDeclarations,
    parse_tool_declarations,
)

#: The environment variable naming the declarations file when ``--tools`` is not given.
TOOLS_ENV_VAR: Final = "BATON_ACP_TOOLS"


def read_bounded(path: Path, source: str) -> bytes:
    """Read at most :data:`MAX_TOOLS_FILE_BYTES` bytes of ``path``; more is an error.

    The file is opened non-blocking, so a FIFO without a writer cannot hang Baton, and anything
    that is not a regular file is refused before a byte is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise _unreadable(source, type(exc).__name__) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unreadable(source, "not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_TOOLS_FILE_BYTES:
            chunk = os.read(fd, MAX_TOOLS_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise _unreadable(source, type(exc).__name__) from None
    finally:
        os.close(fd)
    if size > MAX_TOOLS_FILE_BYTES:
        raise ToolDeclarationError(
            TOOLS_FILE_TOO_LARGE,
            f"the tools file named by {source} is larger than {MAX_TOOLS_FILE_BYTES} bytes",
        )
    return b"".join(chunks)


def _unreadable(source: str, why: str) -> ToolDeclarationError:
    return ToolDeclarationError(
        TOOLS_FILE_UNREADABLE, f"the tools file named by {source} cannot be read ({why})"
    )


def check_executables(declarations: ToolDeclarations) -> None:
    """Refuse a declared command that is not an existing executable regular file."""
    for index, server in enumerate(declarations.servers):
        path = server.command
        try:
            is_file = stat.S_ISREG(os.stat(path).st_mode)
        except OSError:
            is_file = False
        if not is_file or not os.access(path, os.X_OK):
            raise ToolDeclarationError(
                TOOLS_COMMAND_NOT_EXECUTABLE,
                f"server #{index + 1} command is not an executable file",
            )


def load_tool_declarations(
    path: str | os.PathLike[str] | None,
    environ: Mapping[str, str],
    *,
    require_executables: bool = True,
) -> ToolDeclarations:
    """The declarations from ``path`` (the ``--tools`` flag), else from the file named by
    ``BATON_ACP_TOOLS`` in ``environ``, else none. An empty variable counts as unset.

    With ``require_executables`` (the default) every command must be an executable file now.
    """
    if path is not None:
        source, chosen = "--tools", Path(path)
    elif environ.get(TOOLS_ENV_VAR):
        source, chosen = TOOLS_ENV_VAR, Path(environ[TOOLS_ENV_VAR])
    else:
        return ToolDeclarations()
    declarations = parse_tool_declarations(read_bounded(chosen, source))
    if require_executables:
        check_executables(declarations)
    return declarations
