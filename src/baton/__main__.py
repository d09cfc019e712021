"""``python -m baton``: the same as the ``baton`` console script."""

from __future__ import annotations

import sys

from baton.cli.main import entry

if __name__ == "__main__":
    sys.exit(entry())
