"""`baton journal show` and `baton journal verify`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from baton.cli.commands.journal import SHOW_RAW_CHARS, VERIFY_FAILED
from baton.cli.main import main
from baton.journal import Journal, JournalRef
from baton.store import Store


async def _populate(data: Path) -> tuple[str, list[JournalRef]]:
    journal = Journal.in_data_dir(data)
    server = await journal.open_server("srv-1")
    refs = [
        await server.append(
            "outbound",
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            input_bytes=80,
        ),
        await server.append(
            "inbound",
            {"jsonrpc": "2.0", "id": 1, "result": {"pad": "w" * (SHOW_RAW_CHARS * 2)}},
            input_bytes=400,
        ),
        await server.append_skipped("inbound", "invalid_json", 17),
    ]
    await server.close()
    with Store.open(data, flush=journal.flush_refs) as store:
        store.create_server_instance("claude", "default", 1, server_id="srv-1")
        run = store.create_run("hello", server_instance_id="srv-1")
        await store.set_run_prompt_ref(run.id, refs[0])
    return run.id, refs


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def test_show_a_server(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    await _populate(data_dir)
    code, out, _err = _run(capsys, "journal", "show", "srv-1", "--data-dir", str(data_dir))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "# server instance srv-1"
    assert lines[1].split()[:5] == ["1", "out", "request", "initialize", "1"]
    assert lines[2].split()[:5] == ["2", "in", "response", "-", "1"]
    assert lines[2].endswith("…")
    assert len(lines[2]) < SHOW_RAW_CHARS + 80
    assert lines[3].split()[:3] == ["3", "in", "skipped"]
    assert "[REDACTED MALFORMED ACP FRAME]" in lines[3]


async def test_show_a_run_as_json(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id, refs = await _populate(data_dir)
    code, out, _err = _run(capsys, "journal", "show", run_id, "--json", "--data-dir", str(data_dir))
    assert code == 0
    records = [orjson.loads(line) for line in out.splitlines()]
    assert [r["sequence"] for r in records] == [1, 2, 3]
    assert records[0]["serverInstanceId"] == "srv-1"
    assert records[0]["metadata"] == {
        "protocol": "acp",
        "kind": "request",
        "method": "initialize",
        "id": 1,
    }
    assert records[1]["sha256"] == refs[1].sha256
    assert len(records[1]["raw"]) > SHOW_RAW_CHARS  # --json never truncates


async def test_show_uses_baton_home(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    await _populate(data_dir)
    monkeypatch.setenv("BATON_HOME", str(data_dir))
    code, out, _err = _run(capsys, "journal", "show", "srv-1")
    assert code == 0
    assert "initialize" in out


async def test_show_unknown_targets(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id, _refs = await _populate(data_dir)
    code, _out, err = _run(capsys, "journal", "show", "nope", "--data-dir", str(data_dir))
    assert code == 2
    assert "RECORD_NOT_FOUND" in err
    with Store.open(data_dir) as store:
        store.create_server_instance("claude", "default", 2, server_id="srv-quiet")
        queued = store.create_run("later")
    code, _out, err = _run(capsys, "journal", "show", "srv-quiet", "--data-dir", str(data_dir))
    assert (code, "has no journal" in err) == (2, True)
    code, _out, err = _run(capsys, "journal", "show", queued.id, "--data-dir", str(data_dir))
    assert (code, "not started" in err) == (2, True)
    missing = data_dir.parent / "missing"
    code, _out, err = _run(capsys, "journal", "show", run_id, "--data-dir", str(missing))
    assert (code, "no Baton data directory" in err) == (2, True)
    assert not missing.exists()


async def test_verify_good(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_id, _refs = await _populate(data_dir)
    code, out, _err = _run(capsys, "journal", "verify", "--all", "--data-dir", str(data_dir))
    assert code == 0
    assert "srv-1: ok, 3 records in 1 segment (sequences 1-3)" in out
    assert "cited references: 1 ok" in out
    code, out, _err = _run(capsys, "journal", "verify", run_id, "--data-dir", str(data_dir))
    assert code == 0
    assert "srv-1: ok" in out
    code, out, _err = _run(capsys, "journal", "verify", "srv-1", "--data-dir", str(data_dir))
    assert code == 0


async def test_verify_names_the_first_bad_record(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await _populate(data_dir)
    segment = data_dir / "journals" / "srv-1.0.ndjson"
    lines = segment.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"www", b"wwx", 1)
    segment.write_bytes(b"\n".join(lines))
    code, _out, err = _run(capsys, "journal", "verify", "--all", "--data-dir", str(data_dir))
    assert code == VERIFY_FAILED != 0
    assert "JOURNAL_CORRUPT" in err
    assert f"srv-1 segment 0 sequence ? at byte {len(lines[0]) + 1}" in err
    assert "SHA-256" in err


async def test_verify_checks_cited_references(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id, refs = await _populate(data_dir)
    with Store.open(data_dir, flush=Journal.in_data_dir(data_dir).flush_refs) as store:
        other = store.create_run("again", server_instance_id="srv-1")
        wrong = JournalRef("srv-1", 0, 2, refs[0].byte_offset, refs[0].byte_length, refs[0].sha256)
        await store.set_run_prompt_ref(other.id, wrong)
    code, _out, err = _run(capsys, "journal", "verify", other.id, "--data-dir", str(data_dir))
    assert code == VERIFY_FAILED
    assert f"cited by run {other.id} prompt" in err
    code, _out, _err = _run(capsys, "journal", "verify", run_id, "--data-dir", str(data_dir))
    assert code == 0


def test_verify_usage(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(capsys, "journal", "verify", "--data-dir", str(data_dir))
    assert code == 2
    assert "--all" in err
    data_dir.mkdir(mode=0o700)
    code, out, _err = _run(capsys, "journal", "verify", "--all", "--data-dir", str(data_dir))
    assert (code, out.strip()) == (0, "no journals to verify")
    code, _out, _err = _run(capsys, "journal")
    assert code == 2
