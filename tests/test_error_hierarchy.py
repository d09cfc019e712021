"""The one error hierarchy (baton/errors.py): every ``BatonError`` class lives in ``baton.errors``, each class's
``fault`` is its family's, and the families a caller catches are exported from ``baton``."""

from __future__ import annotations

import gc
import importlib.util
from pathlib import Path
from typing import Final

import baton
from baton import errors

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "errors_doc.py"
_spec = importlib.util.spec_from_file_location("errors_doc", SCRIPT)
assert _spec is not None and _spec.loader is not None
errors_doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(errors_doc)

#: The fault families, most specific first: a class's fault is the fault of the first family
#: it descends from.
FAULT_FAMILIES: Final[tuple[tuple[type[errors.BatonError], str], ...]] = (
    (errors.AgentError, "agent"),
    (errors.UsageError, "caller"),
    (errors.TransportClosed, "transport"),
    (errors.BudgetExpired, "budget"),
    (errors.InternalError, "baton"),
)
#: StorageError is a family by what failed, not by whose fault: Baton's own record broke
#: ("baton"), or the user's disk is full, read-only or missing, or a file was overwritten
#: ("caller", docs/errors.md).
STORAGE_FAULTS: Final = frozenset({"baton", "caller"})
#: The families a caller catches, each importable from ``baton``.
CAUGHT_FAMILIES: Final = (
    "BatonError",
    "AgentError",
    "UsageError",
    "ConfigurationError",
    "RecordNotFound",
    "TransportClosed",
    "BudgetExpired",
    "StorageError",
    "InternalError",
)


def family_fault(cls: type[errors.BatonError]) -> frozenset[str]:
    """The faults ``cls``'s family allows."""
    for family, fault in FAULT_FAMILIES:
        if issubclass(cls, family):
            return frozenset({fault})
    if issubclass(cls, errors.StorageError):
        return STORAGE_FAULTS
    return frozenset({"baton"})  # a direct BatonError: Baton must act


def test_every_error_class_lives_in_the_errors_module() -> None:
    outside = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in errors_doc.error_classes()
        if cls.__module__ != "baton.errors"
    ]
    assert not outside, outside


def test_each_fault_is_its_familys() -> None:
    wrong = [
        f"{cls.__qualname__}: {cls.fault} (family: {sorted(family_fault(cls))})"
        for cls in errors_doc.error_classes()
        if cls.fault not in family_fault(cls)
    ]
    assert not wrong, wrong


def test_the_checker_sees_a_disagreeing_fault() -> None:
    class Wrong(errors.UsageError):
        fault = "agent"

    assert Wrong.fault not in family_fault(Wrong)
    assert family_fault(errors.StoreCorrupt) == STORAGE_FAULTS
    del Wrong  # a subclass is listed by __subclasses__() until collected: keep the table clean
    gc.collect()


def test_the_families_a_caller_catches_are_exported_from_baton() -> None:
    for name in CAUGHT_FAMILIES:
        assert name in baton.__all__, name
        assert getattr(baton, name) is getattr(errors, name)
    assert baton.AgentNotInstalled is errors.AgentNotInstalled
    assert issubclass(baton.AgentNotInstalled, baton.UsageError)
    assert issubclass(baton.SessionSetupFailed, baton.AgentError)
