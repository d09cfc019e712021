"""Lazy re-exports for a package's ``__init__`` (PEP 562): the package names what it exports
and from which of its modules, and a name's module is imported the first time someone reads
the name. Importing one module of the package then does not import all of its siblings, so
a verb pays only for what it uses (issue 34; docs/performance.md). Type checkers see the same
names through the package's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: ``exports`` maps each exported name to the
    module that defines it (its full name). The value read is kept in the package's
    namespace, so each name is looked up once."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
