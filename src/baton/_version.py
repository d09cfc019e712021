"""Baton's package version, in one place (clientInfo and `baton --version` read it)."""

__version__ = "0.1.0"
