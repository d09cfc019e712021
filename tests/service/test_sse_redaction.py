"""Every sink of a run through the service holds no planted credential (issue 34): the SSE
event stream, the run's record and items, the journal, with every shaped token split across
two deltas. Agent text is redacted once, by the stream redactor, and marked; this proves the
sinks that now trust the mark (the event encoder, the store) still leak nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

from .conftest import AUTH, close_api, make_api

sys.path.insert(0, str(Path(__file__).parents[1] / "redaction"))

import shape_tokens


def _script() -> str:
    commands = [f"echo {shape_tokens.planted_line()}\\n"]
    for secret in shape_tokens.TOKENS.values():
        half = len(secret) // 2 + 1
        commands += [f"echo {secret[:half]}", f"echo {secret[half:]}\\n"]
    commands.append("stop end_turn")
    return "; ".join(c.replace(";", "\\;") for c in commands)


async def test_no_planted_credential_reaches_sse_the_store_or_the_journal(tmp_path: Path) -> None:
    api, runtime = await make_api(tmp_path)
    try:
        run_id = await api.start(_script(), policy="full", allowUnattended=True)
        answer = await api.client.get(f"/api/v1/runs/{run_id}/events", headers=AUTH)
        assert answer.status_code == 200
        sse = answer.content
        record = await api.finish(run_id)
        assert record["status"] == "COMPLETED", record
        assert runtime.store is not None
        items = runtime.store.list_items(run_id)
    finally:
        await close_api(api, runtime)
    texts = [item.content.get("text", "") for item in items if item.kind == "text"]
    assert texts and texts[0].count("[REDACTED") >= len(shape_tokens.TOKENS)  # not vacuous
    assert b"[REDACTED" in sse
    files = [p for p in (tmp_path / "data").rglob("*") if p.is_file()]
    assert any(p.suffix == ".ndjson" for p in files), files
    hits = [("sse", name) for name in shape_tokens.hits(sse)]
    hits += [("record", name) for name in shape_tokens.hits(orjson.dumps(record))]
    hits += [("items", name) for name in shape_tokens.hits(orjson.dumps(texts))]
    hits += [(p.name, name) for p in files for name in shape_tokens.hits(p.read_bytes())]
    assert hits == []
