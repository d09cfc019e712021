"""`baton worker`'s own options (the fleet suite runs workers end to end): a shutdown bound
that is not a number of seconds is a usage error before anything connects."""

from __future__ import annotations

import pytest

from baton.cli.main import main


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_a_bad_shutdown_timeout_is_a_usage_error(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["worker", "--store", "postgresql://u@127.0.0.1:1/db", "--shutdown-timeout", value])
    assert code == 2
    assert "not a number of seconds" in capsys.readouterr().err


def test_the_worker_help_names_the_shutdown_and_engine_schema_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["worker", "--help"])
    assert stopped.value.code == 0
    shown = capsys.readouterr().out
    assert "--shutdown-timeout" in shown and "--engine-schema-from" in shown
