"""fast-agent 0.10.48 through config-file profiles (passthrough and slow models; no server).

Its tool and permission steps and the signed-out check do not apply (see
``qualify_report.NOT_APPLICABLE``): the internal models call no tools, fast-agent asks permission
only for MCP tools, and passthrough needs no credentials.
"""

from __future__ import annotations

from typing import Any

import pytest
from qualify_checks import aftermath, completed, interrupted, server_states
from qualify_drivers import EXIT_INTERRUPTED, FAST_AGENT_SLOW_PROFILE, secret_files, survivors
from qualify_installs import FAST_AGENT

PROFILE = "fast-agent"


@pytest.mark.qualify(PROFILE, "doctor --live: READY (config-file profile, launch-contract probe)")
def test_doctor_live_ready(make_rig: Any) -> None:
    rig, baton, _mock = make_rig(PROFILE)
    done, record = baton.doctor()
    assert done.returncode == 0, done.describe()
    assert record["state"] == "READY", record
    assert record["source"] == "env" and record["executable"] == rig.env[FAST_AGENT.override_env]
    assert record["agent"] == {"name": "fast-agent-acp", "version": FAST_AGENT.version}
    assert record["version"] == f"fast-agent-mcp v{FAST_AGENT.version}", record
    assert record["environment_contract"] == "config/fast-agent-environment@v1", record
    assert any(d["code"] == "LAUNCH_CONTRACT_FOUND" for d in record["diagnostics"]), record
    assert not survivors(FAST_AGENT, rig.home)
    assert not rig.data.exists() or not secret_files(rig.data, rig.key)


@pytest.mark.qualify(
    PROFILE,
    "text turn with default flags (offered 1, echoed 1; the key in the prompt kept off disk)",
)
def test_text_turn(make_rig: Any) -> None:
    # Issue 29: the profile declares no protocol pin; Baton's default offer is 1, which
    # fast-agent echoes. The passthrough model echoes the prompt: a key in it comes back as
    # agent output.
    rig, baton, _mock = make_rig(PROFILE)
    outcome = baton.run(f"Hello from the qualification run. {rig.key}")
    completed(outcome)
    assert "Hello from the qualification run." in outcome.text(), outcome.describe()
    assert rig.key not in outcome.stdout, "the echoed key reached stdout unredacted"
    assert server_states(rig) == ["EXITED"]
    aftermath(baton, FAST_AGENT)


@pytest.mark.qualify(
    PROFILE,
    "--protocol 2: echoes 2 in the v1 layout (AGENT_PROTOCOL_MISLABELLED naming --protocol auto)",
)
def test_protocol_2_is_mislabelled(make_rig: Any) -> None:
    # Offered 2, fast-agent answers protocolVersion 2 without v2's info: refused with the way
    # out rather than as malformed.
    _rig, baton, _mock = make_rig(PROFILE)
    outcome = baton.run("Hello under 2.", "--protocol", "2")
    result = outcome.result()
    assert result["errorCode"] == "AGENT_PROTOCOL_MISLABELLED", outcome.describe()
    assert "--protocol auto" in result["message"], outcome.describe()
    assert outcome.returncode == 5, outcome.describe()
    aftermath(baton, FAST_AGENT)


#: Seconds between the session event and SIGINT: the prompt is sent right after the session
#: opens, and the slow model holds the turn for 3 s, so SIGINT lands while it is outstanding.
SIGINT_DELAY_SECONDS = 1.0


def _session_opened(event: dict[str, Any]) -> bool:
    return event.get("type") == "session"


@pytest.mark.qualify(PROFILE, "cancel in flight with SIGINT, slow model (cancelled, exit 130)")
def test_cancel_with_sigint(make_rig: Any) -> None:
    _rig, baton, _mock = make_rig(PROFILE)
    # The slow model waits 3 s before it echoes (passthrough has no stream to interrupt).
    outcome = baton.run_interrupted(
        "never echoed", _session_opened, profile=FAST_AGENT_SLOW_PROFILE, delay=SIGINT_DELAY_SECONDS
    )
    interrupted(outcome, EXIT_INTERRUPTED)
    assert "never echoed" not in outcome.text(), outcome.describe()
    aftermath(baton, FAST_AGENT)
