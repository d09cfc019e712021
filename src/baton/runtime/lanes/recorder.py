"""The runtime's durable records: a thin adapter from lanes and turns to the run store.

Every method that publishes a record citing journal entries goes through the store's async
methods, which flush those entries first (journal before record). Failures to record are not
swallowed here: the caller decides whether an outcome became ambiguous.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from baton.journal import JournalRef, SecretValues
from baton.runtime.agents.launch import LaunchSpec
from baton.runtime.permissions.engine import Resolution
from baton.store import InteractionState, NewItem, Store, StoreConflict
from baton.store.models import RunStatus
from baton.store.outage import status_written, until_stored
from baton.wire.session_state import SessionState

#: The observation payload key of the launch form an ad-hoc run recorded (read back by
#: `baton recover --attach` to start the same agent again).
LAUNCH_KEY: Final = "launch"


def _ref(value: object) -> JournalRef | None:
    return value if isinstance(value, JournalRef) else None


def session_state_json(state: SessionState) -> dict[str, Any]:
    """A bounded, _meta-free projection of a session's native state (exact provider ids)."""
    modes = None
    if state.modes is not None:
        modes = {
            "currentModeId": state.modes.current_mode_id,
            "availableModes": [m.id for m in state.modes.available],
        }
    models = None
    if state.models is not None:
        models = {
            "currentModelId": state.models.current_model_id,
            "availableModels": [m.model_id for m in state.models.available],
        }
    options = [
        {
            "id": option.id,
            "type": option.type,
            "category": option.category,
            "currentValue": option.current_value,
            "values": list(option.values()),
        }
        for option in state.config_options
    ]
    return {"modes": modes, "models": models, "configOptions": options}


class Recorder:
    """Writes what lanes and turns observe into the store."""

    def __init__(self, store: Store) -> None:
        self.store = store

    # --- servers ---------------------------------------------------------------------------

    def server_starting(self, server_id: str, spec: LaunchSpec, generation: int) -> None:
        """A child is about to start for ``spec``."""
        self.store.create_server_instance(
            spec.profile_id, spec.lane, generation, server_id=server_id
        )

    def server_pid(self, server_id: str, pid: int) -> None:
        """The child started."""
        self.store.update_server_state(server_id, "STARTING", pid=pid)

    def server_ready(self, server_id: str) -> None:
        """initialize succeeded."""
        self.store.update_server_state(server_id, "READY")

    def server_state(self, server_id: str, state: str, diagnostics: str | None = None) -> None:
        """The child changed state (EXITED, LOST, FAILED...)."""
        self.store.update_server_state(server_id, state, diagnostics=diagnostics)  # type: ignore[arg-type]

    # --- sessions --------------------------------------------------------------------------

    async def session_opened(
        self,
        profile: str,
        cwd: str,
        server_id: str,
        provider_id: str,
        state: SessionState,
        ref: object,
    ) -> str:
        """session/new answered: the session row and the provider-reported state, citing the
        answer's journal record."""
        native = session_state_json(state)
        session = self.store.create_session(
            profile,
            cwd,
            server_instance_id=server_id,
            provider_session_id=provider_id,
            state="READY",
            native_state=native,
        )
        await self.store.record_observation(
            "PROVIDER_REPORTED", native, session_id=session.id, journal_ref=_ref(ref)
        )
        return session.id

    async def session_resolved(
        self, session_id: str, run_id: str | None, state: SessionState, ref: object
    ) -> None:
        """Baton's projected state after its mutations: a BATON_RESOLUTION, never relabeled as
        provider-reported."""
        native = session_state_json(state)
        self.store.update_session(session_id, native_state=native)
        await self.store.record_observation(
            "BATON_RESOLUTION", native, session_id=session_id, run_id=run_id, journal_ref=_ref(ref)
        )

    async def session_setup(
        self, session_id: str, run_id: str, setup: dict[str, Any], ref: object
    ) -> None:
        """What Baton asked for when it opened the session beyond cwd and tools (the system
        prompt, redacted, and its mode; the additional roots): a BATON_RESOLUTION whose payload
        is ``{"sessionSetup": setup}``, citing the setup answer's journal record."""
        await self.store.record_observation(
            "BATON_RESOLUTION",
            {"sessionSetup": setup},
            session_id=session_id,
            run_id=run_id,
            journal_ref=_ref(ref),
        )

    async def launch_form(self, run_id: str, command: str, env_keys: Sequence[str]) -> None:
        """An ad-hoc agent's launch (its command, redacted by the caller, and the names of
        the environment keys passed through): a BATON_RESOLUTION on the run whose payload is
        ``{"launch": {"command", "envKeys"}}``."""
        await self.store.record_observation(
            "BATON_RESOLUTION",
            {LAUNCH_KEY: {"command": command, "envKeys": list(env_keys)}},
            run_id=run_id,
        )

    def session_state(self, session_id: str, state: str) -> None:
        """The session's lifecycle state changed."""
        self.store.update_session(session_id, state=state)  # type: ignore[arg-type]

    async def late_update(self, session_id: str, update: dict[str, Any], ref: object) -> None:
        """An update that arrived with no active run: it belongs to its session."""
        await self.store.record_observation(
            "PROVIDER_REPORTED",
            {"lateUpdate": update.get("sessionUpdate")},
            session_id=session_id,
            journal_ref=_ref(ref),
        )

    # --- permission interactions -----------------------------------------------------------

    async def interaction(
        self,
        session_id: str | None,
        run_id: str | None,
        resolution: Resolution,
        request_ref: object,
        secrets: SecretValues | None = None,
    ) -> None:
        """One permission decision, written (its request's journal record flushed first)
        before the answer is sent. Requests outside any run are recorded on their session.
        ``secrets`` are the lane's exact sensitive values, redacted from the stored record."""
        record = resolution.record
        payload = record.to_json(secrets)
        if run_id is None:
            if session_id is not None:
                await self.store.record_observation(
                    "BATON_RESOLUTION",
                    {"permission": payload},
                    session_id=session_id,
                    journal_ref=_ref(request_ref),
                )
            return
        interaction = await self.store.record_interaction(
            run_id,
            record.request_id,
            payload["correlatedToolCall"] or payload["requestToolCall"],
            payload["options"],
            request_ref=_ref(request_ref),
        )
        state: InteractionState = "RESOLVED" if record.choice is not None else "CANCELLED"
        await self.store.resolve_interaction(
            interaction.id,
            state,
            choice=record.choice,
            chosen_by=record.chosen_by,
            reason=f"{record.reason_code}: {record.reason}",
        )

    # --- runs ------------------------------------------------------------------------------

    def create_run(self, prompt_text: str, *, policy: str, unattended: bool, profile: str) -> str:
        """A new run, STARTING. The prompt text is stored redacted."""
        run = self.store.create_run(
            prompt_text, policy=policy, unattended=unattended, status="STARTING"
        )
        del profile
        return run.id

    async def take_queued_run(self, run_id: str) -> str:
        """Take a QUEUED run over (QUEUED to STARTING, compare-and-set, now owned by this
        process). StoreConflict when it is no longer QUEUED (cancelled, taken or settled).

        A run this process already took whose prompt was never sent (STARTING, ours, no
        prompt reference: an earlier attempt stopped when the store went away) is taken
        again: nothing of it reached an agent."""
        try:
            await self.store.update_run_status(
                run_id, "STARTING", expected=("QUEUED",), owner=self.store.owner
            )
        except StoreConflict:
            run = self.store.get_run(run_id)
            if not (
                run.status == "STARTING"
                and run.owner == self.store.owner
                and run.prompt_ref is None
            ):
                raise
            # The earlier take committed (its answer was lost): its claim is this process's.
            self.store.hold_claim(run_id, run.epoch)
        return run_id

    async def run_attached(self, run_id: str, session_id: str, server_id: str) -> None:
        """The run's session and server instance are known."""
        self.store.set_run_session(run_id, session_id=session_id, server_instance_id=server_id)

    async def prompt_submitted(self, run_id: str, prompt_ref: object) -> None:
        """session/prompt was written: record its journal reference (flushed first), RUNNING.
        A shared store that went away is waited for (bounded, :mod:`baton.store.outage`):
        both writes are safe to repeat (the same reference; RUNNING read back first)."""
        ref = _ref(prompt_ref)
        if ref is not None:
            await until_stored(lambda: self.store.set_run_prompt_ref(run_id, ref))
        await status_written(self.store, run_id, "RUNNING", expected=("STARTING",))

    async def pending_questions(self, run_id: str, count: int) -> None:
        """``count`` questions of the run wait for a person (AWAITING_APPROVAL above zero,
        RUNNING again at zero: :meth:`Store.set_pending_questions`). A shared store's outage
        is waited for (bounded); the write sets a value, so repeating it is safe."""

        async def write() -> None:
            await self.store.offload(lambda: self.store.set_pending_questions(run_id, count))

        await until_stored(write)

    async def run_status(self, run_id: str, status: RunStatus, **fields: Any) -> None:
        """Move a run to ``status`` (compare-and-set against final statuses in the store),
        waiting out a shared store's outage (bounded; the status is read back before a
        second try, so it is written once)."""
        await status_written(self.store, run_id, status, **fields)

    def items(self, run_id: str, items: Sequence[NewItem], *, after: int | None = None) -> None:
        """Materialized items of a run (``after``: the items it held before these, which
        makes the append safe to repeat; see :meth:`Store.append_items`)."""
        self.store.append_items(run_id, items, after=after)

    async def items_off_loop(
        self, run_id: str, items: Sequence[NewItem], *, after: int | None = None
    ) -> None:
        """:meth:`items`, off the event loop on a shared store (:meth:`Store.offload`).

        Cancellation: the append's outcome is unknown to the cancelled caller."""
        await self.store.offload(lambda: self.store.append_items(run_id, items, after=after))
