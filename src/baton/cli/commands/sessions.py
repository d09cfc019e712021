"""`baton sessions [--status S] [--agent A] [--json]`: named sessions, most recently used
first (the verb lives beside its siblings in :mod:`baton.cli.commands.session`)."""

from __future__ import annotations

from baton.cli.commands.session import register_list as register

__all__ = ["register"]
