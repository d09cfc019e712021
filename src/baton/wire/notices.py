"""Session notices (stable ACP, SDK 2.4.0): the ``notice`` session update.

An agent sends a notice only to a client that advertised ``session.notices``. A notice is a live,
fire-and-forget message for the user: a ``severity`` hint (``info``, ``warning``, ``error``, or
a custom or future value, kept verbatim), a required non-empty plain-text ``title`` and an
optional ``description``. Notices are never session history: Baton shows and records them as
they arrive and never replays them.

Every text is agent text that is shown and stored, so each is bounded here; redaction happens
where it is projected (the runtime redacts events before they leave it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

#: The ``sessionUpdate`` discriminator of a notice.
NOTICE_UPDATE: Final = "notice"

#: Severities the schema names. Any other string is kept verbatim (a custom ``_x`` or a future
#: severity); the text output shows it as it is.
KNOWN_SEVERITIES: Final = frozenset({"info", "warning", "error"})

#: Characters kept of a severity (agent text; the known ones are at most 7).
MAX_SEVERITY_CHARS: Final = 32

#: Characters kept of a notice title: one line a terminal shows.
MAX_NOTICE_TITLE_CHARS: Final = 512

#: Characters kept of a notice description: guidance, not a document.
MAX_NOTICE_DESCRIPTION_CHARS: Final = 4096


@dataclass(frozen=True, slots=True)
class Notice:
    """One session notice as Baton keeps it (bounded, not yet redacted)."""

    severity: str
    title: str
    description: str | None = None

    @property
    def known_severity(self) -> bool:
        """Whether the severity is one the schema names."""
        return self.severity in KNOWN_SEVERITIES

    def to_json(self) -> dict[str, Any]:
        """``{"severity", "title", "description"}`` (description None when not sent)."""
        return {"severity": self.severity, "title": self.title, "description": self.description}


def parse_notice(update: Mapping[str, Any]) -> Notice | None:
    """Read a ``notice`` update. None when the required ``severity`` or non-empty ``title`` is
    missing or not a string: there is nothing to show. A description of the wrong type is
    dropped (the schema's default-on-error rule)."""
    severity, title = update.get("severity"), update.get("title")
    if not isinstance(severity, str) or not severity:
        return None
    if not isinstance(title, str) or not title:
        return None
    description = update.get("description")
    return Notice(
        severity[:MAX_SEVERITY_CHARS],
        title[:MAX_NOTICE_TITLE_CHARS],
        description[:MAX_NOTICE_DESCRIPTION_CHARS] if isinstance(description, str) else None,
    )
