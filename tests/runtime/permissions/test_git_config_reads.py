"""`git config`'s read forms: one list (``GIT_CONFIG_READ_FLAGS`` and ``GIT_CONFIG_READ_VERBS``)
read the same by the reserved-command scan and by the execute rules."""

from __future__ import annotations

import pytest

from baton.runtime.permissions.command_rules import judge_argv
from baton.runtime.permissions.command_scan import (
    GIT_CONFIG_READ_FLAGS,
    GIT_CONFIG_READ_VERBS,
    scan_reserved,
)

READ_FORMS = sorted(GIT_CONFIG_READ_FLAGS | GIT_CONFIG_READ_VERBS)


@pytest.mark.parametrize("form", READ_FORMS)
def test_each_read_form_reads_for_both_judges(form: str) -> None:
    argv = ["git", "config", form, "remote.origin.url", "x"]
    assert scan_reserved(argv) is None
    assert judge_argv(argv).finding is None


@pytest.mark.parametrize("form", ["--add", "--unset", "set"])
def test_a_write_of_a_remote_is_refused_by_both(form: str) -> None:
    argv = ["git", "config", form, "remote.origin.url", "x"]
    assert scan_reserved(argv) is not None
    assert judge_argv(argv).finding is not None
