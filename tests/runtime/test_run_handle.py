"""The run handle: ``Runtime.start`` returns a :class:`Run` once the run's row exists; its
events, interrupt and result; the runtime's run table; closing an event stream early
interrupts the run (break, aclose, a cancelled reader) instead of abandoning it; and the
protocol a local run and a fleet's queued run share, driven alike."""

from __future__ import annotations

import asyncio
import gc
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from baton.errors import RunEventsUnavailable
from baton.fleet.queued import QueuedRun
from baton.runtime.lanes.recorder import LAUNCH_KEY
from baton.runtime.run import EVENTS_CLOSED, Run, RunHandle
from baton.runtime.runtime import RunRequest, RunResult, Runtime
from baton.runtime.turns.events import RunEvent
from baton.store import STORE_FILENAME, Store

AGENT = [sys.executable, "-m", "baton.agents.scripted"]


@pytest.fixture
async def runtime(tmp_path: Path) -> AsyncIterator[Runtime]:
    rt = Runtime(data_dir=tmp_path / "data", environ=dict(os.environ), interrupt_timeout=2.0)
    await rt.open()
    yield rt
    await rt.close()


def request(prompt: str, cwd: Path) -> RunRequest:
    return RunRequest(prompt=prompt, agent_command=AGENT, cwd=str(cwd))


async def until_streaming(run: Run) -> list[RunEvent]:
    """Read ``run``'s events up to its first text (the prompt is outstanding then)."""
    seen: list[RunEvent] = []
    stream = run.events()
    async for event in stream:
        seen.append(event)
        if event.type == "text":
            break
    await stream.aclose()
    return seen


def store_of(runtime: Runtime) -> Store:
    assert runtime.store is not None
    return runtime.store


async def test_start_returns_a_handle_once_the_run_exists(runtime: Runtime, tmp_path: Path) -> None:
    run = await runtime.start(request("echo hello", tmp_path))
    # The row exists and the run is in the table before anything else happened.
    assert store_of(runtime).get_run(run.id).status in ("CREATED", "STARTING")
    assert runtime.runs.get(run.id) is run and run.id in runtime.runs
    assert not run.done
    async with run.events() as events:
        seen = [event async for event in events]
    assert seen[0].type == "run_started" and seen[-1].type == "result"
    assert all(event.run_id == run.id for event in seen)
    result = await run.result()
    assert (result.run_id, result.status) == (run.id, "COMPLETED")
    assert result.text.strip() == "hello"
    assert run.done and runtime.runs.get(run.id) is None and len(runtime.runs) == 0
    # The facts a surface shows, read from the handle.
    assert run.provider_session_id == result.provider_session_id is not None
    assert run.capabilities is not None
    assert isinstance(run.stderr_tail(), str)


async def test_the_table_finds_a_running_run_by_its_provider_session(
    runtime: Runtime, tmp_path: Path
) -> None:
    run = await runtime.start(request("wait_for_cancel 20", tmp_path))
    await until_streaming_then(run)
    provider = run.provider_session_id
    assert provider is not None
    assert runtime.runs.by_provider_session(provider) is run
    assert runtime.runs.by_provider_session("no-such-session") is None
    assert await run.interrupt("user")
    result = await run.result()
    assert result.status == "INTERRUPTED"
    assert runtime.runs.by_provider_session(provider) is None
    assert not await run.interrupt("user")  # ended: nothing to stop


async def until_streaming_then(run: Run) -> None:
    """Wait (through the run table, not the events) until the run's turn streams."""
    for _ in range(2000):
        if run.provider_session_id is not None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the turn never started")


async def test_an_interrupt_during_setup_sends_no_prompt(runtime: Runtime, tmp_path: Path) -> None:
    run = await runtime.start(request("echo never", tmp_path))
    assert run.interrupt_nowait("user")  # before the task ran: the run is in its setup
    result = await run.result()
    assert (result.status, result.error_code) == ("INTERRUPTED", "CALLER_CANCELLED")
    assert result.message is not None and "no prompt was sent" in result.message
    record = store_of(runtime).get_run(run.id)
    assert record.status == "INTERRUPTED" and record.prompt_ref is None


async def test_one_reader_at_a_time_and_none_with_a_callback(
    runtime: Runtime, tmp_path: Path
) -> None:
    run = await runtime.start(request("echo one", tmp_path))
    stream = run.events()
    with pytest.raises(RunEventsUnavailable):
        run.events()
    async with stream:
        assert [e async for e in stream][-1].type == "result"
    seen: list[RunEvent] = []
    other = await runtime.start(request("echo two", tmp_path), on_event=seen.append)
    with pytest.raises(RunEventsUnavailable):
        other.events()
    assert (await other.result()).status == "COMPLETED"
    assert seen[0].type == "run_started" and seen[-1].type == "result"


async def test_the_launch_of_an_ad_hoc_agent_is_recorded_once_by_the_runtime(
    runtime: Runtime, tmp_path: Path
) -> None:
    result = await runtime.run(request("echo hi", tmp_path))
    launches = [
        o.payload[LAUNCH_KEY]
        for o in store_of(runtime).list_observations(run_id=result.run_id)
        if isinstance(o.payload, dict) and LAUNCH_KEY in o.payload
    ]
    assert len(launches) == 1
    assert launches[0]["command"].endswith("-m baton.agents.scripted")
    assert launches[0]["envKeys"] == []


# --- closing an event stream early interrupts the run -------------------------------------


def assert_interrupted_cleanly(result: RunResult) -> None:
    assert result.status == "INTERRUPTED", result
    assert result.stop_reason == "cancelled"
    assert result.message is not None and EVENTS_CLOSED in result.message


async def test_break_out_of_the_events_interrupts_the_run(runtime: Runtime, tmp_path: Path) -> None:
    run = await runtime.start(request("wait_for_cancel 20", tmp_path))
    async for event in run.events():
        if event.type == "text":
            break  # no aclose: the stream is closed when it is collected
    gc.collect()
    assert_interrupted_cleanly(await run.result())


async def test_aclose_of_the_runtimes_events_interrupts_the_run(
    runtime: Runtime, tmp_path: Path
) -> None:
    iterator = runtime.events(request("wait_for_cancel 20", tmp_path))
    run_id = ""
    async for event in iterator:
        run_id = event.run_id
        if event.type == "text":
            break
    await iterator.aclose()  # type: ignore[attr-defined]
    record = store_of(runtime).get_run(run_id)
    assert record.status == "INTERRUPTED"
    assert record.diagnostic is not None and EVENTS_CLOSED in record.diagnostic


async def test_a_cancelled_reader_interrupts_the_run(runtime: Runtime, tmp_path: Path) -> None:
    run = await runtime.start(request("wait_for_cancel 20", tmp_path))
    streaming = asyncio.Event()

    async def reader() -> None:
        async with run.events() as events:
            async for event in events:
                if event.type == "text":
                    streaming.set()

    task = asyncio.ensure_future(reader())
    await streaming.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert run.done  # the reader waited for the run to settle
    assert_interrupted_cleanly(await run.result())


async def test_closing_early_is_recovery_required_only_when_ambiguous(
    runtime: Runtime, tmp_path: Path
) -> None:
    run = await runtime.start(request("ignore_cancel 20", tmp_path))
    await until_streaming(run)  # closes the stream: the agent never answers the cancel
    result = await run.result()
    assert (result.status, result.error_code) == ("RECOVERY_REQUIRED", "INTERRUPT_DEADLINE_EXPIRED")
    assert result.message is not None and "session/cancel got no" in result.message


# --- one protocol for a local run and a queued one --------------------------------------------


async def drive(handle: RunHandle) -> tuple[RunResult, list[RunEvent]]:
    """Every method of the protocol: stop the run at once, read its events, await its result."""
    assert await handle.interrupt("user")
    async with handle.events() as events:
        seen = [event async for event in events]
    result = await handle.result()
    assert result.run_id == handle.id == seen[-1].run_id
    assert seen[-1].type == "result"
    return result, seen


async def test_a_local_run_and_a_queued_run_are_driven_alike(
    runtime: Runtime, tmp_path: Path
) -> None:
    local = await runtime.start(request("echo never", tmp_path))
    result, _ = await drive(local)
    assert result.status == "INTERRUPTED"

    # A queued run on a store of its own (SQLite here; the fleet's is PostgreSQL): nothing
    # has taken it, so interrupting it cancels it.
    path = tmp_path / "queue" / "baton.db"
    path.parent.mkdir(mode=0o700)
    with Store(path) as store:
        record, created = store.create_submission(
            "echo queued", queue="default", request={"agent": "scripted"}, policy="ask"
        )
    assert created
    queued = QueuedRun(str(path), record.run_id)
    result, _ = await drive(queued)
    assert (result.status, result.error_code) == ("CANCELLED", "QUEUED_RUN_CANCELLED")
    assert not await queued.interrupt("user")  # no longer queued


async def test_an_interrupt_from_an_event_callback_during_setup_sends_no_prompt(
    runtime: Runtime, tmp_path: Path
) -> None:
    """The CLI's reader-gone path: the interrupt comes from inside the run's own task (its
    on_event callback) while the session is set up; the setup ends, no prompt is sent."""
    runs: list[Run] = []
    seen: list[str] = []

    def on_event(event: RunEvent) -> None:
        seen.append(event.type)
        if event.type != "run_started" and runs and len(seen) == 2:
            assert runs[0].interrupt_nowait("reader")

    runs.append(await runtime.start(request("stream 1000", tmp_path), on_event=on_event))
    result = await runs[0].result()
    assert (result.status, result.error_code) == ("INTERRUPTED", "CALLER_CANCELLED"), result
    assert result.message is not None and "(reader)" in result.message
    assert store_of(runtime).get_run(result.run_id).prompt_ref is None
    assert "text" not in seen


# --- a queued run's stream closed early interrupts it too ------------------------------------


def queue_store(tmp_path: Path) -> Path:
    path = tmp_path / "queue" / STORE_FILENAME  # a data directory's store: a worker's too
    path.parent.mkdir(mode=0o700, exist_ok=True)
    return path


async def test_closing_a_queued_runs_events_before_a_worker_took_it_cancels_it(
    tmp_path: Path,
) -> None:
    path = queue_store(tmp_path)
    with Store(path) as store:
        record, _ = store.create_submission(
            "echo queued", queue="default", request={"agent": "scripted"}, policy="ask"
        )
    queued = QueuedRun(str(path), record.run_id)

    async def reader() -> None:
        async with queued.events() as events:
            async for _event in events:
                pass

    task = asyncio.ensure_future(reader())
    await asyncio.sleep(0.3)  # nothing comes: no worker took it
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with Store(path) as store:
        run = store.get_run(record.run_id)
    assert (run.status, run.error_code) == ("CANCELLED", "QUEUED_RUN_CANCELLED")
    assert run.diagnostic is not None and EVENTS_CLOSED in run.diagnostic
