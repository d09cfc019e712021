"""The exception table of docs/errors.md, generated from the code: every ``BatonError``
subclass in every ``baton`` module, with its stable code, fault, defining class and the first
paragraph of its docstring.

    .venv/bin/python scripts/errors_doc.py          # print the table
    .venv/bin/python scripts/errors_doc.py --write  # replace the table in docs/errors.md

tests/test_errors_doc.py fails when the page and the code differ.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
from pathlib import Path
from typing import Final

import baton
from baton.errors import BatonError

DOC: Final = Path(__file__).resolve().parents[1] / "docs" / "errors.md"
#: The lines around the generated table in docs/errors.md.
TABLE_START: Final = "| code | fault | class | meaning |\n|---|---|---|---|\n"
TABLE_END: Final = "\n## Run outcome codes"


def error_classes() -> list[type[BatonError]]:
    """Every BatonError class (itself included), after importing every baton module."""
    for module in pkgutil.walk_packages(baton.__path__, "baton."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    found: list[type[BatonError]] = [BatonError]
    pending = [BatonError]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                pending.append(sub)
    return found


def meaning(cls: type[BaseException]) -> str:
    """The first paragraph of the class's own docstring, on one line."""
    text = cls.__doc__ or ""
    first = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(first.split()).replace("|", "\\|")


def render() -> str:
    """The table's rows, grouped by fault, then sorted by code and class."""
    rows = sorted(
        (cls.fault, cls.code, f"{cls.__module__}.{cls.__qualname__}", meaning(cls))
        for cls in error_classes()
    )
    return "".join(f"| `{c}` | {f} | `{k}` | {m} |\n" for f, c, k, m in rows)


def documented() -> str:
    """The rows docs/errors.md holds now."""
    page = DOC.read_text(encoding="utf-8")
    start = page.index(TABLE_START) + len(TABLE_START)
    return page[start : page.index(TABLE_END, start)].rstrip("\n") + "\n"


def write() -> None:
    """Replace the rows in docs/errors.md by the generated ones."""
    page = DOC.read_text(encoding="utf-8")
    start = page.index(TABLE_START) + len(TABLE_START)
    end = page.index(TABLE_END, start)
    DOC.write_text(page[:start] + render() + page[end:], encoding="utf-8")


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        write()
    else:
        sys.stdout.write(render())
