"""The run store's typed API: every table, compare-and-set, redaction, bounds, flush order."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from baton.errors import JournalSyncFailed, RecordNotFound, StoreConflict, UsageError
from baton.journal import Journal, JournalLimits, JournalRef, SecretValues
from baton.store import NewItem, Store
from baton.store import database as store_module
from baton.store import runs as runs_module

REF = JournalRef("srv-1", 0, 7, 100, 50, "c" * 64)
ANTHROPIC_KEY = "sk-ant-api03-" + "A1b2C3d4E5f6G7h8I9j0" * 3


class Clock:
    """A clock that advances one millisecond per reading."""

    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


class FlushLog:
    """A journal flush callback that records what it was asked, and what the DB held then
    (read over a connection of its own, on either backend)."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.calls: list[list[JournalRef]] = []
        self.fail = False
        self.snapshots: list[tuple[int, int, int]] = []

    async def __call__(self, refs: Sequence[JournalRef]) -> None:
        self.calls.append(list(refs))
        counts = self.target.query(
            "SELECT (SELECT COUNT(*) FROM interactions), (SELECT COUNT(*) FROM observations), "
            "(SELECT COUNT(*) FROM runs WHERE response_ref IS NOT NULL "
            "OR prompt_ref IS NOT NULL)"
        )[0]
        self.snapshots.append(tuple(int(count) for count in counts))
        if self.fail:
            raise JournalSyncFailed("the journal could not sync")


@pytest.fixture
def data(store_target: Any) -> Path:
    return Path(store_target.data)


@pytest.fixture
def sqlite_only(store_target: Any) -> None:
    """Tests of the SQLite file itself (its mode, its path) run once."""
    if store_target.backend != "sqlite":
        pytest.skip("a test of the SQLite store's file")


@pytest.fixture
def flush(store_target: Any) -> FlushLog:
    return FlushLog(store_target)


@pytest.fixture
def store(store_target: Any, flush: FlushLog) -> Store:
    return store_target.open(flush=flush, clock=Clock())  # type: ignore[no-any-return]


def test_files_are_private(sqlite_only: None, store: Store, data: Path) -> None:
    store.create_server_instance("claude", "default", 1)
    for name in os.listdir(data):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    assert {"baton.sqlite3", "baton.sqlite3-wal"} <= set(os.listdir(data))


def test_refuses_a_symlinked_database(sqlite_only: None, data: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere.db"
    elsewhere.write_bytes(b"")
    elsewhere.chmod(0o600)
    (data / "baton.sqlite3").symlink_to(elsewhere)
    with pytest.raises(Exception, match="UNSAFE_PATH"):
        Store.open(data)


def test_server_instances(store: Store) -> None:
    server = store.create_server_instance("claude", "default", 3, pid=42, server_id="srv-a")
    assert (server.id, server.state, server.pid, server.generation) == ("srv-a", "STARTING", 42, 3)
    assert server.ended_at is None
    ready = store.update_server_state("srv-a", "READY", expected="STARTING")
    assert ready.state == "READY"
    assert ready.updated_at > server.updated_at
    with pytest.raises(StoreConflict, match="is READY"):
        store.update_server_state("srv-a", "RUNNING", expected="STARTING")
    assert store.get_server_instance("srv-a").state == "READY"
    exited = store.update_server_state("srv-a", "EXITED", diagnostics="clean shutdown")
    assert exited.ended_at is not None
    assert exited.diagnostics == "clean shutdown"
    generated = store.create_server_instance("codex", "lane-2", 1)
    assert generated.id.startswith("srv-")
    assert [s.id for s in store.list_server_instances()] == ["srv-a", generated.id]
    assert [s.id for s in store.list_server_instances(states=["EXITED"])] == ["srv-a"]
    assert [s.id for s in store.list_server_instances(profile="codex")] == [generated.id]
    with pytest.raises(RecordNotFound):
        store.get_server_instance("nope")
    assert store.find_server_instance("nope") is None
    with pytest.raises(UsageError):
        store.create_server_instance("claude", "default", 1, server_id="bad.id")
    with pytest.raises(UsageError):
        store.update_server_state("srv-a", "ASLEEP")  # type: ignore[arg-type]


def test_cold_start_marks_live_servers_lost(store: Store) -> None:
    for state in ("STARTING", "READY", "RUNNING", "DEGRADED", "STOPPING", "EXITED", "FAILED"):
        store.create_server_instance("p", "l", 1, state=state, server_id=f"srv-{state.lower()}")  # type: ignore[arg-type]
    lost = store.mark_live_servers_lost("Baton restarted; the process is gone")
    assert sorted(lost) == sorted(
        f"srv-{s}" for s in ("starting", "ready", "running", "degraded", "stopping")
    )
    states = {s.id: s.state for s in store.list_server_instances()}
    assert states["srv-exited"] == "EXITED"
    assert states["srv-failed"] == "FAILED"
    assert {states[i] for i in lost} == {"LOST"}
    assert (
        store.get_server_instance("srv-ready").diagnostics == "Baton restarted; the process is gone"
    )


def test_sessions(store: Store, store_target: Any) -> None:
    integrity_errors = store_target.integrity_errors()
    store.create_server_instance("claude", "default", 1, server_id="srv-1")
    session = store.create_session("claude", "/work", server_instance_id="srv-1")
    assert (session.state, session.native_state, session.provider_session_id) == (
        "CREATING",
        {},
        None,
    )
    ready = store.update_session(
        session.id,
        state="READY",
        expected="CREATING",
        provider_session_id="prov-123",
        native_state={"modes": {"currentModeId": "default"}},
    )
    assert ready.provider_session_id == "prov-123"
    assert ready.native_state == {"modes": {"currentModeId": "default"}}
    with pytest.raises(StoreConflict):
        store.update_session(session.id, state="ACTIVE", expected="CREATING")
    assert store.find_session_by_provider_id("claude", "prov-123") == ready
    assert store.find_session_by_provider_id("codex", "prov-123") is None
    again = store.create_session("claude", "/work", server_instance_id="srv-1")
    again = store.update_session(
        again.id, state="READY", expected="CREATING", provider_session_id="prov-123"
    )
    both = store.sessions_by_provider_id("claude", "prov-123")
    assert sorted(s.id for s in both) == sorted([ready.id, again.id])
    assert len(store.sessions_by_provider_id("claude", "prov-123", limit=1)) == 1
    assert store.sessions_by_provider_id("codex", "prov-123") == []
    assert sorted(s.id for s in store.list_sessions(state="READY")) == sorted([ready.id, again.id])
    assert store.list_sessions(profile="other") == []
    with pytest.raises(RecordNotFound):
        store.get_session("nope")
    with pytest.raises(integrity_errors):
        store.create_session("claude", "/w", server_instance_id="srv-unknown")


async def test_runs_and_compare_and_set(store: Store) -> None:
    store.create_server_instance("claude", "default", 1, server_id="srv-1")
    run = store.create_run(
        "fix the bug", server_instance_id="srv-1", policy="full", unattended=True
    )
    assert (run.status, run.prompt_text, run.policy, run.unattended) == (
        "QUEUED",
        "fix the bug",
        "full",
        True,
    )
    assert run.started_at is None and run.ended_at is None
    running = await store.update_run_status(run.id, "RUNNING", expected="QUEUED")
    assert running.started_at is not None
    with pytest.raises(StoreConflict, match="is RUNNING"):
        await store.update_run_status(run.id, "COMPLETED", expected=("QUEUED", "STARTING"))
    done = await store.update_run_status(
        run.id,
        "COMPLETED",
        expected=["RUNNING", "INTERRUPTING"],
        stop_reason="end_turn",
        skipped_frames=2,
        violations=1,
    )
    assert (done.status, done.stop_reason, done.skipped_frames, done.violations) == (
        "COMPLETED",
        "end_turn",
        2,
        1,
    )
    assert done.ended_at is not None
    with pytest.raises(StoreConflict, match="already COMPLETED"):
        await store.update_run_status(run.id, "RUNNING")
    with pytest.raises(RecordNotFound):
        await store.update_run_status("run-nope", "RUNNING")


async def test_recovery_required_ends_the_turn_but_not_the_run(store: Store) -> None:
    run = store.create_run("p")
    ambiguous = await store.update_run_status(
        run.id,
        "RECOVERY_REQUIRED",
        error_code="AGENT_MUTATION_AMBIGUOUS",
        recovery_reason="the agent disconnected mid-prompt",
    )
    assert ambiguous.ended_at is not None
    assert ambiguous.recovery_reason == "the agent disconnected mid-prompt"
    resolved = await store.update_run_status(run.id, "FAILED", expected="RECOVERY_REQUIRED")
    assert resolved.status == "FAILED"


async def test_listing_runs(store: Store) -> None:
    store.create_server_instance("claude", "default", 1, server_id="srv-1")
    store.create_server_instance("claude", "default", 2, server_id="srv-2")
    session = store.create_session("claude", "/w")
    first = store.create_run("a", server_instance_id="srv-1", session_id=session.id)
    second = store.create_run("b", server_instance_id="srv-1")
    third = store.create_run("c", server_instance_id="srv-2")
    await store.update_run_status(second.id, "RUNNING")
    assert [r.id for r in store.list_runs()] == [third.id, second.id, first.id]
    assert [r.id for r in store.list_runs(status="RUNNING")] == [second.id]
    assert [r.id for r in store.list_runs(status=["QUEUED"])] == [third.id, first.id]
    assert [r.id for r in store.list_runs(session_id=session.id)] == [first.id]
    assert [r.id for r in store.list_runs(limit=1)] == [third.id]
    assert [r.id for r in store.runs_for_server("srv-1")] == [first.id, second.id]
    assert [r.id for r in store.runs_for_server("srv-1", status="RUNNING")] == [second.id]
    assert store.find_run("nope") is None
    with pytest.raises(RecordNotFound):
        store.get_run("nope")


def test_items(store: Store) -> None:
    run = store.create_run("p")
    added = store.append_items(
        run.id,
        [
            NewItem("text", {"text": "hello"}, coalesced_events=512),
            NewItem("plan", {"entries": [1, 2]}),
        ],
    )
    assert [(i.seq, i.kind, i.coalesced_events) for i in added] == [
        (1, "text", 512),
        (2, "plan", 1),
    ]
    more = store.append_items(run.id, [NewItem("usage", {"used": 10, "size": 100})])
    assert more[0].seq == 3
    assert store.list_items(run.id) == [*added, *more]
    with pytest.raises(RecordNotFound):
        store.append_items("run-nope", [NewItem("text", {})])
    with pytest.raises(UsageError):
        store.append_items(run.id, [NewItem("text", {}, coalesced_events=0)])
    assert len(store.list_items(run.id)) == 3  # the failed append wrote nothing


def test_an_append_with_its_count_is_safe_to_repeat(store: Store) -> None:
    run = store.create_run("p")
    first = [NewItem("text", {"text": "a"}), NewItem("text", {"text": "b"})]
    store.append_items(run.id, first, after=0)
    # The same append again (its commit was cut off, the caller cannot tell): nothing doubles;
    # a repeat that carries more items adds only those.
    store.append_items(run.id, first, after=0)
    store.append_items(run.id, [*first, NewItem("plan", {"entries": []})], after=0)
    assert [(i.seq, i.kind) for i in store.list_items(run.id)] == [
        (1, "text"),
        (2, "text"),
        (3, "plan"),
    ]
    with pytest.raises(StoreConflict):
        store.append_items(run.id, first, after=5)  # the run holds fewer than that
    with pytest.raises(StoreConflict):
        store.append_items(run.id, first[:1], after=1)  # it holds more than this adds
    assert len(store.list_items(run.id)) == 3


async def test_interactions(store: Store, flush: FlushLog) -> None:
    run = store.create_run("p")
    tool_call = {"toolCallId": "call-1", "kind": "edit"}
    options = [{"optionId": "allow-1", "kind": "allow_once", "name": "Allow"}]
    pending = await store.record_interaction(run.id, 0, tool_call, options, request_ref=REF)
    assert (pending.state, pending.request_id, pending.request_ref) == ("PENDING", 0, REF)
    assert pending.tool_call == tool_call and pending.offered_options == options
    answer = JournalRef("srv-1", 0, 9, 300, 40, "d" * 64)
    chosen = await store.resolve_interaction(
        pending.id,
        "RESOLVED",
        choice="allow-1",
        chosen_by="policy",
        reason="exactly one allow_once",
        response_ref=answer,
    )
    assert (chosen.state, chosen.choice, chosen.chosen_by) == ("RESOLVED", "allow-1", "policy")
    assert chosen.response_ref == answer and chosen.resolved_at is not None
    with pytest.raises(StoreConflict):
        await store.resolve_interaction(pending.id, "CANCELLED")
    string_id = await store.record_interaction(run.id, "perm-7", {}, [], request_ref=None)
    assert string_id.request_id == "perm-7"
    assert store.abort_pending_interactions([run.id], "server lost") == 1
    assert store.get_interaction(string_id.id).state == "ABORTED"
    assert store.abort_pending_interactions([], "x") == 0
    assert [i.id for i in store.list_interactions(run.id)] == [pending.id, string_id.id]
    assert [i.id for i in store.list_interactions(run.id, state="ABORTED")] == [string_id.id]
    with pytest.raises(UsageError):
        await store.resolve_interaction(
            pending.id, "RESOLVED", chosen_by="robot", expected="RESOLVED"
        )  # type: ignore[arg-type]
    with pytest.raises(RecordNotFound):
        store.get_interaction("nope")


async def test_observations(store: Store) -> None:
    session = store.create_session("claude", "/w")
    run = store.create_run("p", session_id=session.id)
    provider = await store.record_observation(
        "PROVIDER_REPORTED", {"modes": ["a"]}, session_id=session.id, journal_ref=REF
    )
    resolution = await store.record_observation(
        "BATON_RESOLUTION", {"mode": "a"}, session_id=session.id, run_id=run.id
    )
    assert provider.journal_ref == REF and resolution.journal_ref is None
    assert store.list_observations(session_id=session.id) == [provider, resolution]
    assert store.list_observations(kind="BATON_RESOLUTION") == [resolution]
    assert store.list_observations(run_id=run.id) == [resolution]
    with pytest.raises(UsageError):
        await store.record_observation("GUESS", {}, session_id=session.id)  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        await store.record_observation("BATON_RESOLUTION", {})


def test_readiness(store: Store) -> None:
    first = store.record_readiness("claude", "READY", {"version": "0.23.1"})
    assert first.result == {"version": "0.23.1"}
    second = store.record_readiness("claude", "AUTH_REQUIRED", {"methods": ["login"]})
    assert store.get_readiness("claude") == second
    assert second.checked_at > first.checked_at
    store.record_readiness("codex", "NOT_INSTALLED", {})
    assert [r.profile for r in store.list_readiness()] == ["claude", "codex"]
    assert store.get_readiness("grok") is None


async def test_publishing_flushes_cited_refs_before_writing(store: Store, flush: FlushLog) -> None:
    run = store.create_run("p")
    assert flush.calls == []  # no refs cited, no flush
    await store.set_run_prompt_ref(run.id, REF)
    await store.record_interaction(run.id, 1, {}, [], request_ref=REF)
    await store.record_observation("PROVIDER_REPORTED", {}, run_id=run.id, journal_ref=REF)
    await store.update_run_status(run.id, "COMPLETED", response_ref=REF)
    assert flush.calls == [[REF]] * 4
    # At each flush the record citing the ref was not yet in the database.
    assert flush.snapshots == [(0, 0, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1)]
    assert store.get_run(run.id).prompt_ref == REF


async def test_a_failed_flush_publishes_nothing(store: Store, flush: FlushLog) -> None:
    run = store.create_run("p")
    flush.fail = True
    with pytest.raises(JournalSyncFailed):
        await store.record_interaction(run.id, 1, {}, [], request_ref=REF)
    with pytest.raises(JournalSyncFailed):
        await store.record_observation("PROVIDER_REPORTED", {}, run_id=run.id, journal_ref=REF)
    with pytest.raises(JournalSyncFailed):
        await store.update_run_status(run.id, "COMPLETED", response_ref=REF)
    assert store.list_interactions(run.id) == []
    assert store.list_observations(run_id=run.id) == []
    assert store.get_run(run.id).status == "QUEUED"


async def test_citing_refs_needs_a_flush_callback(store_target: Any) -> None:
    with store_target.open() as store:
        run = store.create_run("p")
        with pytest.raises(UsageError, match="no journal flush"):
            await store.set_run_prompt_ref(run.id, REF)
        assert store.get_run(run.id).prompt_ref is None
        await store.update_run_status(run.id, "RUNNING")  # no refs: no flush needed


async def test_flush_with_a_real_journal(store_target: Any, data: Path) -> None:
    journal = Journal.in_data_dir(data)
    server = await journal.open_server("srv-1", limits=JournalLimits(sync_interval_seconds=3600))
    ref = await server.append("inbound", {"jsonrpc": "2.0", "method": "x"}, input_bytes=30)
    assert server.synced_sequence < ref.sequence  # batched: not durable yet
    with store_target.open(flush=journal.flush_refs) as store:
        run = store.create_run("p", server_instance_id=None)
        await store.set_run_prompt_ref(run.id, ref)
        assert server.synced_sequence >= ref.sequence
        assert journal.read(store.get_run(run.id).prompt_ref or REF) == journal.read(ref)
        assert store.cited_refs() == [(f"run {run.id} prompt", ref)]
    await journal.close()


async def test_cited_refs(store: Store) -> None:
    run = store.create_run("p")
    other = store.create_run("q")
    a = JournalRef("srv-1", 0, 1, 0, 10, "a" * 64)
    b = JournalRef("srv-1", 0, 2, 11, 10, "b" * 64)
    c = JournalRef("srv-1", 0, 3, 22, 10, "e" * 64)
    await store.set_run_prompt_ref(run.id, a)
    interaction = await store.record_interaction(run.id, 1, {}, [], request_ref=b)
    observation = await store.record_observation(
        "PROVIDER_REPORTED", {}, run_id=other.id, journal_ref=c
    )
    assert store.cited_refs(run.id) == [
        (f"run {run.id} prompt", a),
        (f"interaction {interaction.id} request", b),
    ]
    assert (f"observation {observation.id}", c) in store.cited_refs()
    assert len(store.cited_refs()) == 3


async def test_free_text_is_redacted_defensively(store_target: Any, data: Path) -> None:
    secret = "correct-horse-battery-staple-9"
    with store_target.open(secrets=SecretValues([secret]), flush=FlushLog(store_target)) as store:
        run = store.create_run(f"deploy with {ANTHROPIC_KEY} and {secret}")
        await store.update_run_status(
            run.id,
            "FAILED",
            diagnostic=f"Authorization: Bearer {ANTHROPIC_KEY}",
            recovery_reason=f"token={secret}",
        )
        store.create_server_instance("p", "l", 1, server_id="srv-1")
        store.update_server_state("srv-1", "LOST", diagnostics=f"stderr: {ANTHROPIC_KEY}")
        store.append_items(run.id, [NewItem("text", {"text": f"key {ANTHROPIC_KEY}"})])
        session = store.create_session("p", "/w", native_state={"apiKey": "plain-value"})
        await store.record_observation(
            "PROVIDER_REPORTED",
            {"env": [{"name": "TOKEN", "value": secret}]},
            session_id=session.id,
        )
        got = store.get_run(run.id)
        assert ANTHROPIC_KEY not in got.prompt_text and secret not in got.prompt_text
        assert "deploy with" in got.prompt_text
    store.close()
    if store_target.backend == "sqlite":
        stored = {name: (data / name).read_bytes() for name in os.listdir(data)}
    else:  # every row of every table, as PostgreSQL holds it
        stored = {
            table: str(store_target.query(f"SELECT t::text FROM {table} t")).encode()
            for table in ("runs", "server_instances", "items", "sessions", "observations")
        }
    for name, content in stored.items():
        for planted in (ANTHROPIC_KEY, secret, "plain-value"):
            assert planted.encode() not in content, (name, planted)


def test_bounds(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    run = store.create_run("p")
    long = "x" * (store_module.MAX_DIAGNOSTIC_CHARS + 100)
    store.create_server_instance("p", "l", 1, server_id="srv-1")
    kept = store.update_server_state("srv-1", "FAILED", diagnostics=long).diagnostics
    assert kept is not None
    assert len(kept) == store_module.MAX_DIAGNOSTIC_CHARS
    assert kept.endswith("[truncated]")
    monkeypatch.setattr(runs_module, "MAX_PROMPT_CHARS", 10)
    assert store.create_run("x" * 10).prompt_text == "x" * 10
    with pytest.raises(UsageError):
        store.create_run("x" * 11)
    monkeypatch.setattr(store_module, "MAX_JSON_BYTES", 100)
    with pytest.raises(UsageError, match="bound"):
        store.append_items(run.id, [NewItem("text", {"text": "y" * 200})])
    with pytest.raises(UsageError):
        store.create_run("p", policy="")
    with pytest.raises(UsageError):
        store.append_items(run.id, [NewItem("k" * 300, {})])


def test_the_store_survives_reopening(store_target: Any) -> None:
    with store_target.open() as store:
        run = store.create_run("persist me")
    with store_target.open() as store:
        assert store.get_run(run.id).prompt_text == "persist me"


async def test_run_attachment_and_reconcile_helpers(store: Store) -> None:
    store.create_server_instance("claude", "default", 1, server_id="srv-mine")
    store.create_server_instance("claude", "default", 1, server_id="srv-old")
    lost = store.mark_live_servers_lost("restarted", exclude={"srv-mine"})
    assert lost == ["srv-old"]
    assert store.get_server_instance("srv-mine").state == "STARTING"
    assert [s.id for s in store.list_server_instances(states="LOST")] == ["srv-old"]
    session = store.create_session("claude", "/w")
    run = store.create_run("p", status="STARTING")
    attached = store.set_run_session(run.id, session_id=session.id, server_instance_id="srv-mine")
    assert (attached.session_id, attached.server_instance_id) == (session.id, "srv-mine")
    again = store.set_run_session(run.id, session_id=session.id)
    assert again.server_instance_id == "srv-mine"
    with pytest.raises(RecordNotFound):
        store.set_run_session("run-nope", session_id=session.id)
    assert (
        await store.update_run_status(run.id, "RUNNING", expected=("STARTING",))
    ).status == "RUNNING"


def test_id_like_text_is_bounded_at_max_id_chars(store: Store) -> None:
    bound = store_module.MAX_ID_CHARS
    assert bound == 4 * store_module.MAX_NAME_CHARS
    for length in (bound - 1, bound):
        session = store.create_session("p", "/w", provider_session_id="s" * length)
        assert session.provider_session_id == "s" * length
    cut = store.create_session("p", "/w", provider_session_id="s" * (bound + 1))
    assert cut.provider_session_id is not None
    assert len(cut.provider_session_id) == bound and cut.provider_session_id.endswith("[truncated]")
