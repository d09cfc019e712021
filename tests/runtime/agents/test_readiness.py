"""Readiness from discovery and from the live check: every state and every diagnostic code."""

from __future__ import annotations

import errno
import importlib.util
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from baton.runtime.agents import discovery as d
from baton.runtime.agents import live_check as lc
from baton.runtime.agents import readiness as r
from baton.runtime.agents.discovery import discover
from baton.runtime.agents.live_check import live_check
from baton.runtime.agents.profiles import BUILTIN_PROFILES, CLAUDE, Profile
from baton.runtime.agents.readiness import (
    NextAction,
    Readiness,
    ReadinessState,
    readiness_from_discovery,
)
from baton.runtime.processes.process import AgentProcess, ShutdownResult
from baton.wire.budget import TurnBudget

_SUPPORT = Path(__file__).parents[1] / "fakes" / "support.py"
_spec = importlib.util.spec_from_file_location("baton_runtime_fakes_support_r", _SUPPORT)
assert _spec is not None and _spec.loader is not None
fakes = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fakes)

SECRET = fakes.fake_secret()
STRICT_CLAUDE = replace(CLAUDE, strict_mode=True)

#: A live budget short enough for the hang case, generous for everything else.
HANG_BUDGET = TurnBudget(idle=0.5, absolute=1.0)


#: A config_override placeholder: a plain file without execute permission, made per test.
NOT_EXECUTABLE = "<not-executable>"


@dataclass(frozen=True)
class Case:
    """One scenario: a fake in some modes, checked with or without --live."""

    name: str
    profile: Profile
    modes: str | None  # None: nothing installed
    state: ReadinessState
    code: str
    action: NextAction | None
    live: bool = False
    config_override: str | None = None
    budget: TurnBudget | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)


CASES = [
    # discovery only
    Case("discovered", CLAUDE, "good", ReadinessState.DISCOVERED, r.LAUNCH_CONTRACT_FOUND, None),
    Case(
        "no version",
        BUILTIN_PROFILES["codex"],
        "good",
        ReadinessState.DISCOVERED,
        r.NO_VERSION_COMMAND,
        None,
    ),
    Case(
        "not installed",
        CLAUDE,
        None,
        ReadinessState.NOT_INSTALLED,
        r.EXECUTABLE_NOT_FOUND,
        NextAction.INSTALL,
    ),
    Case(
        "nul override",
        CLAUDE,
        None,
        ReadinessState.NOT_INSTALLED,
        r.EXECUTABLE_PATH_REFUSED,
        NextAction.CONFIGURE,
        config_override="/opt/x\0y",
    ),
    Case(
        "not executable",
        CLAUDE,
        None,
        ReadinessState.INCOMPATIBLE,
        r.EXECUTABLE_NOT_EXECUTABLE,
        NextAction.CONFIGURE,
        config_override=NOT_EXECUTABLE,
    ),
    Case(
        "wrong help",
        CLAUDE,
        "wrong-help",
        ReadinessState.INCOMPATIBLE,
        r.LAUNCH_CONTRACT_MISMATCH,
        NextAction.INSTALL,
    ),
    Case(
        "version fails",
        BUILTIN_PROFILES["grok"],
        "version-fail",
        ReadinessState.INCOMPATIBLE,
        r.VERSION_COMMAND_FAILED,
        NextAction.INSTALL,
    ),
    Case(
        "probe hangs",
        BUILTIN_PROFILES["gemini"],
        "hang-help",
        ReadinessState.INCOMPATIBLE,
        r.PROBE_TIMEOUT,
        NextAction.INSTALL,
    ),
    Case(
        "probe floods",
        BUILTIN_PROFILES["opencode"],
        "flood",
        ReadinessState.INCOMPATIBLE,
        r.PROBE_OUTPUT_TOO_LARGE,
        NextAction.INSTALL,
    ),
    # live
    Case("ready", CLAUDE, "good", ReadinessState.READY, r.SESSION_CREATED, None, live=True),
    # Issue 29: where the agent advertises auth/status, doctor reads it and says so.
    Case(
        "ready, no auth/status",
        CLAUDE,
        "good",
        ReadinessState.READY,
        r.AUTH_INFERRED,
        None,
        live=True,
    ),
    Case(
        "auth/status authenticated",
        CLAUDE,
        "auth-status:authenticated",
        ReadinessState.READY,
        r.AUTH_STATUS_REPORTED,
        None,
        live=True,
    ),
    Case(
        "auth/status unauthenticated",
        BUILTIN_PROFILES["codex"],
        "auth-status:unauthenticated",
        ReadinessState.AUTHENTICATION_REQUIRED,
        r.PROVIDER_AUTHENTICATION_REQUIRED,
        NextAction.AUTHENTICATE,
        live=True,
    ),
    Case(
        "auth",
        BUILTIN_PROFILES["codex"],
        "auth",
        ReadinessState.AUTHENTICATION_REQUIRED,
        r.PROVIDER_AUTHENTICATION_REQUIRED,
        NextAction.AUTHENTICATE,
        live=True,
    ),
    Case(
        "account",
        BUILTIN_PROFILES["cursor"],
        "account",
        ReadinessState.ACCOUNT_UNSUPPORTED,
        r.PROVIDER_ACCOUNT_UNSUPPORTED,
        NextAction.AUTHENTICATE,
        live=True,
    ),
    Case(
        "account text elsewhere",
        CLAUDE,
        "account",
        ReadinessState.FAILED,
        r.SESSION_CREATION_FAILED,
        NextAction.RETRY,
        live=True,
    ),
    Case(
        "session error",
        BUILTIN_PROFILES["grok"],
        "session-error",
        ReadinessState.FAILED,
        r.SESSION_CREATION_FAILED,
        NextAction.RETRY,
        live=True,
    ),
    Case(
        "init error",
        BUILTIN_PROFILES["gemini"],
        "init-error",
        ReadinessState.FAILED,
        r.INITIALIZE_FAILED,
        NextAction.RETRY,
        live=True,
    ),
    Case(
        "bad version",
        BUILTIN_PROFILES["opencode"],
        "bad-version",
        ReadinessState.INCOMPATIBLE,
        r.PROTOCOL_VERSION_UNSUPPORTED,
        NextAction.INSTALL,
        live=True,
    ),
    Case(
        "malformed init",
        CLAUDE,
        "malformed-init",
        ReadinessState.INCOMPATIBLE,
        r.INITIALIZE_MALFORMED,
        NextAction.INSTALL,
        live=True,
    ),
    Case(
        "malformed session",
        CLAUDE,
        "malformed-session",
        ReadinessState.INCOMPATIBLE,
        r.SESSION_MALFORMED,
        NextAction.INSTALL,
        live=True,
    ),
    Case(
        "hang",
        CLAUDE,
        "hang-live",
        ReadinessState.FAILED,
        r.LIVE_BUDGET_EXPIRED,
        NextAction.RETRY,
        live=True,
        budget=HANG_BUDGET,
    ),
    Case(
        "crash",
        CLAUDE,
        "crash",
        ReadinessState.FAILED,
        r.RUNTIME_EXITED,
        NextAction.RETRY,
        live=True,
    ),
    Case(
        "violation",
        CLAUDE,
        "violation",
        ReadinessState.INCOMPATIBLE,
        r.ACP_PROTOCOL_VIOLATION,
        NextAction.INSTALL,
        live=True,
    ),
    Case(
        "noisy",
        CLAUDE,
        "noisy",
        ReadinessState.DEGRADED,
        r.STDOUT_NOISE,
        NextAction.RETRY,
        live=True,
    ),
    Case(
        "noisy strict",
        STRICT_CLAUDE,
        "noisy",
        ReadinessState.INCOMPATIBLE,
        r.STDOUT_NOISE,
        NextAction.INSTALL,
        live=True,
    ),
    Case(
        "empty models",
        CLAUDE,
        "empty-models",
        ReadinessState.DEGRADED,
        r.MODEL_CATALOG_EMPTY,
        NextAction.RETRY,
        live=True,
    ),
]

#: Codes reached by dedicated tests below rather than the table.
DEDICATED = {
    r.EXECUTABLE_SPAWN_FAILED,
    r.LIVE_SPAWN_FAILED,
    r.RUNTIME_SHUTDOWN_INCOMPLETE,
}


def test_every_diagnostic_code_is_reached() -> None:
    assert {c.code for c in CASES} | DEDICATED == set(r.DIAGNOSTIC_CODES)


def test_every_state_is_reached() -> None:
    assert {c.state for c in CASES} == set(ReadinessState)


async def assess(case: Case, tmp_path: Path, **extra_env: str) -> Readiness:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    modes = case.modes
    if modes is not None and modes.startswith("hang-help"):
        modes = f"hang-help:{tmp_path / 'pids'}"
    if modes is not None:
        fakes.make_fake(bin_dir, case.profile.id, modes)
    override = case.config_override
    if override == NOT_EXECUTABLE:
        plain = tmp_path / "plain-file"
        plain.write_text("not a program\n", encoding="utf-8")
        override = str(plain)
    env = fakes.parent_env(bin_dir, tmp_path, **case.extra_env, **extra_env)
    result = await discover(case.profile, parent_env=env, config_override=override, timeout=1.0)
    readiness = readiness_from_discovery(case.profile, result)
    if case.live:
        readiness = await live_check(case.profile, readiness, parent_env=env, budget=case.budget)
    return readiness


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
async def test_case(case: Case, tmp_path: Path) -> None:
    result = await assess(case, tmp_path)
    assert result.state is case.state, result.diagnostics
    assert case.code in result.codes
    assert result.next_action is case.action
    assert result.can_start is (case.state in r.STARTABLE_STATES)
    assert result.live is case.live
    assert result.profile == case.profile.id
    assert result.environment_contract == case.profile.environment.id
    text = json.dumps(result.to_json())
    assert SECRET not in text
    for diagnostic in result.diagnostics:
        assert len(diagnostic.message) <= r.MAX_DIAGNOSTIC_CHARS


# --- details of particular states -----------------------------------------------------------


async def test_discovered_checks(tmp_path: Path) -> None:
    result = await assess(CASES[0], tmp_path)
    assert result.checks == r.Checks(
        discovery=r.DiscoveryCheck.FOUND,
        compatibility=r.CompatibilityCheck.COMPATIBLE,
        initialization=r.InitializationCheck.NOT_STARTED,
        authentication=r.AuthenticationCheck.PROVIDER_MANAGED,
    )
    assert result.executable and result.launch_form == result.executable
    assert result.version == "2.1.83 (Claude Code)"


async def test_not_installed_is_not_collapsed(tmp_path: Path) -> None:
    result = await assess(CASES[2], tmp_path)
    assert result.checks.discovery is r.DiscoveryCheck.NOT_FOUND
    assert "BATON_CLAUDE_AGENT_ACP_BIN" in result.diagnostics[-1].message
    incompatible = await assess(CASES[5], tmp_path)
    assert incompatible.checks.discovery is r.DiscoveryCheck.FOUND
    assert incompatible.checks.compatibility is r.CompatibilityCheck.INCOMPATIBLE
    assert incompatible.rejected and incompatible.rejected[0].reason == r.LAUNCH_CONTRACT_MISMATCH


async def test_ready_reports_the_agent(tmp_path: Path) -> None:
    ready = next(c for c in CASES if c.name == "ready")
    result = await assess(replace(ready, modes="models"), tmp_path)
    assert result.state is ReadinessState.READY
    assert result.agent == r.AgentIdentity("fake-agent", "9.9.9")
    assert result.checks.initialization is r.InitializationCheck.INITIALIZED
    assert result.checks.models is r.ModelCheck.AVAILABLE
    assert result.checks.authentication is r.AuthenticationCheck.PROVIDER_MANAGED


async def test_auth_required_lists_the_advertised_methods(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "auth")
    result = await assess(case, tmp_path)
    assert [m.id for m in result.auth_methods] == ["fake-login", "fake-api-key"]
    assert result.auth_methods[1].type == "env_var"
    assert result.checks.authentication is r.AuthenticationCheck.REQUIRED
    assert "fake-login (Log in with Fake)" in result.diagnostics[-1].message


async def test_terminal_auth_is_a_terminal_sign_in(tmp_path: Path) -> None:
    case = replace(next(c for c in CASES if c.name == "auth"), modes="terminal-auth")
    result = await assess(case, tmp_path)
    assert result.state is ReadinessState.AUTHENTICATION_REQUIRED
    assert "in a terminal" in result.diagnostics[-1].message


async def test_hang_names_the_bound(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "hang")
    result = await assess(case, tmp_path)
    message = result.diagnostics[-1].message
    assert message.startswith("initialize:") and "idle bound" in message


async def test_crash_reports_status_and_redacted_stderr(tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == "crash")
    result = await assess(case, tmp_path)
    message = result.diagnostics[-1].message
    assert "status 3" in message and "provider exploded" in message
    assert SECRET not in message and "[REDACTED]" in message
    assert result.checks.initialization is r.InitializationCheck.FAILED


async def test_an_exact_secret_from_the_child_env_is_redacted(tmp_path: Path) -> None:
    case = replace(
        next(c for c in CASES if c.name == "session error"), modes="leak-env:XAI_API_KEY"
    )
    value = "xai-exact-value-123456789"
    result = await assess(case, tmp_path, XAI_API_KEY=value)
    message = result.diagnostics[-1].message
    assert "cannot use key" in message  # the child did get its contract's key...
    assert value not in message and "[REDACTED]" in message  # ...and it is redacted


async def test_override_keys_never_reach_the_live_child(tmp_path: Path) -> None:
    dump = tmp_path / "child-env.json"
    case = replace(CASES[0], modes=f"live-envdump:{dump}", live=True)
    exe = tmp_path / "bin" / "claude-agent-acp"
    result = await assess(
        case,
        tmp_path,
        BATON_CLAUDE_AGENT_ACP_BIN=str(exe),
        ANTHROPIC_API_KEY="sk-ant-api03-xyz-not-real-0000",
        OPENAI_API_KEY="not-for-claude",
        TERM="xterm",
    )
    assert result.state is ReadinessState.READY
    seen = json.loads(dump.read_text())["env"]
    assert "BATON_CLAUDE_AGENT_ACP_BIN" not in seen
    assert "OPENAI_API_KEY" not in seen and "TERM" not in seen
    assert seen["ANTHROPIC_API_KEY"] == "sk-ant-api03-xyz-not-real-0000"
    assert set(seen) - CLAUDE.environment.keys <= {"PWD", "SHLVL", "_", "LC_CTYPE"}


def _exists(path: str) -> bool:
    return Path(path).exists()


async def test_session_runs_in_a_fresh_directory(tmp_path: Path) -> None:
    dump = tmp_path / "child-env.json"
    case = replace(CASES[0], modes=f"live-envdump:{dump}", live=True)
    await assess(case, tmp_path)
    cwd = json.loads(dump.read_text())["cwd"]
    assert Path(cwd).name.startswith("baton-live-")
    assert not _exists(cwd)  # removed after the check


async def test_an_agent_ignoring_sigterm_is_killed(tmp_path: Path) -> None:
    case = replace(next(c for c in CASES if c.name == "ready"), modes="ignore-term")
    result = await assess(case, tmp_path)
    assert result.state is ReadinessState.READY
    assert r.RUNTIME_SHUTDOWN_INCOMPLETE not in result.codes


async def test_a_surviving_group_degrades_the_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_shutdown = AgentProcess.shutdown

    async def survived(self: AgentProcess, **kwargs: Any) -> ShutdownResult:
        await real_shutdown(self, **kwargs)
        return ShutdownResult(returncode=None, method="survived", survived=True, elapsed=5.0)

    monkeypatch.setattr(AgentProcess, "shutdown", survived)
    result = await assess(next(c for c in CASES if c.name == "ready"), tmp_path)
    assert result.state is ReadinessState.DEGRADED
    assert result.codes[-1] == r.RUNTIME_SHUTDOWN_INCOMPLETE
    assert result.next_action is NextAction.RETRY


async def test_live_spawn_failure(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    exe = fakes.make_fake(bin_dir, "claude")
    env = fakes.parent_env(bin_dir, tmp_path)
    base = readiness_from_discovery(CLAUDE, await discover(CLAUDE, parent_env=env))
    exe.unlink()  # uninstalled between discovery and the live check
    result = await live_check(CLAUDE, base, parent_env=env)
    assert result.state is ReadinessState.FAILED
    assert result.codes[-1] == r.LIVE_SPAWN_FAILED
    assert result.next_action is NextAction.RETRY


async def test_discovery_spawn_failure_is_failed_not_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def no_processes(*args: object, **kwargs: object) -> object:
        raise OSError(errno.EAGAIN, "Resource temporarily unavailable")

    bin_dir = tmp_path / "bin"
    fakes.make_fake(bin_dir, "claude")
    monkeypatch.setattr(d.asyncio, "create_subprocess_exec", no_processes)
    result = readiness_from_discovery(
        CLAUDE, await discover(CLAUDE, parent_env=fakes.parent_env(bin_dir, tmp_path))
    )
    assert result.state is ReadinessState.FAILED
    assert result.codes == (r.EXECUTABLE_SPAWN_FAILED,)
    assert result.next_action is NextAction.RETRY


async def test_live_check_skips_what_cannot_start(tmp_path: Path) -> None:
    base = await assess(CASES[2], tmp_path)  # NOT_INSTALLED
    assert await live_check(CLAUDE, base, parent_env={}) is base


# --- the JSON form ----------------------------------------------------------------------------


def test_json_fields_are_stable() -> None:
    readiness = Readiness(
        profile="claude",
        display_name="Claude Agent ACP",
        state=ReadinessState.AUTHENTICATION_REQUIRED,
        environment_contract="baton/claude-environment@v1",
        executable="/x/claude-agent-acp",
        source="path",
        version="2.1.83 (Claude Code)",
        launch_argv=("/x/claude-agent-acp",),
        launch_form="/x/claude-agent-acp",
        rejected=(d.RejectedCandidate("/y", "path", d.LAUNCH_CONTRACT_MISMATCH, "nope"),),
        diagnostics=(r.Diagnostic(r.PROVIDER_AUTHENTICATION_REQUIRED, "error", "sign in"),),
        next_action=NextAction.AUTHENTICATE,
        auth_methods=(r.AdvertisedAuthMethod("login", "Log in", "agent"),),
        agent=r.AgentIdentity("claude", "0.23.1"),
        live=True,
    )
    assert readiness.to_json() == {
        "schema": "baton/readiness@v1",
        "profile": "claude",
        "display_name": "Claude Agent ACP",
        "state": "AUTHENTICATION_REQUIRED",
        "can_start": False,
        "next_action": "AUTHENTICATE",
        "executable": "/x/claude-agent-acp",
        "source": "path",
        "version": "2.1.83 (Claude Code)",
        "launch_form": "/x/claude-agent-acp",
        "environment_contract": "baton/claude-environment@v1",
        "checks": {
            "discovery": "UNKNOWN",
            "compatibility": "UNKNOWN",
            "initialization": "NOT_STARTED",
            "authentication": "UNKNOWN",
            "models": "UNKNOWN",
        },
        "diagnostics": [
            {"code": "PROVIDER_AUTHENTICATION_REQUIRED", "severity": "error", "message": "sign in"}
        ],
        "rejected": [
            {"path": "/y", "source": "path", "reason": "LAUNCH_CONTRACT_MISMATCH", "detail": "nope"}
        ],
        "auth_methods": [{"id": "login", "name": "Log in", "type": "agent"}],
        "agent": {"name": "claude", "version": "0.23.1"},
        "live": True,
    }


def test_diagnostics_are_bounded() -> None:
    long = r.Diagnostic("X", "error", "y" * 5000)
    assert len(long.message) == r.MAX_DIAGNOSTIC_CHARS
    many = Readiness(
        profile="p",
        display_name="P",
        state=ReadinessState.FAILED,
        environment_contract="c@v1",
        diagnostics=tuple(r.Diagnostic("X", "error", str(i)) for i in range(100)),
    )
    assert len(many.diagnostics) == r.MAX_DIAGNOSTICS
    assert "more diagnostics" in many.diagnostics[-1].message


def test_live_budget_default() -> None:
    budget = lc.default_budget()
    assert budget.idle == lc.LIVE_IDLE_SECONDS and budget.absolute == lc.LIVE_ABSOLUTE_SECONDS


async def test_auth_status_is_read_before_session_new(tmp_path: Path) -> None:
    # Issue 29: signed out by the agent's own answer, Baton does not try session/new; the
    # diagnostic names the method; unknown states read as unknown.
    [case] = [c for c in CASES if c.name == "auth/status unauthenticated"]
    result = await assess(case, tmp_path)
    [diagnostic] = [d for d in result.diagnostics if d.code == r.PROVIDER_AUTHENTICATION_REQUIRED]
    assert diagnostic.message.startswith("auth/status answered unauthenticated")
    odd = replace(case, modes="auth-status:sleeping", state=ReadinessState.READY)
    (tmp_path / "odd").mkdir()
    answer = await assess(odd, tmp_path / "odd")
    [read] = [d for d in answer.diagnostics if d.code == r.AUTH_STATUS_REPORTED]
    assert read.message == "sign-in read from auth/status: unknown"
