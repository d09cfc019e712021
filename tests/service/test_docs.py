"""docs/api.md says what the service does: its status tables are the code's, and every route
of the OpenAPI table is documented."""

from __future__ import annotations

import re
from pathlib import Path

from baton.service.openapi import OPERATIONS
from baton.service.statuses import STATUS_BY_CODE, STATUS_BY_FAULT

API_MD = Path(__file__).parents[2] / "docs" / "api.md"


def _table(text: str, header: str) -> dict[str, int]:
    block = text.split(f"| {header} | status |", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([A-Za-z_]+)` \| (\d+) \|$", block, flags=re.M)
    return {name: int(status) for name, status in rows}


def test_the_status_tables_are_the_codes() -> None:
    text = API_MD.read_text()
    assert _table(text, "code") == STATUS_BY_CODE
    assert _table(text, "fault") == STATUS_BY_FAULT


def test_every_route_is_documented() -> None:
    text = API_MD.read_text()
    for operation in OPERATIONS:
        assert f"`{operation.method.upper()} {operation.path}" in text, operation.path
