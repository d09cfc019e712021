"""The run's system prompt (``--system-prompt`` / ``--append-system-prompt``, the library's
``RunRequest.system_prompt`` / ``append_system_prompt``).

**Unstable ACP.** At most one of the two may be given: ``system_prompt`` replaces the agent's
default instructions (``override`` mode), ``append_system_prompt`` adds to them (``append``);
both at once is refused (INVALID_ARGUMENT) because one ``systemPrompt`` carries one mode. The
text is redacted with the lane's rules before it is stored, and sent as given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from baton.errors import InvalidArgument
from baton.wire.system_prompt import APPEND, OVERRIDE, SystemPrompt


def requested_system_prompt(
    system_prompt: str | None, append_system_prompt: str | None
) -> SystemPrompt | None:
    """The :class:`SystemPrompt` a run asks for, or None. Raises
    :class:`~baton.errors.InvalidArgument` for both at once, an empty or an oversized text."""
    if system_prompt is not None and append_system_prompt is not None:
        raise InvalidArgument(
            "--system-prompt (override) and --append-system-prompt (append) exclude each other: "
            "a session takes one system prompt in one mode"
        )
    if system_prompt is not None:
        return SystemPrompt(OVERRIDE, system_prompt)
    if append_system_prompt is not None:
        return SystemPrompt(APPEND, append_system_prompt)
    return None


def session_setup_record(
    system_prompt: SystemPrompt | None,
    additional_directories: Sequence[str],
    redact: Callable[[str], str],
) -> dict[str, Any]:
    """What the session record keeps of its setup: ``systemPrompt`` (mode and the redacted
    text) and ``additionalDirectories``, each only when asked for (empty: nothing to keep)."""
    record: dict[str, Any] = {}
    if system_prompt is not None:
        record["systemPrompt"] = {"mode": system_prompt.mode, "text": redact(system_prompt.text)}
    if additional_directories:
        record["additionalDirectories"] = list(additional_directories)
    return record
