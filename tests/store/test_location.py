"""Every malformed store URL is STORE_URL_INVALID (a caller's error, exit 2 on the CLI), and
no message holds the password."""

from __future__ import annotations

from pathlib import Path

import pytest

from baton.store.location import MAX_REASON_SHOWN_CHARS, StoreUrlInvalid, check_store_url

SECRET = "hunter2secret"

MALFORMED = [
    f"postgresql://u:{SECRET}@[::1/db",
    f"postgresql://u:{SECRET}@[::1]x/db",
    f"postgresql://u:{SECRET}@host:notaport/db",
    f"postgresql://u:{SECRET}@host:99999/db",
    f"postgresql://u:{SECRET}@host/db?bogus=1",
    f"postgres://u:{SECRET}@/db?host=%zz",
    f"postgresql://u:{SECRET} x@ho st/db",
    f"postgresql://u:{SECRET}@host/db?sslmode=require&" + "x" * 3000 + "=1",
]


@pytest.mark.parametrize("url", MALFORMED)
def test_a_malformed_url_is_store_url_invalid_without_its_password(url: str) -> None:
    with pytest.raises(StoreUrlInvalid) as caught:
        check_store_url(url, "env")
    assert caught.value.code == "STORE_URL_INVALID" and caught.value.fault == "caller"
    assert SECRET not in caught.value.message
    assert "BATON_STORE" in caught.value.message
    assert len(caught.value.message) < MAX_REASON_SHOWN_CHARS + 300


def test_a_well_formed_url_passes() -> None:
    for url in (
        f"postgresql://u:{SECRET}@[::1]:5432/db",
        "postgres://u@localhost/db?sslmode=disable",
        "postgresql:///db?host=/run/postgresql",
    ):
        assert check_store_url(url) == url


def test_the_cli_says_store_url_invalid_and_exits_2(tmp_path: Path) -> None:
    from tests.cli.helpers import baton

    done = baton(tmp_path, "runs", "--store", f"postgresql://u:{SECRET}@[::1/db")
    assert done.returncode == 2, done.stderr
    assert "STORE_URL_INVALID" in done.stderr
    assert "Traceback" not in done.stderr and SECRET not in done.stderr + done.stdout
