"""Batches through the API (the inspector's Batches page): the list with counts and cost, one
batch with its matrix and result rows, a prefix, and 404 BATCH_NOT_FOUND; every answer
validated against the OpenAPI document by the client's response hook."""

from __future__ import annotations

from pathlib import Path

from baton.batches import Batch
from baton.batches.spec import parse_document

from .conftest import AGENT, AUTH, close_api, make_api


async def test_batches_are_listed_and_shown_with_their_rows(tmp_path: Path) -> None:
    api, runtime = await make_api(tmp_path)
    try:
        spec = parse_document(
            {
                "matrix": {"repeats": 2},
                "tasks": [
                    {"id": "hi", "prompt": "echo hi\ncost 2", "cwd": str(api.cwd)},
                    {"id": "no", "prompt": "stop refusal", "cwd": str(api.cwd)},
                ],
                "agents": [{"id": "scripted", "command": AGENT}],
            },
            source="test",
            base_dir=None,
        )
        batch = Batch.create(runtime, spec)
        summary = await batch.run(jobs=2)
        assert summary.state == "COMPLETED"
        listed = await api.client.get("/api/v1/batches", headers=AUTH)
        assert listed.status_code == 200
        [row] = listed.json()["batches"]
        assert row["batchId"] == batch.id and row["counts"] == {"COMPLETED": 2, "FAILED": 2}
        assert row["cost"] == {"USD": 0.04}
        assert row["matrix"] == {"tasks": ["hi", "no"], "agents": ["scripted"], "repeats": 2}
        shown = await api.client.get(f"/api/v1/batches/{batch.id[:12]}", headers=AUTH)
        assert shown.status_code == 200
        rows = shown.json()["rows"]
        assert [(r["task"], r["repeat"], r["state"]) for r in rows] == [
            ("hi", 1, "COMPLETED"),
            ("hi", 2, "COMPLETED"),
            ("no", 1, "FAILED"),
            ("no", 2, "FAILED"),
        ]
        assert rows[2]["stopReason"] == "refusal" and rows[2]["cost"] == "unknown"
        missing = await api.client.get("/api/v1/batches/batch-nope", headers=AUTH)
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "BATCH_NOT_FOUND"
    finally:
        await close_api(api, runtime)
