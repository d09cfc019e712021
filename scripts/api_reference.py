"""Write ``docs/reference.md``, the API reference page: one mkdocstrings block per public
name of the package (``baton.__all__``), at the module that defines it.

``make docs`` runs it before ``mkdocs build --strict``; ``tests/test_public_names.py`` checks
the committed page is what it writes, so a name added to ``__all__`` cannot miss its entry.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
PAGE: Final = ROOT / "docs" / "reference.md"

HEAD: Final = """# API reference

Generated from the docstrings by `make docs` (scripts/api_reference.py writes this page; the
names are `baton.__all__`, each shown where it is defined). Import them from `baton`:
`from baton import Runtime, RunRequest`. The guides beside this page say how the pieces fit.
"""


def render() -> str:
    """The page's Markdown."""
    sys.path.insert(0, str(ROOT / "src"))
    import baton

    exports: dict[str, str] = baton._EXPORTS  # where each name lives
    aliases: dict[str, str] = baton._ALIASES
    blocks = [HEAD]
    for name in sorted(n for n in baton.__all__ if not n.startswith("_")):
        real = aliases.get(name, name)
        module = exports[real]
        title = name if real == name else f"{name} (`{real}`)"
        blocks.append(f"## {title}\n\n::: {module}.{real}\n")
    return "\n".join(blocks)


def main() -> int:
    """Write the page."""
    PAGE.write_text(render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
