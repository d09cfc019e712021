"""docs/errors.md's exception table is the code's: every BatonError class, its code and fault."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "errors_doc.py"
_spec = importlib.util.spec_from_file_location("errors_doc", SCRIPT)
assert _spec is not None and _spec.loader is not None
errors_doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(errors_doc)


def test_the_page_lists_every_error_class_as_the_code_defines_it() -> None:
    assert errors_doc.documented() == errors_doc.render(), (
        "docs/errors.md differs from the code: run scripts/errors_doc.py --write"
    )


def test_the_table_finds_every_depth_of_the_hierarchy() -> None:
    classes = {f"{c.__module__}.{c.__qualname__}" for c in errors_doc.error_classes()}
    assert "baton.errors.BatonError" in classes
    assert "baton.errors.ElicitationNotFound" in classes  # BatonError > UsageError > Service...
    assert "baton.errors.LaneLost" in classes  # raised by the lanes, defined with the rest
