"""Baton: drive coding agents over the Agent Client Protocol, safely, headlessly and durably."""

from baton._version import __version__

__all__ = ["__version__"]
