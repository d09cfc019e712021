"""Suite-wide test setup: puts ``tests/`` on ``sys.path`` (the suite imports modules with
``--import-mode=importlib``, which adds nothing there) so any test can ``import acp_schemas``,
the pinned ACP schemas."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
